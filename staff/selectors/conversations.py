"""Conversations as the staff review page shows them: messages with their context reports,
summary versions, background summary runs."""

from __future__ import annotations

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from chat.models import Conversation, Message
from memory.models import Summary, SummaryRun

MESSAGES_PER_PAGE = 50


def conversation_get(*, conversation_id: int) -> Conversation:
    return get_object_or_404(Conversation.objects.select_related("user"), pk=conversation_id)


def message_page(*, conversation: Conversation, page: int | str | None) -> Page:
    """One page of the conversation's messages, oldest first (the last page by default): the
    branch the user sees (chat.branches)."""
    qs = Message.objects.filter(conversation=conversation, hidden_by__isnull=True).order_by(
        "created_at", "id"
    )
    paginator = Paginator(qs, MESSAGES_PER_PAGE)
    return paginator.get_page(page or paginator.num_pages)


def summary_versions(*, conversation: Conversation) -> list[Summary]:
    return list(
        Summary.objects.filter(conversation=conversation)
        .select_related("created_by")
        .order_by("-version")
    )


def summary_get(*, summary_id: int) -> Summary:
    return get_object_or_404(Summary.objects.select_related("conversation"), pk=summary_id)


def summary_run_latest(*, conversation: Conversation) -> SummaryRun | None:
    """The newest run: the active one if there is one, otherwise the last to finish."""
    return (
        SummaryRun.objects.filter(conversation=conversation)
        .select_related("requested_by")
        .order_by("-created_at", "-id")
        .first()
    )


def summary_run_get(*, run_id: int) -> SummaryRun:
    return get_object_or_404(
        SummaryRun.objects.select_related("conversation", "requested_by"), pk=run_id
    )


def summary_runs_recent(*, conversation: Conversation, limit: int = 10) -> QuerySet:
    return (
        SummaryRun.objects.filter(conversation=conversation)
        .select_related("requested_by", "summary")
        .order_by("-created_at", "-id")[:limit]
    )
