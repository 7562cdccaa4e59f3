"""The signed-in user's Memory page: their facts, decisions, action items and summaries, and
what they may do to them (add one by hand, edit, pin, delete, done/reopen, keep or discard a
suggestion, undo a "Remembered: ..." notice). Thin: every lookup is the user's own (404 otherwise,
``memory.selectors``), every write goes through ``memory.services`` with the user as actor.

Each form works without JavaScript (POST, then back to where it was) and with HTMX (the row or
notice it changed is re-rendered in place)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from memory import selectors, services
from memory.forms import MemoryAddForm, MemoryFilterForm, MemoryTextForm
from memory.models import Fact
from memory.selectors.owned import memory_row_for
from memory.services import moves
from memory.services.events import broadcast_on_commit
from profiles.selectors import profile_get
from web.access import login_required
from web.fragments import render_fragments, render_page_or_fragment
from web.requests import AuthenticatedHttpRequest

TEMPLATE = "memory/memory.html"
PAGE = "memory:page"


def _safe_next(request: HttpRequest) -> str:
    """``next`` (posted, else in the query) when it is a page of this site, else ""."""
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return ""


def _back(request: HttpRequest, default: str = "", anchor: str = "") -> HttpResponse:
    """After a plain form post: to ``next`` when it is a page of this site (the project's
    knowledge page, a filtered Memory page), else ``default`` or the Memory page; at the row
    acted on (``anchor``) when it is still there."""
    target = _safe_next(request) or default or reverse(PAGE)
    if anchor and "#" not in target:
        target = f"{target}#{anchor}"
    return redirect(target)


def _page_context(request: AuthenticatedHttpRequest) -> dict:
    form = MemoryFilterForm(request.GET)
    filters = form.filters()
    page = selectors.memory_page_for_user(
        user=request.user, filters=filters, page=request.GET.get("page")
    )
    suggestions, suggestion_count = selectors.suggestions_for_user(user=request.user)
    added_kind, _, added_id = request.GET.get("added", "").partition("-")
    return {
        "add_form": MemoryAddForm(),
        "added_kind": added_kind,
        "added_id": int(added_id) if added_id.isdigit() and len(added_id) < 19 else None,
        "form": form,
        "filters": filters,
        "page": page,
        "suggestions": suggestions,
        "suggestion_count": suggestion_count,
        "profile": profile_get(user=request.user),
        "projects": selectors.projects_of(user=request.user),
        "here": request.get_full_path(),  # where a form posted without JavaScript comes back
    }


@login_required(default_next=PAGE)
@require_GET
@vary_on_headers("HX-Request")
def memory_page(request: AuthenticatedHttpRequest) -> HttpResponse:
    return render_page_or_fragment(
        request, TEMPLATE, _page_context(request), "memory-list", target="memory-list"
    )


@login_required(default_next=PAGE)
@require_POST
def memory_add(request: AuthenticatedHttpRequest) -> HttpResponse:
    """Add a memory by hand: back to the page, the new memory first and marked; the page again
    with the form's errors (400) if it was not valid."""
    form = MemoryAddForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            memory = services.memory_add(
                user=request.user,
                kind=data["kind"],
                text=data["text"],
                category=data["category"] or Fact.Category.OTHER,
            )
        except ValidationError as error:
            for field, messages in error.message_dict.items():
                form.add_error(field if field in form.fields else None, messages)
        else:
            kind = data["kind"]
            return redirect(f"{reverse(PAGE)}?added={kind}-{memory.pk}#{kind}-{memory.pk}")
    context = {**_page_context(request), "add_form": form, "add_open": True}
    return render(request, TEMPLATE, context, status=400)


def _row(request: AuthenticatedHttpRequest, kind: str, memory, **extra) -> HttpResponse:
    row = memory_row_for(kind=kind, memory=memory)
    context = {
        "row": row,
        "projects": selectors.projects_of(user=request.user),
        "here": _safe_next(request),
        **extra,
    }
    return render_fragments(request, TEMPLATE, context, "memory-row")


def _notice(request: AuthenticatedHttpRequest, event) -> HttpResponse:
    """The notice as it now is, for the tab that acted; the other tabs hear of it too."""
    broadcast_on_commit(event)
    notice = selectors.notice_get(event_id=event.pk)
    return render(request, "memory/_notice.html", {"notice": notice})


def _event(request: AuthenticatedHttpRequest):
    """The notice a form was posted from (``event``), if it is the user's."""
    value = request.POST.get("event", "")
    if not value.isdigit() or len(value) > 18:
        return None
    return selectors.event_find_owned(event_id=int(value), user=request.user)


def _done(
    request: AuthenticatedHttpRequest, kind: str, memory, *, removed: bool = False
) -> HttpResponse:
    """The answer to an action: the notice it came from, the row, or (no JS) a redirect."""
    event = _event(request)
    if request.htmx and event is not None:
        return _notice(request, event)
    if request.htmx:
        return HttpResponse("") if removed else _row(request, kind, memory, saved=True)
    if event is not None:
        return _back(request, f"{reverse('chat:conversation', args=[event.conversation_id])}")
    return _back(request, anchor="" if removed else f"{kind}-{memory.pk}")


@login_required(default_next=PAGE)
@require_GET
def memory_row(request: AuthenticatedHttpRequest, kind: str, memory_id: int) -> HttpResponse:
    """One row of the list (what Cancel puts back in place of the edit form)."""
    memory = selectors.memory_get_owned(kind=kind, memory_id=memory_id, user=request.user)
    return _row(request, kind, memory)


@login_required(default_next=PAGE)
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def memory_edit(request: AuthenticatedHttpRequest, kind: str, memory_id: int) -> HttpResponse:
    """GET: the form (inline for HTMX, a page without JS). POST: save the new text."""
    memory = selectors.memory_get_owned(kind=kind, memory_id=memory_id, user=request.user)
    row = memory_row_for(kind=kind, memory=memory)
    if request.method == "GET":
        form = MemoryTextForm(initial={"text": row.text})
    else:
        form = MemoryTextForm(request.POST)
        if form.is_valid():
            try:
                memory = services.memory_edit_text(
                    memory=memory, actor=request.user, text=form.cleaned_data["text"]
                )
            except ValidationError as error:
                form.add_error("text", " ".join(error.messages))
            else:
                return _done(request, kind, memory)
    context = {
        "row": row,
        "edit_form": form,
        "next": _safe_next(request),
        "event_id": request.POST.get("event") or request.GET.get("event", ""),
    }
    if request.htmx and (request.method == "GET" or form.errors):
        return render_fragments(request, TEMPLATE, context, "memory-edit")
    return render(request, "memory/edit.html", context, status=400 if form.errors else 200)


@login_required(default_next=PAGE)
@require_POST
def memory_pin(request: AuthenticatedHttpRequest, kind: str, memory_id: int) -> HttpResponse:
    memory = selectors.memory_get_owned(kind="fact", memory_id=memory_id, user=request.user)
    if kind != "fact":
        return HttpResponse("Only facts can be pinned.", status=400)
    memory = services.fact_set_pinned(
        fact=memory, pinned=request.POST.get("pinned") == "1", actor=request.user, by="by the user"
    )
    return _done(request, kind, memory)


@login_required(default_next=PAGE)
@require_POST
def memory_done(request: AuthenticatedHttpRequest, kind: str, memory_id: int) -> HttpResponse:
    memory = selectors.memory_get_owned(kind="action_item", memory_id=memory_id, user=request.user)
    if kind != "action_item":
        return HttpResponse("Only action items can be done.", status=400)
    memory = services.action_item_set_done(
        item=memory, actor=request.user, done=request.POST.get("done") == "1"
    )
    return _done(request, kind, memory)


@login_required(default_next=PAGE)
@require_http_methods(["GET", "POST"])
def memory_delete(request: AuthenticatedHttpRequest, kind: str, memory_id: int) -> HttpResponse:
    """GET: confirm (the no-JS path). POST: delete (kept in the memory's history)."""
    memory = selectors.memory_get_owned(kind=kind, memory_id=memory_id, user=request.user)
    if request.method == "GET":
        row = memory_row_for(kind=kind, memory=memory)
        context = {"row": row, "next": _safe_next(request)}
        return render(request, "memory/confirm_delete.html", context)
    services.memory_delete(memory=memory, actor=request.user, reason="deleted by the user")
    return _done(request, kind, memory, removed=True)


@login_required(default_next=PAGE)
@require_POST
def memory_keep(request: AuthenticatedHttpRequest, kind: str, memory_id: int) -> HttpResponse:
    memory = selectors.memory_get_owned(kind=kind, memory_id=memory_id, user=request.user)
    memory = services.memory_keep(memory=memory, actor=request.user)
    return _done(request, kind, memory, removed=True)


@login_required(default_next=PAGE)
@require_POST
def memory_discard(request: AuthenticatedHttpRequest, kind: str, memory_id: int) -> HttpResponse:
    memory = selectors.memory_get_owned(kind=kind, memory_id=memory_id, user=request.user)
    try:
        services.memory_discard(memory=memory, actor=request.user)
    except ValidationError as error:
        return HttpResponse(" ".join(error.messages), status=400)
    return _done(request, kind, memory, removed=True)


@login_required(default_next=PAGE)
@require_POST
def event_undo(request: AuthenticatedHttpRequest, event_id: int) -> HttpResponse:
    """Undo a "Remembered: ..." notice (the chat sends this over its websocket; this is the
    no-JS path)."""
    event = selectors.event_get_owned(event_id=event_id, user=request.user)
    event = services.memory_event_undo(event=event, actor=request.user)
    if request.htmx:
        return _notice(request, event)
    url = reverse("chat:conversation", args=[event.conversation_id])
    return redirect(f"{url}#m{event.message_id}")


@login_required(default_next=PAGE)
@require_POST
def memory_move(request: AuthenticatedHttpRequest, kind: str, memory_id: int) -> HttpResponse:
    """Move a memory to one of the user's projects or to everywhere (``project`` = "")."""
    memory = selectors.memory_get_owned(kind=kind, memory_id=memory_id, user=request.user)
    project = selectors.project_get_owned(
        project_id=request.POST.get("project", ""), user=request.user
    )
    kept = moves.memory_move(obj=memory, project=project, actor=request.user)
    if kept.pk == memory.pk:
        return _done(request, kind, kept)
    # The same memory was already there: one now (the page's row of it is the one kept).
    where = f"“{project.name}”" if project is not None else "Everywhere"
    label = kept._meta.verbose_name
    merged = f"{where} already had this {label}: the two are one now, its history keeps both."
    if request.htmx:
        return render_fragments(request, TEMPLATE, {"merged": merged}, "memory-merged")
    messages.info(request, merged)
    return _back(request)
