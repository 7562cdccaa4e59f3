"""Users as the staff list and user page show them."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db.models import Count, F, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404

from chat.models import Conversation, Message
from memory.models import ActionItem, Decision, Fact, MemoryState, Summary
from profiles.models import ApiKey

USER_SORTS = {
    "-last_active": "Recently active",
    "username": "Username",
    "-date_joined": "Newest",
    "date_joined": "Oldest",
}


def _count(queryset: QuerySet, owner: str) -> Coalesce:
    """A correlated COUNT over ``queryset`` rows whose ``owner`` is the outer user."""
    counted = (
        queryset.filter(**{owner: OuterRef("pk")})
        .order_by()
        .values(owner)
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def _memories(model, *, suggested: bool) -> Coalesce:
    rows = model.objects.filter(state=MemoryState.SUGGESTED)
    if not suggested:
        rows = model.objects.exclude(state=MemoryState.SUGGESTED)
    return _count(rows, "user")


def user_list(*, query: str = "", sort: str = "-last_active") -> QuerySet:
    """Users with their counts of conversations, messages and memories and when they were last
    active (their newest conversation activity), one query for a page of any length."""
    User = get_user_model()
    last_active = (
        Conversation.objects.filter(user=OuterRef("pk"))
        .order_by("-updated_at")
        .values("updated_at")
    )
    qs = User.objects.annotate(
        conversation_count=_count(Conversation.objects.all(), "user"),
        message_count=_count(Message.objects.all(), "conversation__user"),
        # Suggestions (ask first) apart: no reply uses them until the user keeps them.
        memory_count=_memories(Fact, suggested=False)
        + _memories(Decision, suggested=False)
        + _memories(ActionItem, suggested=False),
        suggestion_count=_memories(Fact, suggested=True)
        + _memories(Decision, suggested=True)
        + _memories(ActionItem, suggested=True),
        memory_mode=F("profile__memory_mode"),
        last_active=Subquery(last_active[:1]),
    )
    query = query.strip()
    if query:
        qs = qs.filter(
            Q(username__icontains=query)
            | Q(email__icontains=query)
            | Q(first_name__icontains=query)
            | Q(last_name__icontains=query)
        )
    if sort not in USER_SORTS:
        sort = "-last_active"
    if sort == "-last_active":
        return qs.order_by(Coalesce("last_active", "date_joined").desc(), "-pk")
    return qs.order_by(sort, "pk")


def user_get(*, user_id: int):
    return get_object_or_404(get_user_model(), pk=user_id)


def user_memory_counts(*, user) -> dict[str, dict]:
    """How many memories of each kind the user has: those in use by status, and apart the
    suggestions waiting for the user (ask first), which no reply uses."""
    counts = {}
    for slug, model in (("fact", Fact), ("decision", Decision), ("action_item", ActionItem)):
        rows = model.objects.filter(user=user).values("status", "state").annotate(n=Count("pk"))
        by_status: dict[str, int] = {}
        suggested = 0
        for row in rows:
            if row["state"] == MemoryState.SUGGESTED:
                suggested += row["n"]
            else:
                by_status[row["status"]] = by_status.get(row["status"], 0) + row["n"]
        counts[slug] = {
            "total": sum(by_status.values()),
            "by_status": by_status,
            "suggested": suggested,
        }
    return counts


def user_conversations(*, user, project: str = "") -> QuerySet:
    """The user's conversations, newest activity first, with message and summary counts; of
    one project (its id), outside any ("none"), or all ("")."""
    current = Summary.objects.filter(conversation=OuterRef("pk"), is_current=True)
    conversations = Conversation.objects.filter(user=user)
    if project == "none":
        conversations = conversations.filter(project__isnull=True)
    elif project.isdigit() and len(project) < 19:
        conversations = conversations.filter(project_id=int(project))
    return (
        conversations.select_related("project")
        .annotate(
            message_count=_count(Message.objects.all(), "conversation"),
            summary_version=Subquery(current.values("version")[:1]),
        )
        .order_by("-updated_at", "-id")
    )


def user_key_history(*, user, limit: int = 10):
    """The latest changes to the user's API keys: made, revoked, and by whom."""
    return (
        ApiKey.history.filter(user_id=user.pk)
        .select_related("history_user")
        .order_by("-history_date")[:limit]
    )
