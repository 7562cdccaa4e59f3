"""Reads of projects: the user's own (404 otherwise), their conversations, and what a project
knows (its decisions, action items, facts and timeline), each row linked to its source message
as on the Memory page (``memory.selectors.owned.rows_of``)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import TypedDict

from django.db.models import (
    Count,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    prefetch_related_objects,
)
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404
from django.utils import timezone

from chat.models import Conversation, Message
from memory.models import OPEN_STATUSES, ActionItem, Decision, Fact, MemoryState
from memory.selectors.owned import ACTION_ITEM, DECISION, FACT, MemoryRow, rows_of
from projects.models import Project


def project_get_for_user(*, user, project_id: int) -> Project:
    """The user's project, or 404: another user's id is indistinguishable from none."""
    return get_object_or_404(Project, pk=project_id, user=user)


def project_named(*, user, value: str | int | None) -> Project | None:
    """The user's project a client names by its id or its name (any case), or None: another
    user's project is not found, like one that does not exist. (``/v1`` and ``/mcp``.)"""
    value = "" if value is None else str(value).strip()
    if not value:
        return None
    owned = Project.objects.filter(user=user)
    found = owned.filter(pk=int(value)).first() if value.isdigit() and len(value) < 19 else None
    return found or owned.filter(name__iexact=value).first()


def project_list(*, user, archived: bool = False) -> QuerySet:
    """The user's projects (active or archived), by name, each with its conversation count."""
    return (
        Project.objects.filter(user=user, archived_at__isnull=not archived)
        .annotate(conversation_count=Count("conversations"))
        .order_by("name", "id")
    )


def project_conversations(*, project: Project) -> QuerySet:
    """The project's conversations, archived ones too (marked), the most recent first."""
    return (
        Conversation.objects.filter(project=project)
        .annotate(message_count=Count("messages", filter=~Q(messages__role="system")))
        .order_by("archived", "-updated_at", "-id")
    )


@dataclass(frozen=True)
class StatusChange:
    when: datetime
    status: str  # the label
    by: str  # who made the change ("" when the app did)


@dataclass(frozen=True)
class TimelineEntry:
    day: date
    kind: str  # "decision", "due", "done"
    label: str
    row: MemoryRow[Decision | ActionItem]


@dataclass
class Knowledge:
    decisions: list[MemoryRow[Decision]] = field(default_factory=list)
    open_items: list[MemoryRow[ActionItem]] = field(default_factory=list)
    done_items: list[MemoryRow[ActionItem]] = field(default_factory=list)
    facts: list[MemoryRow[Fact]] = field(default_factory=list)
    timeline: list[TimelineEntry] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.decisions or self.open_items or self.done_items or self.facts)


def count_in_project(memories: QuerySet) -> Coalesce:
    """How many of ``memories`` the outer query's project holds, as a subquery (an
    annotation of projects)."""
    counted = (
        memories.filter(project=OuterRef("pk"))
        .order_by()
        .values("project")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted), 0)


class MemoryCounts(TypedDict):
    facts: int
    decisions: int
    open_items: int


def project_memory_counts(*, project: Project) -> MemoryCounts:
    """How many facts, decisions and open action items the project holds, in one statement."""
    kept = ~Q(state=MemoryState.SUGGESTED)
    return (
        Project.objects.filter(pk=project.pk)
        .annotate(
            facts=count_in_project(Fact.objects.filter(kept, status=Fact.Status.ACTIVE)),
            decisions=count_in_project(Decision.objects.filter(kept)),
            open_items=count_in_project(ActionItem.objects.filter(kept, status__in=OPEN_STATUSES)),
        )
        .values("facts", "decisions", "open_items")
        .get()
    )


def _status_history(items: list[ActionItem]) -> dict[int, list[StatusChange]]:
    """Each action item's status changes, oldest first, from its simple-history records."""
    records = (
        ActionItem.history.filter(id__in=[item.pk for item in items])
        .select_related("history_user")
        .order_by("id", "history_date", "history_id")
    )
    labels = dict(ActionItem.Status.choices)
    changes: dict[int, list[StatusChange]] = defaultdict(list)
    last: dict[int, str] = {}
    for record in records:
        if record.history_type == "-" or last.get(record.id) == record.status:
            continue
        last[record.id] = record.status
        by = record.history_user.get_username() if record.history_user else ""
        changes[record.id].append(
            StatusChange(record.history_date, labels.get(record.status, record.status), by)
        )
    return changes


def _timeline(knowledge: Knowledge, history: dict[int, list[StatusChange]]) -> list:
    entries: list[TimelineEntry] = []
    local = timezone.localdate
    for row in knowledge.decisions:
        when = row.obj.decided_at or row.created_at
        entries.append(TimelineEntry(local(when), "decision", "Decided", row))
    for item_row in knowledge.open_items + knowledge.done_items:
        item = item_row.obj
        if item.due_date:
            entries.append(TimelineEntry(item.due_date, "due", "Due", item_row))
        done = [c for c in history.get(item.pk, []) if c.status == "Done"]
        if item.status == ActionItem.Status.DONE and done:
            entries.append(TimelineEntry(local(done[-1].when), "done", "Done", item_row))
    return sorted(entries, key=lambda e: (e.day, e.kind, e.row.obj.pk))


def project_knowledge(*, project: Project) -> Knowledge:
    """What the project knows: decisions (newest first), open and done action items (by due
    date), active facts (most important first), and a timeline of decisions and milestones."""
    kept = ~Q(state=MemoryState.SUGGESTED)
    mine = Q(project=project) & kept
    knowledge = Knowledge()
    knowledge.decisions = rows_of(
        DECISION, Decision.objects.filter(mine).order_by("-decided_at", "-created_at", "-id")
    )
    items = ActionItem.objects.filter(mine).order_by("due_date", "created_at", "id")
    rows = rows_of(ACTION_ITEM, items)
    knowledge.open_items = [r for r in rows if r.obj.status in OPEN_STATUSES]
    knowledge.done_items = [r for r in rows if r.obj.status not in OPEN_STATUSES]
    knowledge.facts = rows_of(
        FACT,
        Fact.objects.filter(mine, status=Fact.Status.ACTIVE).order_by(
            "-pinned", "-importance", "-created_at"
        ),
    )
    objs = [row.obj for row in rows]
    prefetch_related_objects(
        objs, Prefetch("depends_on", queryset=ActionItem.objects.only("id", "what", "status"))
    )
    history = _status_history(objs)
    for obj in objs:
        # For the template: an attribute the model does not declare.
        obj.status_history = history.get(obj.pk, [])  # type: ignore[attr-defined]
    knowledge.timeline = _timeline(knowledge, history)
    return knowledge


def project_message_span(*, project: Project) -> tuple[int, datetime | None, datetime | None]:
    """How many messages the project's conversations hold, and the first and last one's time."""
    messages = Message.objects.filter(conversation__project=project).exclude(role="system")
    first = messages.order_by("created_at").values_list("created_at", flat=True).first()
    last = messages.order_by("-created_at").values_list("created_at", flat=True).first()
    return messages.count(), first, last
