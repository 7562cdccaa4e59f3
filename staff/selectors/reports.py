"""What the reports are built from: current summaries, decisions and action items in a scope
(one conversation, or all of a user's)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

from django.db.models import Count, Max, Min, Prefetch
from django.utils import timezone

from chat.models import Conversation, Message
from memory.models import ActionItem, Decision, MemoryState, Summary


@dataclass
class ReportData:
    scope: str  # "conversation" or "user"
    title: str
    username: str
    today: date
    conversations: list[Conversation] = field(default_factory=list)
    summaries: list[Summary] = field(default_factory=list)  # current versions
    decisions: list[Decision] = field(default_factory=list)
    action_items: list[ActionItem] = field(default_factory=list)
    message_count: int = 0
    first_message_at: datetime | None = None
    last_message_at: datetime | None = None


def _collect(data: ReportData, conversations, decisions, action_items) -> ReportData:
    data.conversations = list(conversations)
    ids = [c.pk for c in data.conversations]
    data.summaries = list(
        Summary.objects.filter(conversation_id__in=ids, is_current=True)
        .select_related("conversation")
        .order_by("conversation__created_at", "conversation_id")
    )
    # Suggestions wait for the user: not what was decided or is to be done yet.
    decisions = decisions.exclude(state=MemoryState.SUGGESTED)
    action_items = action_items.exclude(state=MemoryState.SUGGESTED)
    data.decisions = list(decisions.order_by("decided_at", "created_at", "id"))
    not_done = ActionItem.objects.exclude(
        status__in=[ActionItem.Status.DONE, ActionItem.Status.CANCELLED]
    ).only("id", "what", "status")
    data.action_items = list(
        action_items.prefetch_related(
            Prefetch("depends_on", queryset=not_done, to_attr="waiting_on")
        ).order_by("created_at", "id")
    )
    stats = Message.objects.filter(conversation_id__in=ids).aggregate(
        n=Count("id"), first=Min("created_at"), last=Max("created_at")
    )
    data.message_count = stats["n"]
    data.first_message_at, data.last_message_at = stats["first"], stats["last"]
    return data


def report_data_for_conversation(*, conversation: Conversation) -> ReportData:
    data = ReportData(
        scope="conversation",
        title=conversation.display_title,
        username=conversation.user.get_username(),
        today=timezone.localdate(),
    )
    return _collect(
        data,
        [conversation],
        Decision.objects.filter(conversation=conversation),
        ActionItem.objects.filter(conversation=conversation),
    )


def report_data_for_user(*, user) -> ReportData:
    data = ReportData(
        scope="user",
        title=user.get_username(),
        username=user.get_username(),
        today=timezone.localdate(),
    )
    return _collect(
        data,
        Conversation.objects.filter(user=user).order_by("created_at", "id"),
        Decision.objects.filter(user=user),
        ActionItem.objects.filter(user=user),
    )
