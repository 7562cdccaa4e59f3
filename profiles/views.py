"""The signed-in user's own profile page. There are no ids in the URLs: everything here acts on
``request.user``, so nobody can reach another person's profile.

Each form works without JavaScript (POST, then redirect back) and with HTMX (the section it
changes is re-rendered in place, and the sections that depend on it are swapped out of band).
"""

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from profiles.account import EmailLinkInvalid, email_link_notice
from profiles.account import email_confirm as email_confirm_token
from profiles.domains import MIN_EVIDENCE, STRONG_WEIGHT
from profiles.expertise import domains_set
from profiles.forms import (
    ApiKeyForm,
    DomainsForm,
    EmailForm,
    MemoryForm,
    PreferencesForm,
    ResetStyleForm,
)
from profiles.instructions import MIN_MESSAGES, build_instructions
from profiles.keys import key_list
from profiles.overview import DOMAIN_GUIDES, domain_overview, style_overview
from profiles.selectors import profile_get
from profiles.services import (
    PREFERENCE_FIELDS,
    profile_reset_style,
    profile_set_memory_mode,
    profile_update_preferences,
)
from web.access import login_required
from web.fragments import render_fragments, render_page_or_fragment
from web.requests import AuthenticatedHttpRequest

TEMPLATE = "profiles/profile.html"
# Every form here sits on the profile page: where to come back to after logging in again (for
# an HTMX request that does not say which page it came from).
PAGE = "profiles:profile"


def _context(request: AuthenticatedHttpRequest, **extra) -> dict:
    profile = profile_get(user=request.user)
    block = build_instructions(profile)
    domains = domain_overview(profile=profile)
    return {
        "domains": domains,
        "domains_form": DomainsForm(initial={row.slug: row.setting for row in domains}),
        "domain_guides": DOMAIN_GUIDES,
        "domain_min_evidence": MIN_EVIDENCE,
        "domain_strong_weight": STRONG_WEIGHT,
        "profile": profile,
        "form": PreferencesForm(instance=profile),
        "metrics": style_overview(profile=profile, block=block),
        "instructions": block,  # not "block": Django templates reserve that name
        "min_messages": MIN_MESSAGES,
        "memory_form": MemoryForm(initial={"memory_mode": profile.memory_mode}),
        "email_form": EmailForm(),
        "api_keys": key_list(user=request.user),
        "key_form": ApiKeyForm(),
        **extra,
    }


@login_required(default_next=PAGE)
def profile(request: AuthenticatedHttpRequest) -> HttpResponse:
    return render(request, TEMPLATE, _context(request))


@login_required(default_next=PAGE)
@require_POST
@vary_on_headers("HX-Request")
def preferences_update(request: AuthenticatedHttpRequest) -> HttpResponse:
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
        return render_page_or_fragment(
            request, TEMPLATE, _context(request, form=form), "preferences"
        )
    if request.htmx:
        context = _context(request, saved=True)
        return render_fragments(request, TEMPLATE, context, "preferences", "style", "preview")
    messages.success(request, "Preferences saved.")
    return redirect("profiles:profile")


@login_required(default_next=PAGE)
@require_POST
@vary_on_headers("HX-Request")
def memory_update(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = MemoryForm(request.POST)
    if not form.is_valid():
        return HttpResponse("Choose a memory mode: automatic, ask or off.", status=400)
    profile = profile_set_memory_mode(user=request.user, mode=form.cleaned_data["memory_mode"])
    if request.htmx:
        context = _context(request, memory_saved=True)
        return render_fragments(request, TEMPLATE, context, "memory", "style", "preview", "domains")
    messages.success(request, f"Memory mode: {profile.get_memory_mode_display().lower()}.")
    return redirect("profiles:profile")


@login_required(default_next=PAGE)
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def reset_style(request: AuthenticatedHttpRequest) -> HttpResponse:
    """GET: the confirmation page (the no-JavaScript path). POST with ``confirm``: the reset."""
    form = ResetStyleForm(request.POST if request.method == "POST" else None)
    if not form.is_valid():
        profile = profile_get(user=request.user)
        return render(request, "profiles/reset_style.html", {"form": form, "profile": profile})
    profile_reset_style(user=request.user)
    if request.htmx:
        return render_fragments(
            request, TEMPLATE, _context(request, reset=True), "style", "preview", "domains"
        )
    messages.success(request, "Your learned style was reset.")
    return redirect("profiles:profile")


@login_required(default_next=PAGE)
@require_POST
@vary_on_headers("HX-Request")
def domains_update(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Per domain: learn it, set the level (it wins), or hide it from learning."""
    form = DomainsForm(request.POST)
    if form.is_valid():
        domains_set(user=request.user, settings=form.cleaned_data)
    else:
        return render_page_or_fragment(
            request, TEMPLATE, _context(request, domains_form=form), "domains"
        )
    if request.htmx:
        return render_fragments(request, TEMPLATE, _context(request, domains_saved=True), "domains")
    messages.success(request, "Levels saved.")
    return redirect("profiles:profile")


@login_required(default_next=PAGE)
@require_POST
def email_update(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Send a confirmation link to the address typed; it is stored once the link is opened."""
    form = EmailForm(request.POST)
    if not form.is_valid():
        return render(request, TEMPLATE, _context(request, email_form=form), status=400)
    email_link_notice(request, user=request.user, address=form.cleaned_data["email"])
    return redirect(f"{reverse('profiles:profile')}#account")


@login_required
@require_GET
def email_confirm(request: AuthenticatedHttpRequest, token: str) -> HttpResponse:
    """The link from the confirmation mail: for the account signed in only."""
    try:
        address = email_confirm_token(user=request.user, token=token)
    except EmailLinkInvalid:
        context = _context(request, email_link_invalid=True)
        return render(request, TEMPLATE, context, status=400)
    messages.success(request, f"Your email address is now {address}.")
    return redirect(f"{reverse('profiles:profile')}#account")
