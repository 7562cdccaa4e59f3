from django.contrib import admin
from django.urls import include, path

from chat.views import signup

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/signup/", signup, name="signup"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("profile/", include("profiles.urls")),
    path("staff/", include("staff.urls")),
    path("", include("chat.urls")),
]
