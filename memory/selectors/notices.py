"""The "Remembered: ..." notices under replies, read from their MemoryEvent records with what
each item is now (still there? still a suggestion?), in a query per kind for a whole page."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import F, QuerySet
from django.urls import reverse

from memory.models import ActionItem, Decision, Fact, KeptMemory, MemoryEvent, MemoryState

_MODELS: dict[str, tuple[type[KeptMemory], str]] = {
    "fact": (Fact, "text"),
    "decision": (Decision, "what"),
    "action_item": (ActionItem, "what"),
}
LABELS = {"fact": "Fact", "decision": "Decision", "action_item": "Action item"}


@dataclass
class NoticeItem:
    kind: str
    id: int
    action: str  # added, suggested, updated, replaced
    text: str  # now, or as it was when the memory no longer exists
    exists: bool
    suggested: bool  # still waiting for the user

    @property
    def label(self) -> str:
        return LABELS[self.kind]


@dataclass
class Notice:
    event: MemoryEvent
    items: list[NoticeItem] = field(default_factory=list)
    project_id: int | None = None  # the conversation's project: what it learned is the project's

    @property
    def memory_url(self) -> str:
        """Where what it remembered is listed: the project's knowledge page for a project's
        conversation (its memories belong to the project), else the Memory page."""
        if self.project_id is not None:
            return reverse("projects:knowledge", args=[self.project_id])
        return reverse("memory:page")

    @property
    def memory_label(self) -> str:
        return "What this project knows" if self.project_id is not None else "Your memory"

    @property
    def undone(self) -> bool:
        return self.event.undone_at is not None

    @property
    def shown_items(self) -> list[NoticeItem]:
        """What the notice lists: what was learned; a superseded fact is named beside it."""
        return [item for item in self.items if item.action != "replaced"]

    @property
    def replaced(self) -> list[NoticeItem]:
        return [item for item in self.items if item.action == "replaced"]

    @property
    def waiting(self) -> bool:
        return any(item.suggested for item in self.items)

    @property
    def asked(self) -> bool:
        """An ask-first notice: Keep, Edit and Discard answer it (no Undo)."""
        return any(item.action == "suggested" for item in self.items)


def _notices(events: list[MemoryEvent]) -> list[Notice]:
    wanted: dict[str, set[int]] = defaultdict(set)
    for event in events:
        for item in event.items:
            wanted[item["kind"]].add(item["id"])
    live: dict[tuple[str, int], tuple[str, str]] = {}
    for kind, ids in wanted.items():
        model, text_field = _MODELS[kind]
        for pk, text, state in model.objects.filter(pk__in=ids).values_list(
            "pk", text_field, "state"
        ):
            live[kind, pk] = (text, state)
    notices = []
    for event in events:
        items = []
        for item in event.items:
            now = live.get((item["kind"], item["id"]))
            items.append(
                NoticeItem(
                    kind=item["kind"],
                    id=item["id"],
                    action=item["action"],
                    text=now[0] if now else item["text"],
                    exists=now is not None,
                    suggested=now is not None and now[1] == MemoryState.SUGGESTED,
                )
            )
        project_id = getattr(event, "conversation_project_id", None)
        notices.append(Notice(event=event, items=items, project_id=project_id))
    return notices


def _events() -> QuerySet[MemoryEvent]:
    """Events with their conversation's project (``Notice.memory_url``), in the same
    statement."""
    return MemoryEvent.objects.annotate(conversation_project_id=F("conversation__project_id"))


def notice_get(*, event_id: int) -> Notice | None:
    event = _events().filter(pk=event_id).first()
    return _notices([event])[0] if event is not None else None


def notice_ids_since(*, conversation_id: int, source: str, since) -> list[int]:
    """The ids of the conversation's notices from ``source`` made at ``since`` or later,
    oldest first."""
    return list(
        MemoryEvent.objects.filter(
            conversation_id=conversation_id, source=source, created_at__gte=since
        )
        .order_by("id")
        .values_list("id", flat=True)
    )


def notices_for_messages(message_ids) -> dict[int, list[Notice]]:
    """The notices under each of these messages (message id -> notices, oldest first)."""
    events = list(_events().filter(message_id__in=list(message_ids)).order_by("id"))
    found: dict[int, list[Notice]] = defaultdict(list)
    for notice in _notices(events):
        found[notice.event.message_id].append(notice)
    return dict(found)
