"""The signed-in user's own profile page. There are no ids in the URLs: everything here acts on
``request.user``, so nobody can reach another person's profile.

Each form works without JavaScript (POST, then redirect back) and with HTMX (the section it
changes is re-rendered in place, and the sections that depend on it are swapped out of band).
"""

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render, resolve_url
from django.template.loader import render_to_string
from django.views.decorators.http import require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from profiles.forms import MemoryForm, PreferencesForm, ResetStyleForm
from profiles.instructions import MIN_MESSAGES, build_instructions
from profiles.overview import style_overview
from profiles.selectors import profile_get
from profiles.services import (
    PREFERENCE_FIELDS,
    profile_reset_style,
    profile_set_memory,
    profile_update_preferences,
)

TEMPLATE = "profiles/profile.html"


def login_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Like Django's, but an HTMX request (a session that expired while the page was open) gets
    a client redirect to the login page instead of the login page swapped into a section."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if request.user.is_authenticated:
            return view(request, *args, **kwargs)
        if request.htmx:
            login = resolve_url(settings.LOGIN_URL)
            return HttpResponseClientRedirect(f"{login}?next={resolve_url('profiles:profile')}")
        return redirect_to_login(request.get_full_path())

    return wrapper


def _context(request: HttpRequest, **extra) -> dict:
    profile = profile_get(user=request.user)
    block = build_instructions(profile)
    return {
        "profile": profile,
        "form": PreferencesForm(instance=profile),
        "metrics": style_overview(profile=profile, block=block),
        "instructions": block,  # not "block": Django templates reserve that name
        "min_messages": MIN_MESSAGES,
        **extra,
    }


def _fragments(request: HttpRequest, context: dict, target: str, *oob: str) -> HttpResponse:
    """The ``target`` partial, followed by the ``oob`` partials marked for out-of-band swaps."""
    html = render_to_string(f"{TEMPLATE}#{target}", context, request)
    for name in oob:
        html += render_to_string(f"{TEMPLATE}#{name}", {**context, "oob": True}, request)
    return HttpResponse(html)


@login_required
def profile(request: HttpRequest) -> HttpResponse:
    return render(request, TEMPLATE, _context(request))


@login_required
@require_POST
@vary_on_headers("HX-Request")
def preferences_update(request: HttpRequest) -> HttpResponse:
    form = PreferencesForm(request.POST, instance=profile_get(user=request.user))
    if form.is_valid():
        try:
            profile_update_preferences(
                user=request.user,
                preferences={name: form.cleaned_data[name] for name in PREFERENCE_FIELDS},
            )
        except ValidationError as error:
            form.add_error(None, error)
    if form.errors:
        context = _context(request, form=form)
        if request.htmx:
            return _fragments(request, context, "preferences")
        return render(request, TEMPLATE, context)
    if request.htmx:
        return _fragments(request, _context(request, saved=True), "preferences", "style", "preview")
    messages.success(request, "Preferences saved.")
    return redirect("profiles:profile")


@login_required
@require_POST
@vary_on_headers("HX-Request")
def memory_update(request: HttpRequest) -> HttpResponse:
    form = MemoryForm(request.POST)
    if not form.is_valid():
        return HttpResponse("Invalid memory switch.", status=400)
    enabled = form.cleaned_data["memory_enabled"]
    profile_set_memory(user=request.user, enabled=enabled)
    if request.htmx:
        return _fragments(request, _context(request), "memory", "style", "preview")
    messages.success(request, f"Memory turned {'on' if enabled else 'off'}.")
    return redirect("profiles:profile")


@login_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def reset_style(request: HttpRequest) -> HttpResponse:
    """GET: the confirmation page (the no-JavaScript path). POST with ``confirm``: the reset."""
    form = ResetStyleForm(request.POST if request.method == "POST" else None)
    if not form.is_valid():
        profile = profile_get(user=request.user)
        return render(request, "profiles/reset_style.html", {"form": form, "profile": profile})
    profile_reset_style(user=request.user)
    if request.htmx:
        return _fragments(request, _context(request, reset=True), "style", "preview")
    messages.success(request, "Your learned style was reset.")
    return redirect("profiles:profile")
