"""Facts, decisions and action items: searchable lists, inline edit, pin, supersede, delete
(one or many), history with restore, and the recent changes across all of them."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from memory import services as memory_services
from memory.models import Fact
from staff.forms import (
    BulkDeleteForm,
    ChangeFilterForm,
    MemoryFilterForm,
    SupersedeForm,
    edit_form,
)
from staff.kinds import KINDS, kind_get
from staff.selectors import history as history_selectors
from staff.selectors import memories as selectors
from staff.views.common import safe_next
from web.access import staff_required
from web.fragments import render_fragments, render_page_or_fragment

TEMPLATE = "staff/memories.html"


@dataclass(frozen=True)
class RowUrls:
    """The links of one row. Built by joining ids to prefixes reversed once per page: a
    reverse() per link costs more than the rest of the row (eleven links, fifty rows)."""

    row: str
    user: str
    conversation: str | None

    edit = property(lambda self: self.row + "edit/")
    delete = property(lambda self: self.row + "delete/")
    history = property(lambda self: self.row + "history/")
    pin = property(lambda self: self.row + "pin/")
    supersede = property(lambda self: self.row + "supersede/")


def _prefix(name: str, *args) -> str:
    """The URL of ``name`` without its trailing id (``/staff/users/0/`` -> ``/staff/users/``)."""
    url = reverse(name, args=[*args, 0])
    if not url.endswith("/0/"):
        raise ValueError(f"{name} does not end with an id")
    return url[:-2]


def with_urls(kind, memories):
    """Attach ``urls`` (a RowUrls) to each memory; returns them."""
    rows = _prefix("staff:memory_row", kind.slug)
    users = _prefix("staff:user")
    conversations = _prefix("staff:conversation")
    for memory in memories:
        memory.urls = RowUrls(
            row=f"{rows}{memory.pk}/",
            user=f"{users}{memory.user_id}/",
            conversation=(
                f"{conversations}{memory.conversation_id}/" if memory.conversation_id else None
            ),
        )
    return memories


def _list_context(request, kind, data) -> dict:
    form = MemoryFilterForm(data, kind=kind)
    filters = form.filters()
    page = selectors.memory_page(kind=kind, filters=filters, page=data.get("page"))
    with_urls(kind, page.object_list)
    return {
        "kinds": KINDS.values(),
        "kind": kind,
        "form": form,
        "filters": filters,
        "page": page,
        "supersede_form": SupersedeForm(),
    }


@staff_required
@require_GET
@vary_on_headers("HX-Request")
def memory_list(request):
    kind = kind_get(request.GET.get("kind") or "fact")
    # The filters swap only the table; the kind tabs swap the whole section.
    partial = "memory-table" if request.htmx.target == "memory-table" else "memory-section"
    context = _list_context(request, kind, request.GET)
    return render_page_or_fragment(request, TEMPLATE, context, partial)


def _row(request, kind, memory, **extra) -> HttpResponse:
    with_urls(kind, [memory])
    context = {"kind": kind, "memory": memory, "supersede_form": SupersedeForm(), **extra}
    return render_fragments(request, TEMPLATE, context, "memory-row")


def _list_url(kind, memory=None) -> str:
    query = {"kind": kind.slug}
    if memory is not None:
        query["user"] = memory.user.get_username()
    return f"{reverse('staff:memories')}?{urlencode(query)}"


@staff_required
@require_GET
def memory_row(request, kind: str, memory_id: int):
    """One row (what Cancel swaps back in place of the edit form)."""
    memory_kind = kind_get(kind)
    memory = selectors.memory_get(kind=memory_kind, memory_id=memory_id)
    if not request.htmx:
        return redirect(_list_url(memory_kind, memory))
    return _row(request, memory_kind, memory)


@staff_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def memory_edit(request, kind: str, memory_id: int):
    """GET: the edit form (a row in place, or a page). POST: save, then the row; errors inline."""
    memory_kind = kind_get(kind)
    memory = selectors.memory_get(kind=memory_kind, memory_id=memory_id)
    form = edit_form(memory_kind, memory, request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        try:
            memory = memory_services.memory_update(
                memory=memory,
                actor=request.user,
                changes=form.cleaned_data,
                reason="edited by staff",
            )
        except ValidationError as error:
            form.add_error(None, error)
        else:
            if request.htmx:
                return _row(request, memory_kind, memory, saved=True)
            messages.success(request, f"{memory_kind.label} #{memory.pk} saved.")
            return redirect(
                safe_next(request, request.POST.get("next"), _list_url(memory_kind, memory))
            )
    context = {
        "kind": memory_kind,
        "memory": with_urls(memory_kind, [memory])[0],
        "edit_form": form,
    }
    if request.htmx:
        return render_fragments(request, TEMPLATE, context, "memory-edit-row")
    asked = request.GET.get("next") or request.POST.get("next")
    context["next"] = safe_next(request, asked, _list_url(memory_kind, memory))
    return render(request, "staff/memory_edit.html", context)


def _fact(memory_id: int) -> Fact:
    return selectors.memory_get(kind=KINDS["fact"], memory_id=memory_id)


@staff_required
@require_POST
@vary_on_headers("HX-Request")
def fact_pin(request, memory_id: int):
    fact = _fact(memory_id)
    pinned = request.POST.get("pinned", "1") == "1"
    fact = memory_services.fact_set_pinned(
        fact=fact, pinned=pinned, actor=request.user, by="by staff"
    )
    if request.htmx:
        return _row(request, KINDS["fact"], fact)
    messages.success(request, f"Fact #{fact.pk} {'pinned' if pinned else 'unpinned'}.")
    return redirect(safe_next(request, request.POST.get("next"), _list_url(KINDS["fact"], fact)))


@staff_required
@require_POST
@vary_on_headers("HX-Request")
def fact_supersede(request, memory_id: int):
    kind = KINDS["fact"]
    fact = _fact(memory_id)
    form = SupersedeForm(request.POST)
    error = None
    if form.is_valid():
        by_id = form.cleaned_data["by"]
        by = Fact.objects.filter(pk=by_id).first() if by_id else None
        if by_id and by is None:
            error = f"There is no fact #{by_id}."
        else:
            try:
                fact = memory_services.fact_supersede(
                    fact=fact, by=by, actor=request.user, reason="superseded by staff"
                )
            except ValidationError as e:
                error = " ".join(e.messages)
    else:
        error = "Give the number of the fact that replaces it, or leave it empty."
    if request.htmx:
        return _row(request, kind, fact, row_error=error)
    if error:
        messages.error(request, error)
    else:
        messages.success(request, f"Fact #{fact.pk} superseded.")
    return redirect(safe_next(request, request.POST.get("next"), _list_url(kind, fact)))


@staff_required
@require_http_methods(["GET", "POST"])
@vary_on_headers("HX-Request")
def memory_delete(request, kind: str, memory_id: int):
    """GET: a confirmation page. POST: delete (HTMX: the row goes away)."""
    memory_kind = kind_get(kind)
    memory = selectors.memory_get(kind=memory_kind, memory_id=memory_id)
    if request.method == "GET":
        return render(
            request,
            "staff/memory_confirm_delete.html",
            {
                "kind": memory_kind,
                "memory": memory,
                "next": safe_next(request, request.GET.get("next"), _list_url(memory_kind, memory)),
            },
        )
    back = _list_url(memory_kind, memory)
    memory_services.memory_delete(memory=memory, actor=request.user, reason="deleted by staff")
    if request.htmx:
        return HttpResponse("")
    messages.success(request, f"{memory_kind.label} #{memory_id} deleted.")
    return redirect(safe_next(request, request.POST.get("next"), back))


@staff_required
@require_POST
@vary_on_headers("HX-Request")
def memory_bulk_delete(request, kind: str):
    """Without ``confirm``: a page that lists the selection and asks. With it: delete each
    (HTMX: the table is re-rendered with the list's filters, which the request includes)."""
    memory_kind = kind_get(kind)
    form = BulkDeleteForm(request.POST)
    if not form.is_valid():
        if request.htmx:
            context = _list_context(request, memory_kind, request.POST)
            errors = form.errors.get("ids", ["Select some memories."])
            context["bulk_error"] = " ".join(str(message) for message in errors)
            return render_fragments(request, TEMPLATE, context, "memory-table")
        messages.error(request, "Select at least one memory to delete.")
        return redirect(safe_next(request, request.POST.get("next"), _list_url(memory_kind)))
    ids = form.cleaned_data["ids"]
    if not form.cleaned_data["confirm"]:
        selected = (
            memory_kind.model.objects.filter(pk__in=ids).select_related("user").order_by("pk")
        )
        return render(
            request,
            "staff/memory_confirm_bulk_delete.html",
            {
                "kind": memory_kind,
                "selected": selected,
                "next": safe_next(request, request.POST.get("next"), _list_url(memory_kind)),
            },
        )
    try:
        deleted = memory_services.memories_delete(
            model=memory_kind.model, ids=ids, actor=request.user, by="by staff"
        )
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        deleted = 0
    if request.htmx:
        context = _list_context(request, memory_kind, request.POST)
        context["bulk_deleted"] = deleted
        return render_fragments(request, TEMPLATE, context, "memory-table")
    messages.success(request, f"Deleted {deleted} {memory_kind.plural.lower()}.")
    return redirect(safe_next(request, request.POST.get("next"), _list_url(memory_kind)))


@staff_required
@require_GET
def memory_history(request, kind: str, memory_id: int):
    memory_kind = kind_get(kind)
    entries = history_selectors.memory_history(kind=memory_kind, memory_id=memory_id)
    current = memory_kind.model.objects.filter(pk=memory_id).select_related("user").first()
    return render(
        request,
        "staff/memory_history.html",
        {"kind": memory_kind, "memory_id": memory_id, "entries": entries, "current": current},
    )


@staff_required
@require_POST
def memory_restore(request, kind: str, memory_id: int, history_id: int):
    """Restore a memory to one of its recorded versions (itself recorded)."""
    memory_kind = kind_get(kind)
    record = history_selectors.history_record_get(
        kind=memory_kind, memory_id=memory_id, history_id=history_id
    )
    try:
        memory_services.memory_revert(record=record, actor=request.user)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, f"{memory_kind.label} #{memory_id} restored.")
    return redirect("staff:memory_history", kind=memory_kind.slug, memory_id=memory_id)


@staff_required
@require_GET
def change_list(request):
    """The newest changes to memories, newest first; "Older" pages by date (keyset)."""
    filters = ChangeFilterForm(request.GET).filters()
    entries = history_selectors.recent_changes(**filters)
    kind_slug, user_id = filters["kind_slug"], filters["user_id"]
    older = None
    if len(entries) == 50:
        query = {"before": entries[-1].record.history_date.isoformat(), "kind": kind_slug}
        if user_id:
            query["user_id"] = user_id
        older = f"?{urlencode(query)}"
    return render(
        request,
        "staff/changes.html",
        {"entries": entries, "older": older, "kinds": KINDS.values(), "kind_slug": kind_slug},
    )
