"""Who may use the staff pages: signed-in staff. Anonymous visitors are sent to log in (an
HTMX request gets a client redirect, not the login page swapped into a fragment); anyone else
gets 403."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django.utils.http import urlencode
from django_htmx.http import HttpResponseClientRedirect


def staff_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """``@login_required`` plus an ``is_staff`` check, on every page and every fragment."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        user = request.user
        if not user.is_authenticated:
            if getattr(request, "htmx", False):
                page = request.htmx.current_url_abs_path or request.get_full_path()
                login = resolve_url(settings.LOGIN_URL)
                return HttpResponseClientRedirect(f"{login}?{urlencode({'next': page})}")
            return redirect_to_login(request.get_full_path())
        if not (user.is_active and user.is_staff):
            raise PermissionDenied("Staff only.")
        return view(request, *args, **kwargs)

    return wrapper
