"""Conversation review: messages with what the model saw, summary versions and their diffs,
background re-summarisation with live progress."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers

from chat.publisher import summary_runs_watch_from_view
from memory import services as memory_services
from staff.diff import list_diff, text_diff
from staff.forms import DiffForm
from staff.reports import REPORTS
from staff.selectors import conversations as selectors
from web.access import staff_required
from web.fragments import render_fragments, render_page_or_fragment

TEMPLATE = "staff/conversation.html"


def _diff(versions, a: int | None = None, b: int | None = None) -> dict | None:
    """The diff between versions ``a`` and ``b`` (default: the previous and the current)."""
    by_number = {s.version: s for s in versions}
    if a is None or b is None:
        if len(versions) < 2:
            return None
        current = next((s for s in versions if s.is_current), versions[0])
        older = [s for s in versions if s.version < current.version]
        if not older:
            return None
        a, b = older[0].version, current.version
    old, new = by_number.get(a), by_number.get(b)
    if old is None or new is None:
        return {"error": "Choose two existing versions.", "a": a, "b": b}
    return {
        "a": a,
        "b": b,
        "old": old,
        "new": new,
        "text": text_diff(old.text, new.text),
        "topics": list_diff(old.topics, new.topics),
        "open_questions": list_diff(old.open_questions, new.open_questions),
    }


def _summary_context(conversation, **extra) -> dict:
    versions = selectors.summary_versions(conversation=conversation)
    return {
        "conversation": conversation,
        "versions": versions,
        "run": selectors.summary_run_latest(conversation=conversation),
        "diff": _diff(versions),
        **extra,
    }


@staff_required
@require_GET
@vary_on_headers("HX-Request")
def conversation_detail(request, conversation_id: int):
    conversation = selectors.conversation_get(conversation_id=conversation_id)
    page = selectors.message_page(conversation=conversation, page=request.GET.get("page"))
    context = {
        **_summary_context(conversation),
        "page": page,
        "reports": REPORTS.values(),
        "runs": selectors.summary_runs_recent(conversation=conversation),
    }
    return render_page_or_fragment(request, TEMPLATE, context, "messages", target="messages")


@staff_required
@require_POST
@vary_on_headers("HX-Request")
def conversation_resummarise(request, conversation_id: int):
    """Start a full re-summarisation in the background; the page then polls its state."""
    conversation = selectors.conversation_get(conversation_id=conversation_id)
    run = memory_services.conversation_resummarise(conversation=conversation, actor=request.user)
    summary_runs_watch_from_view([run])  # its notices reach the user's open tabs
    if request.htmx:
        return render_fragments(
            request, TEMPLATE, {"conversation": conversation, "run": run}, "run"
        )
    messages.info(request, "Re-summarising in the background.")
    return redirect("staff:conversation", conversation_id=conversation.pk)


@staff_required
@require_GET
@vary_on_headers("HX-Request")
def summary_run_status(request, run_id: int):
    """The run's state. Polled every second while it is queued or running; the response for a
    finished run stops the polling and swaps in the updated summary versions."""
    run = selectors.summary_run_get(run_id=run_id)
    conversation = run.conversation
    if not request.htmx:
        return redirect("staff:conversation", conversation_id=conversation.pk)
    if run.active:
        return render_fragments(
            request, TEMPLATE, {"conversation": conversation, "run": run}, "run"
        )
    context = _summary_context(conversation, run=run)
    return render_fragments(request, TEMPLATE, context, "run", "versions", "diff")


@staff_required
@require_GET
@vary_on_headers("HX-Request")
def summary_diff(request, conversation_id: int):
    conversation = selectors.conversation_get(conversation_id=conversation_id)
    form = DiffForm(request.GET)
    versions = selectors.summary_versions(conversation=conversation)
    if form.is_valid():
        diff = _diff(versions, form.cleaned_data["a"], form.cleaned_data["b"])
    else:
        diff = {"error": "Choose two versions."}
    context = {"conversation": conversation, "versions": versions, "diff": diff}
    template = f"{TEMPLATE}#diff" if request.htmx else "staff/summary_diff.html"
    return render(request, template, context)


@staff_required
@require_POST
@vary_on_headers("HX-Request")
def summary_make_current(request, summary_id: int):
    summary = selectors.summary_get(summary_id=summary_id)
    reason = f"version {summary.version} made current by staff"
    memory_services.summary_make_current(summary=summary, actor=request.user, reason=reason)
    if request.htmx:
        context = _summary_context(summary.conversation, made_current=summary.version)
        return render_fragments(request, TEMPLATE, context, "versions", "diff")
    messages.success(request, f"Version {summary.version} is now current.")
    return redirect("staff:conversation", conversation_id=summary.conversation_id)
