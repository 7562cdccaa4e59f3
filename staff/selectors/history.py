"""The audit trail of memories: who changed what, when (django-simple-history records)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.http import Http404

from staff.kinds import KINDS, Kind

TYPE_LABELS = {"+": "created", "~": "changed", "-": "deleted"}
# Kept by the code from the fields a person edits: a change of text shows once, as the text.
DERIVED_FIELDS = ("dedupe_key",)


@dataclass
class Change:
    field: str
    old: object
    new: object


@dataclass
class HistoryEntry:
    kind: Kind
    # The historical record: a model simple-history makes at run time (it ships no types).
    record: Any
    changes: list[Change] = field(default_factory=list)
    is_latest: bool = False
    owner: str = ""  # usernames, filled by recent_changes
    editor: str = ""

    @property
    def type_label(self) -> str:
        return TYPE_LABELS.get(self.record.history_type, self.record.history_type)

    @property
    def text(self) -> str:
        return getattr(self.record, self.kind.text_field)


def memory_history(*, kind: Kind, memory_id: int) -> list[HistoryEntry]:
    """Every recorded version of one memory, newest first, each with what it changed."""
    records = list(
        kind.history_model.objects.filter(id=memory_id)
        .select_related("history_user")
        .order_by("-history_date", "-history_id")
    )
    if not records:
        raise Http404("No history for that memory.")
    entries = []
    for index, record in enumerate(records):
        older = records[index + 1] if index + 1 < len(records) else None
        changes = []
        if older is not None and record.history_type == "~":
            delta = record.diff_against(older, excluded_fields=DERIVED_FIELDS)
            changes = [Change(c.field, c.old, c.new) for c in delta.changes]
        entries.append(
            HistoryEntry(kind=kind, record=record, changes=changes, is_latest=index == 0)
        )
    return entries


def history_record_get(*, kind: Kind, memory_id: int, history_id: int):
    record = (
        kind.history_model.objects.filter(id=memory_id, history_id=history_id)
        .select_related("history_user")
        .first()
    )
    if record is None:
        raise Http404("No such version.")
    return record


def recent_changes(
    *,
    before: datetime | None = None,
    kind_slug: str = "",
    user_id: int | None = None,
    limit: int = 50,
) -> list[HistoryEntry]:
    """The newest changes to memories across kinds (keyset: older than ``before``).

    Each kind's history table is read newest first through its ``history_date`` index, at most
    ``limit`` rows each, and the results merged.
    """
    kinds = [KINDS[kind_slug]] if kind_slug in KINDS else list(KINDS.values())
    entries = []
    for kind in kinds:
        # No join here: joined to the users, the newest rows are no longer read straight off
        # the history_date index (PostgreSQL then scans and sorts the whole table).
        qs = kind.history_model.objects.all()
        if before is not None:
            qs = qs.filter(history_date__lt=before)
        if user_id is not None:
            qs = qs.filter(user_id=user_id)
        for record in qs.order_by("-history_date", "-history_id")[:limit]:
            entries.append(HistoryEntry(kind=kind, record=record))
    entries.sort(key=lambda e: e.record.history_date, reverse=True)
    entries = entries[:limit]
    ids = {e.record.user_id for e in entries} | {e.record.history_user_id for e in entries}
    names = dict(get_user_model().objects.filter(pk__in=ids - {None}).values_list("pk", "username"))
    for entry in entries:
        entry.owner = names.get(entry.record.user_id, "")
        entry.editor = names.get(entry.record.history_user_id, "")
    return entries
