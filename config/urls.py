from django.contrib import admin
from django.http import HttpResponsePermanentRedirect
from django.templatetags.static import static
from django.urls import include, path

from chat.health import healthz
from chat.views import LoginView, password_reset, signup


def favicon(request):
    """Browsers that ask for /favicon.ico get the site's icon (resolved at request time: the
    static manifest exists only after collectstatic)."""
    return HttpResponsePermanentRedirect(static("favicon.svg"))


urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/signup/", signup, name="signup"),
    path("accounts/login/", LoginView.as_view(), name="login"),
    path("favicon.ico", favicon, name="favicon"),
    path("healthz", healthz, name="healthz"),
    path("accounts/password_reset/", password_reset, name="password_reset"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("profile/", include("profiles.urls")),
    path("memory/", include("memory.urls")),
    path("projects/", include("projects.urls")),
    path("staff/", include("staff.urls")),
    path("v1/", include("api.urls")),  # personal keys only: api.views
    path("", include("userdata.urls")),
    path("", include("chat.urls")),
]
