"""What an extraction added or changed, as the user sees it under a reply ("Remembered: ..."),
and Undo. The record is a ``MemoryEvent`` whose ``items`` are ``EventItem``s; each names the
history records around its change, so Undo deletes what was added and restores what was
changed to the version before (``memory.services.edits``), and leaves alone what a person has
changed since. Every tab on the conversation hears of a new or changed notice once the
transaction commits (``memory.signals.memory_event_changed``, which the chat layer publishes:
``chat.publisher``)."""

from __future__ import annotations

from typing import Literal, TypedDict

from django.db import transaction
from django.utils import timezone

from chat.models import Conversation, Message
from memory.models import ActionItem, Decision, Fact, KeptMemory, MemoryEvent
from memory.signals import memory_event_changed

Action = Literal["added", "suggested", "updated", "replaced"]
KIND_OF: dict[type[KeptMemory], str] = {
    Fact: "fact",
    Decision: "decision",
    ActionItem: "action_item",
}
MODEL_OF = {kind: model for model, kind in KIND_OF.items()}
TEXT_OF: dict[type[KeptMemory], str] = {Fact: "text", Decision: "what", ActionItem: "what"}
ADDED: tuple[Action, ...] = ("added", "suggested")


class EventItem(TypedDict):
    kind: str  # fact, decision, action_item
    id: int
    action: Action  # added; suggested (waits for the user); updated; replaced (superseded)
    text: str  # as it was then (the notice still reads right after a later edit)
    before: int | None  # history_id of the version before the change (updated, replaced)
    after: int | None  # history_id of the version the change made


_NOBODY = object()


def history_id(obj, changes=_NOBODY) -> int | None:
    """The id of ``obj``'s newest history record; None without a query when ``changes`` is
    given and None (nobody collects what happened)."""
    if changes is None:
        return None
    return obj.history.order_by("-history_id").values_list("history_id", flat=True).first()


def note(changes: list[EventItem] | None, obj, action: Action, *, before: int | None = None):
    """Append what just happened to ``obj`` (saved) to ``changes``, unless nobody collects."""
    if changes is None:
        return
    model = type(obj)
    changes.append(
        EventItem(
            kind=KIND_OF[model],
            id=obj.pk,
            action=action,
            text=getattr(obj, TEXT_OF[model]),
            before=before,
            after=history_id(obj),
        )
    )


def memory_event_record(
    *,
    conversation: Conversation,
    message: Message,
    items: list[EventItem],
    source: str = MemoryEvent.Source.TURN,
) -> MemoryEvent | None:
    """Store the notice of what one extraction did (nothing when it did nothing) and tell the
    conversation's tabs once it commits."""
    if not items:
        return None
    event = MemoryEvent.objects.create(
        user_id=conversation.user_id,
        conversation=conversation,
        message=message,
        source=source,
        items=items,
    )
    broadcast_on_commit(event)
    return event


def notice_message(user_message: Message) -> Message:
    """The message a turn's notice sits under: the reply to ``user_message`` (newest first,
    should it have been answered again), or the message itself when it has none."""
    reply = (
        Message.objects.filter(reply_to=user_message, role=Message.Role.ASSISTANT)
        .order_by("-id")
        .first()
    )
    return reply or user_message


def _changed_by_a_person_since(obj, after: int | None) -> bool:
    newer = obj.history.filter(history_user__isnull=False)
    if after is not None:
        newer = newer.filter(history_id__gt=after)
    return newer.exists()


def memory_event_undo(*, event: MemoryEvent, actor) -> MemoryEvent:
    """Undo what ``event`` did: delete what it added (suggestions too), restore what it changed
    to the version before. What a person changed since stays as it is. The search index
    follows at once (its triggers); each step is a history record naming ``actor``."""
    from memory.services.edits import memory_delete, memory_revert

    with transaction.atomic():
        event = MemoryEvent.objects.select_for_update().get(pk=event.pk)
        if event.undone_at is not None:
            return event
        # Deletions first: a deleted new fact frees the one it had replaced.
        ordered = sorted(event.items, key=lambda item: item["action"] not in ADDED)
        for item in ordered:
            model = MODEL_OF[item["kind"]]
            obj = model.objects.filter(pk=item["id"], user_id=event.user_id).first()
            if obj is None or _changed_by_a_person_since(obj, item["after"]):
                continue
            if item["action"] in ADDED:
                memory_delete(
                    memory=obj,
                    actor=actor,
                    reason="undone: remembered by mistake",
                    keep_notices=True,
                )
                continue
            record = obj.history.filter(history_id=item["before"]).first()
            if record is not None:
                memory_revert(record=record, actor=actor, reason="undone: restored")
        event.undone_at = timezone.now()
        event.save(update_fields=["undone_at"])
        broadcast_on_commit(event)
    return event


def broadcast_on_commit(event: MemoryEvent) -> None:
    """Once committed, every tab on the event's conversation gets the notice as it now is."""
    transaction.on_commit(lambda: _broadcast(event.pk))


def _broadcast(event_id: int) -> None:
    # The chat layer publishes it (chat.publisher): memory does not import chat's fan-out.
    memory_event_changed.send(sender=MemoryEvent, event_id=event_id)
