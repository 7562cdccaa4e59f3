"""The user list and a user's page: learned style and preferences (editable), conversations,
memories, reports and data rights."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.forms import SetPasswordForm
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from profiles.account import account_log
from profiles.choices import language_name
from profiles.forms import PreferencesForm
from profiles.instructions import build_instructions
from profiles.keys import key_list, key_revoke
from profiles.models import ApiKey
from profiles.overview import domain_overview, style_overview
from profiles.selectors import profile_get
from profiles.services import PREFERENCE_FIELDS, profile_set_style, profile_update_preferences
from profiles.style import METRICS
from staff.forms import StyleForm, UserSearchForm
from staff.kinds import KINDS
from staff.reports import REPORTS
from staff.selectors import projects as project_selectors
from staff.selectors import users as selectors
from web.access import staff_required
from web.fragments import render_fragments, render_page_or_fragment

USERS_PER_PAGE = 50
CONVERSATIONS_SHOWN = 100
TEMPLATE = "staff/user.html"


@staff_required
@require_GET
@vary_on_headers("HX-Request")
def user_list(request):
    form = UserSearchForm(request.GET)
    form.is_valid()
    query = form.cleaned_data.get("q") or ""
    sort = form.cleaned_data.get("sort") or "-last_active"
    page = Paginator(selectors.user_list(query=query, sort=sort), USERS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = {"form": form, "page": page, "query": query, "sort": sort}
    return render_page_or_fragment(request, "staff/users.html", context, "user-table")


def user_page_context(request, target, **extra) -> dict:
    profile = profile_get(user=target)
    block = build_instructions(profile)
    project = request.GET.get("project", "")
    conversations = selectors.user_conversations(user=target, project=project)
    return {
        "target": target,
        "profile": profile,
        "metrics": style_overview(profile=profile, block=block),
        "domains": [r for r in domain_overview(profile=profile) if r.evidence or r.setting],
        "instructions": block,
        "preferences": _preference_rows(profile),
        # Rounded to the field's step: 0.438405 would be refused by the browser as it is.
        "style_form": StyleForm(
            initial={name: round(getattr(profile, name), 2) for name in METRICS}
        ),
        "projects": project_selectors.user_projects(user=target),
        "project_filter": project,
        "conversations": conversations[:CONVERSATIONS_SHOWN],
        "conversation_total": conversations.count(),
        "memory_counts": [
            (KINDS[slug], counts)
            for slug, counts in selectors.user_memory_counts(user=target).items()
        ],
        "profile_history": (
            profile.history.select_related("history_user").order_by("-history_date")[:10]
            if profile.pk
            else []
        ),
        "reports": REPORTS.values(),
        "password_form": SetPasswordForm(target),
        "account_log": account_log(target=target),
        "api_keys": key_list(user=target),
        "key_history": selectors.user_key_history(user=target),
        **extra,
    }


@staff_required
@require_GET
def user_detail(request, user_id: int):
    target = selectors.user_get(user_id=user_id)
    return render(request, TEMPLATE, user_page_context(request, target))


def _preference_rows(profile) -> list[tuple[str, str]]:
    """The preferences as the page shows them, set or not."""
    form_fields = PreferencesForm.base_fields
    rows = []
    for name in PREFERENCE_FIELDS:
        value = getattr(profile, name)
        if name == "language":
            shown = language_name(value) if value else ""
        elif name == "topics_of_interest":
            shown = ", ".join(value or [])
        elif value and hasattr(profile, f"get_{name}_display"):
            shown = getattr(profile, f"get_{name}_display")()
        else:
            shown = value
        label = form_fields[name].label or name.replace("_", " ").capitalize()
        rows.append((str(label), shown))
    return rows


@staff_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def user_preferences(request, user_id: int):
    """Staff edit a user's preferences (recorded in the profile's history under their name).

    GET: the form (HTMX: in place of the read-only list; otherwise the page with the form open;
    the time zone and language lists are large, so the page itself does not render them)."""
    target = selectors.user_get(user_id=user_id)
    if request.method == "GET":
        form = PreferencesForm(instance=profile_get(user=target))
        context = user_page_context(request, target, preferences_form=form)
        return render_page_or_fragment(request, TEMPLATE, context, "preferences")
    form = PreferencesForm(request.POST, instance=profile_get(user=target))
    if form.is_valid():
        try:
            profile_update_preferences(
                user=target,
                preferences={name: form.cleaned_data[name] for name in PREFERENCE_FIELDS},
            )
        except ValidationError as error:
            form.add_error(None, error)
    if form.errors:
        context = user_page_context(request, target, preferences_form=form)
        return render_page_or_fragment(request, TEMPLATE, context, "preferences")
    if request.htmx:
        context = user_page_context(request, target, preferences_saved=True)
        return render_fragments(request, TEMPLATE, context, "preferences")
    messages.success(request, "Preferences saved.")
    return redirect("staff:user", user_id=target.pk)


@staff_required
@require_POST
@vary_on_headers("HX-Request")
def user_style(request, user_id: int):
    """Staff correct the learned style metrics."""
    target = selectors.user_get(user_id=user_id)
    form = StyleForm(request.POST)
    if form.is_valid():
        try:
            profile_set_style(
                user=target,
                values={k: v for k, v in form.cleaned_data.items() if v is not None},
                actor=request.user,
                reason="learned style edited by staff",
            )
        except ValidationError as error:
            form.add_error(None, error)
    if form.errors:
        context = user_page_context(request, target, style_form=form)
        return render_page_or_fragment(request, TEMPLATE, context, "style")
    if request.htmx:
        context = user_page_context(request, target, style_saved=True)
        return render_fragments(request, TEMPLATE, context, "style")
    messages.success(request, "Learned style saved.")
    return redirect("staff:user", user_id=target.pk)


@staff_required
@require_POST
def user_key_revoke(request, user_id: int, key_id: int):
    """Staff revoke one of a user's API keys (the key's history names them)."""
    key = get_object_or_404(ApiKey, pk=key_id, user_id=user_id)
    key_revoke(key=key, actor=request.user)
    messages.success(request, f"Revoked the key “{key.name}”.")
    return redirect(reverse("staff:user", args=[user_id]) + "#api-keys")
