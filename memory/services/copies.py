"""Copies of forgotten text kept outside the memory tables, blanked when the user forgets.

A memory's text is copied into the "Remembered" notices (``MemoryEvent.items``) and into the
"What the model saw" reports of the replies it was sent with (``Message.context_report`` and
``ReplyVersion.context_report``: memories, memories left out, the summary); a recalled message
of a conversation being deleted is copied there too. Forgetting removes the notices' items
(a notice left with none is deleted) and blanks the reports' text, so nothing forgotten is
shown again. The history records are the exception, on purpose: they say what was forgotten,
for staff (docs/security.md)."""

from __future__ import annotations

from functools import reduce
from operator import or_

from django.db.models import Q

from chat.models import Message, ReplyVersion
from memory.models import MemoryEvent

FORGOTTEN_TEXT = "(forgotten)"


def forget_copies(*, user_id: int, forgotten: dict[str, set[int]], everything: bool = False):
    """``forgotten``: kind ("fact", "decision", "action_item", "summary", "message") to the
    ids gone; ``everything``: every memory and summary of the user's is."""

    def gone(kind: str, object_id) -> bool:
        if everything and kind != "message":
            return True
        return object_id in forgotten.get(kind, ())

    if not everything and not any(forgotten.values()):
        return
    _notices(user_id, gone)
    _reports(Message.objects.filter(conversation__user_id=user_id), gone)
    _reports(ReplyVersion.objects.filter(reply__conversation__user_id=user_id), gone)


def forget_notices(*, user_id: int, kind: str, ids) -> None:
    """A deleted memory leaves the "Remembered" notices too (their Undo would bring back what
    the user just removed); the reports keep it until the user forgets, which scans them."""
    ids = {int(i) for i in ids}
    if ids:
        _notices(user_id, lambda k, object_id: k == kind and object_id in ids, naming=ids)


def notices_naming(ids) -> Q:
    """The notices whose items name one of ``ids`` (of any kind): ``"id": 5`` followed by the
    item's next key or its end in their JSON text, as both PostgreSQL and SQLite write it. The
    caller checks each item's kind and id; this only spares reading every notice."""
    patterns = (f'"id": {int(i)}{end}' for i in ids for end in (",", "}"))
    return reduce(or_, (Q(items__icontains=pattern) for pattern in patterns))


def _notices(user_id: int, gone, naming: set[int] | None = None) -> None:
    events = MemoryEvent.objects.filter(user_id=user_id)
    if naming is not None:
        events = events.filter(notices_naming(naming))
    for event in events.only("items").iterator():
        kept = [item for item in event.items if not gone(item.get("kind"), item.get("id"))]
        if len(kept) == len(event.items):
            continue
        if kept:
            event.items = kept
            event.save(update_fields=["items"])
        else:
            event.delete()


def _reports(queryset, gone) -> None:
    rows = queryset.filter(context_report__isnull=False).only("context_report")
    for row in rows.iterator(chunk_size=500):
        report = row.context_report
        if isinstance(report, dict) and _blank_report(report, gone):
            type(row).objects.filter(pk=row.pk).update(context_report=report)


def _blank_report(report: dict, gone) -> bool:
    changed = False
    for key in ("memories", "memories_left_out"):
        for item in report.get(key) or []:
            forgotten = isinstance(item, dict) and gone(item.get("kind"), item.get("id"))
            if forgotten and item.get("text") != FORGOTTEN_TEXT:
                item["text"], item["why"], item["source"] = FORGOTTEN_TEXT, "", ""
                changed = True
    summary = report.get("summary")
    if (
        isinstance(summary, dict)
        and gone("summary", summary.get("id"))
        and summary.get("text", FORGOTTEN_TEXT) != FORGOTTEN_TEXT
    ):
        summary["text"] = FORGOTTEN_TEXT
        changed = True
    return changed
