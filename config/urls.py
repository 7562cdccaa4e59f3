from django.contrib import admin
from django.urls import include, path

from chat.views import password_reset, signup

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/signup/", signup, name="signup"),
    path("accounts/password_reset/", password_reset, name="password_reset"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("profile/", include("profiles.urls")),
    path("staff/", include("staff.urls")),
    path("", include("chat.urls")),
]
