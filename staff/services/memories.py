"""Staff edits of facts, decisions and action items, every one kept in their history."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from audit import attribute
from chat.models import Conversation
from memory import extraction
from memory.models import Fact
from staff.kinds import Kind

BULK_MAX = 1000


def _check_unique_key(kind: Kind, obj) -> None:
    """Decisions and action items are unique per user by their normalised text."""
    if kind.slug == "fact":
        return
    clash = (
        kind.model.objects.filter(user_id=obj.user_id, dedupe_key=obj.dedupe_key)
        .exclude(pk=obj.pk)
        .values_list("pk", flat=True)
        .first()
    )
    if clash is not None:
        raise ValidationError(
            {kind.text_field: f"This user already has that {kind.label.lower()} (#{clash})."}
        )


def memory_update(*, kind: Kind, memory, actor, changes: Mapping[str, Any]):
    """Apply a staff edit. Nothing changed: nothing saved, no history. Raises ValidationError."""
    with transaction.atomic():
        obj = kind.model.objects.select_for_update().get(pk=memory.pk)
        changed = [name for name, value in changes.items() if getattr(obj, name) != value]
        if not changed:
            return obj
        for name in changed:
            setattr(obj, name, changes[name])
        if kind.text_field in changed:
            obj.dedupe_key = extraction.normalise_key(kind.text_of(obj))
        if kind.slug == "fact" and "subject" in changed and obj.subject:
            obj.subject = extraction.normalise_key(obj.subject)
        if kind.slug == "fact" and "status" in changed and obj.status == Fact.Status.ACTIVE:
            obj.superseded_by = None
        obj.updated_at = timezone.now()
        obj.full_clean(exclude=["user", "conversation", "dedupe_key"], validate_constraints=False)
        _check_unique_key(kind, obj)
        attribute(obj, actor=actor, reason=f"edited by staff: {', '.join(changed)}")
        obj.save()
    return obj


def fact_set_pinned(*, fact: Fact, pinned: bool, actor) -> Fact:
    with transaction.atomic():
        fact = Fact.objects.select_for_update().get(pk=fact.pk)
        if fact.pinned != pinned:
            fact.pinned = pinned
            fact.updated_at = timezone.now()
            attribute(
                fact, actor=actor, reason="pinned by staff" if pinned else "unpinned by staff"
            )
            fact.save(update_fields=["pinned", "updated_at"])
    return fact


def memory_delete(*, kind: Kind, memory, actor) -> None:
    with transaction.atomic():
        attribute(memory, actor=actor, reason="deleted by staff")
        memory.delete()


def memories_delete(*, kind: Kind, ids: Iterable[int], actor) -> int:
    """Delete many, one by one so that each gets its own history record naming ``actor``."""
    ids = sorted({int(i) for i in ids})
    if len(ids) > BULK_MAX:
        raise ValidationError(f"At most {BULK_MAX} memories at once.")
    deleted = 0
    with transaction.atomic():
        for obj in kind.model.objects.filter(pk__in=ids).order_by("pk"):
            attribute(obj, actor=actor, reason=f"deleted by staff (bulk, {len(ids)} selected)")
            obj.delete()
            deleted += 1
    return deleted


def memory_revert(*, kind: Kind, record, actor):
    """Restore a memory to the state of one of its history records (recreating it if it was
    deleted). The restore is itself a new history record naming ``actor``."""
    model = kind.model
    with transaction.atomic():
        restored = record.instance  # built from the record (fields it does not track: current)
        if not get_user_model().objects.filter(pk=restored.user_id).exists():
            raise ValidationError("The memory's owner no longer exists.")
        if (
            restored.conversation_id
            and not Conversation.objects.filter(pk=restored.conversation_id).exists()
        ):
            restored.conversation_id = None
        if (
            kind.slug == "fact"
            and restored.superseded_by_id
            and not Fact.objects.filter(pk=restored.superseded_by_id).exists()
        ):
            restored.superseded_by_id = None
        _check_unique_key(kind, restored)
        exists = model.objects.select_for_update().filter(pk=restored.pk).exists()
        restored.updated_at = timezone.now()
        when = timezone.localtime(record.history_date).strftime("%Y-%m-%d %H:%M:%S")
        attribute(restored, actor=actor, reason=f"restored to the version of {when}")
        restored.save(force_insert=not exists, force_update=exists)
    return restored
