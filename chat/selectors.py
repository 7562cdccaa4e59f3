"""Reads for the chat pages."""

from __future__ import annotations

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404

from chat.models import Conversation, Message
from memory.report import ContextReport, report_read

HISTORY_PAGE_SIZE = 50


def conversation_get_for_user(*, user, conversation_id: int) -> Conversation:
    """The user's conversation, or 404 — another user's id is indistinguishable from none."""
    return get_object_or_404(Conversation, pk=conversation_id, user=user)


def conversation_list(*, user, query: str = "", archived: bool = False) -> QuerySet:
    qs = Conversation.objects.filter(user=user, archived=archived)
    if query:
        qs = qs.filter(title__icontains=query.strip())
    return qs.order_by("-updated_at", "-id").only("id", "title", "updated_at", "archived")


def message_page(*, conversation: Conversation, before_id: int | None = None):
    """The newest messages (before ``before_id``), oldest first, and whether more exist."""
    qs = Message.objects.filter(conversation=conversation).select_related("reply_to")
    if before_id is not None:
        qs = qs.filter(id__lt=before_id)
    rows = list(qs.order_by("-created_at", "-id")[: HISTORY_PAGE_SIZE + 1])
    has_more = len(rows) > HISTORY_PAGE_SIZE
    return list(reversed(rows[:HISTORY_PAGE_SIZE])), has_more


def last_context(conversation: Conversation) -> ContextReport | None:
    """The context report of the newest reply, for the context meter."""
    return report_read(
        Message.objects.filter(conversation=conversation, context_report__isnull=False)
        .order_by("-id")
        .values_list("context_report", flat=True)
        .first()
    )
