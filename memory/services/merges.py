"""Two memories that are one: a memory moved into a scope (a project, or everywhere) where the
same one already is (the same normalised text; for facts, both active) merges into it rather
than standing beside it as a duplicate (decisions and action items may not: one per user,
scope and key). The row already there keeps its id, its conversation and its vectors; it gains
the other's source messages, fills its gaps from it (context, rationale, owner, due date...)
and takes the newer word where both have one (a status). The user's word wins: a row the user
edited, added, kept or pinned stays so, its text kept over a learned one. Both histories stay:
the row already there records the merge, the moved one its deletion "merged into #N"."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.utils import timezone

from audit import attribute
from memory.models import ActionItem, Decision, Fact, KeptMemory, MemoryState
from memory.services.edits import TEXT_FIELD, embedding_soon, memory_delete

# Whose word a merged row rests on: the strongest of the two.
_STATE_RANK = {
    MemoryState.SUGGESTED: 0,
    MemoryState.LEARNED: 1,
    MemoryState.KEPT: 2,
    MemoryState.EDITED: 3,
    MemoryState.ADDED: 3,
}


def can_merge(obj) -> bool:
    """Whether ``obj`` may merge with the same memory at all (a superseded fact is history:
    it moves as it is)."""
    if not obj.dedupe_key:
        return False
    return type(obj) is not Fact or obj.status == Fact.Status.ACTIVE


def merge_target(obj, project_id: int | None):
    """The memory ``obj`` would merge into in the scope ``project_id`` (None: everywhere)."""
    return merge_targets([obj], project_id).get(obj.pk)


def merge_targets(objs: list, project_id: int | None) -> dict[int, Any]:
    """``merge_target`` for memories of one kind in one query: id -> the row each would merge
    into (those with none left out)."""
    mergeable = [obj for obj in objs if can_merge(obj)]
    if not mergeable:
        return {}
    model = type(mergeable[0])
    same = model.objects.filter(
        user_id__in={obj.user_id for obj in mergeable},
        project_id=project_id,
        dedupe_key__in={obj.dedupe_key for obj in mergeable},
    ).exclude(pk__in=[obj.pk for obj in mergeable])
    if model is Fact:
        same = same.filter(status=Fact.Status.ACTIVE)
    first: dict[tuple[int, str], Any] = {}
    for row in same.order_by("pk"):
        first.setdefault((row.user_id, row.dedupe_key), row)
    found = {obj.pk: first.get((obj.user_id, obj.dedupe_key)) for obj in mergeable}
    return {pk: row for pk, row in found.items() if row is not None}


def memory_merge(*, source, target, actor, reason: str):
    """Merge ``source`` into ``target`` (same user and kind) and delete ``source``. Returns
    ``target`` as saved."""
    model = type(source)
    label = model._meta.verbose_name
    with transaction.atomic():
        target = model.objects.select_for_update().get(pk=target.pk)
        source = model.objects.select_for_update().get(pk=source.pk)
        text_field = TEXT_FIELD[model]
        text_before = getattr(target, text_field)
        if source.protected and not target.protected:
            setattr(target, text_field, getattr(source, text_field))
        newer = source if source.updated_at > target.updated_at else target
        _MERGE_FIELDS[model](target, source, newer)
        if _STATE_RANK.get(source.state, 1) > _STATE_RANK.get(target.state, 1):
            target.state = source.state
        target.created_at = min(target.created_at, source.created_at)
        target.updated_at = timezone.now()
        attribute(target, actor=actor, reason=f"merged with {label} #{source.pk} ({reason})")
        target.save()
        target.source_messages.add(*source.source_messages.all())
        _MERGE_RELATIONS.get(model, _nothing)(target, source)
        memory_delete(
            memory=source, actor=actor, reason=f"{reason}: merged into {label} #{target.pk}"
        )
        if getattr(target, text_field) != text_before:
            embedding_soon(target)
    return target


def _fill(old: str, new: str) -> str:
    return old or new


def _union(a: list, b: list) -> list:
    return list(dict.fromkeys([*a, *b]))


def _fact(target: Fact, source: Fact, newer: Fact) -> None:
    target.mentions += source.mentions
    target.importance = max(target.importance, source.importance)
    target.pinned = target.pinned or source.pinned
    target.subject = _fill(target.subject, source.subject)


def _decision(target: Decision, source: Decision, newer: Decision) -> None:
    target.context = _fill(target.context, source.context)
    target.rationale = _fill(target.rationale, source.rationale)
    target.alternatives = _union(target.alternatives, source.alternatives)
    target.stakeholders = _union(target.stakeholders, source.stakeholders)
    target.status = newer.status
    dates = [d for d in (target.decided_at, source.decided_at) if d is not None]
    target.decided_at = min(dates) if dates else None


def _action_item(target: ActionItem, source: ActionItem, newer: ActionItem) -> None:
    target.owner = _fill(target.owner, source.owner)
    target.due_date = newer.due_date or target.due_date or source.due_date
    target.status = newer.status


def _nothing(target: KeptMemory, source: KeptMemory) -> None:
    return None


def _fact_relations(target: Fact, source: Fact) -> None:
    Fact.objects.filter(superseded_by=source).update(superseded_by=target)


def _action_relations(target: ActionItem, source: ActionItem) -> None:
    """What the moved item waited on, and what waited on it, is the kept one's."""
    target.depends_on.add(*source.depends_on.exclude(pk=target.pk))
    for blocked in source.blocks.exclude(pk=target.pk):
        blocked.depends_on.add(target)


# Each takes the kind it is filed under (Any: a dict cannot say so per key).
_MERGE_FIELDS: dict[type[KeptMemory], Callable[[Any, Any, Any], None]] = {
    Fact: _fact,
    Decision: _decision,
    ActionItem: _action_item,
}
_MERGE_RELATIONS: dict[type[KeptMemory], Callable[[Any, Any], None]] = {
    Fact: _fact_relations,
    ActionItem: _action_relations,
}
