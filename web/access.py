"""Who may use a view. Anonymous visitors are sent to log in; an HTMX request gets a client
redirect (HX-Redirect) instead, because a 302 would be followed by htmx and the login page
swapped into whatever fragment was asked for (a session that expired while the page was open)."""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django_htmx.http import HttpResponseClientRedirect

from web.requests import HtmxHttpRequest

View = Callable[..., HttpResponse]


def _login_redirect(request: HtmxHttpRequest, *, default_next: str | None = None) -> HttpResponse:
    """To the login page, with ``next`` the page to come back to.

    For an HTMX request that is the page the browser shows (HX-Current-URL, same origin only),
    not the fragment's URL (often POST-only); ``default_next`` (a URL or URL name) stands in
    when the request does not say, else the request's own URL.
    """
    if request.htmx:
        page = request.htmx.current_url_abs_path
        if page is None:
            page = resolve_url(default_next) if default_next else request.get_full_path()
        return HttpResponseClientRedirect(redirect_to_login(page).url)
    return redirect_to_login(request.get_full_path())


def login_required(view: View | None = None, *, default_next: str | None = None):
    """Django's ``@login_required``, but HTMX-aware (see ``_login_redirect``). Use bare or as
    ``@login_required(default_next="app:page")``."""

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapper(request: HtmxHttpRequest, *args, **kwargs) -> HttpResponse:
            if not request.user.is_authenticated:
                return _login_redirect(request, default_next=default_next)
            return view(request, *args, **kwargs)

        return wrapper

    return decorator if view is None else decorator(view)


def staff_required(view: View) -> View:
    """``login_required`` plus an active ``is_staff`` account; anyone else gets 403."""

    @login_required
    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not (request.user.is_active and request.user.is_staff):
            raise PermissionDenied("Staff only.")
        return view(request, *args, **kwargs)

    return wrapper
