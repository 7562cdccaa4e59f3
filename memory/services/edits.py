"""Edits of facts, decisions and action items by a person (staff, or the user on their own
memory): each one a history record naming ``actor`` and ``reason``. The rules live here, so
whoever edits gets the same ones: a normalised duplicate key, one decision or action item per
text, a reactivated fact no longer superseded, a restore that never points at a deleted row.

The user's own edits (``memory_edit_text``, ``action_item_set_done``) mark the memory
"edited by the user", which extraction never touches again; ``memory_keep`` and
``memory_discard`` answer a suggestion (memory mode "ask first"); ``memory_add`` is a memory
the user types. A deleted memory takes its embeddings with it: nothing of it is left for
retrieval; a new or changed text gets its vector from a background task (``embedding_soon``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from audit import attribute
from chat.models import Conversation
from memory import extraction
from memory.models import ActionItem, Decision, Embedding, Fact, KeptMemory, MemoryState
from memory.search.scope import memories_in, readable
from memory.services.copies import forget_notices

BULK_MAX = 1000
TEXT_FIELD: dict[type[KeptMemory], str] = {Fact: "text", Decision: "what", ActionItem: "what"}


def _check_unique_key(obj: KeptMemory) -> None:
    """Decisions and action items are unique per user and scope by their normalised text."""
    model = type(obj)
    if model is Fact:
        return
    clash = (
        # Q: its None is IS NULL (everywhere), which the typed keyword lookup does not take.
        model.objects.filter(
            Q(project_id=obj.project_id), user_id=obj.user_id, dedupe_key=obj.dedupe_key
        )
        .exclude(pk=obj.pk)
        .values_list("pk", flat=True)
        .first()
    )
    if clash is not None:
        label = model._meta.verbose_name
        where = "in this project" if obj.project_id else "everywhere"
        raise ValidationError(
            {TEXT_FIELD[model]: f"This user already has that {label} {where} (#{clash})."}
        )


def embedding_soon(memory) -> None:
    """Once this transaction commits, a background task computes the vector of ``memory``'s
    text (the database dropped the old one when the text changed): off the request's path,
    and without waiting for a later chat turn's job."""
    from memory.search import embeddings
    from memory.tasks import embed_memories

    if not embeddings.enabled():
        return
    key = [KIND_OF[type(memory)], memory.pk]
    transaction.on_commit(lambda: embed_memories.enqueue([key]))


def memory_update(*, memory, actor, changes: Mapping[str, Any], reason: str = "edited"):
    """Apply an edit. Nothing changed: nothing saved, no history. Raises ValidationError."""
    model = type(memory)
    text_field = TEXT_FIELD[model]
    with transaction.atomic():
        obj = model.objects.select_for_update().get(pk=memory.pk)
        changed = [name for name, value in changes.items() if getattr(obj, name) != value]
        if not changed:
            return obj
        for name in changed:
            setattr(obj, name, changes[name])
        if text_field in changed:
            obj.dedupe_key = extraction.normalise_key(getattr(obj, text_field))
        if model is Fact and "subject" in changed and obj.subject:
            obj.subject = extraction.normalise_key(obj.subject)
        if model is Fact and "status" in changed and obj.status == Fact.Status.ACTIVE:
            obj.superseded_by = None
        obj.updated_at = timezone.now()
        obj.full_clean(exclude=["user", "conversation", "dedupe_key"], validate_constraints=False)
        _check_unique_key(obj)
        attribute(obj, actor=actor, reason=f"{reason}: {', '.join(changed)}")
        obj.save()
        if text_field in changed:
            embedding_soon(obj)
    return obj


def fact_set_pinned(*, fact: Fact, pinned: bool, actor, by: str = "") -> Fact:
    """Pin or unpin; ``by`` says who in the history ("by staff")."""
    with transaction.atomic():
        fact = Fact.objects.select_for_update().get(pk=fact.pk)
        if fact.pinned != pinned:
            fact.pinned = pinned
            fact.updated_at = timezone.now()
            verb = "pinned" if pinned else "unpinned"
            attribute(fact, actor=actor, reason=f"{verb} {by}".strip())
            fact.save(update_fields=["pinned", "updated_at"])
    return fact


KIND_OF: dict[type[KeptMemory], str] = {
    Fact: "fact",
    Decision: "decision",
    ActionItem: "action_item",
}


def _forget_vectors(model, ids) -> None:
    Embedding.objects.filter(kind=KIND_OF[model], object_id__in=list(ids)).delete()


def memory_delete(*, memory, actor, reason: str = "deleted", keep_notices: bool = False) -> None:
    """``keep_notices``: an Undo deletes through here and marks its own notice undone."""
    with transaction.atomic():
        attribute(memory, actor=actor, reason=reason)
        pk = memory.pk
        memory.delete()
        _forget_vectors(type(memory), [pk])
        if not keep_notices:
            forget_notices(user_id=memory.user_id, kind=KIND_OF[type(memory)], ids=[pk])


def memories_delete(*, model: type[KeptMemory], ids: Iterable[int], actor, by: str = "") -> int:
    """Delete many, one by one so that each gets its own history record naming ``actor``."""
    ids = sorted({int(i) for i in ids})
    if len(ids) > BULK_MAX:
        raise ValidationError(f"At most {BULK_MAX} memories at once.")
    deleted, user_ids = 0, set()
    reason = f"deleted {by} (bulk, {len(ids)} selected)".replace("  ", " ")
    with transaction.atomic():
        for obj in model.objects.filter(pk__in=ids).order_by("pk"):
            attribute(obj, actor=actor, reason=reason)
            user_ids.add(obj.user_id)
            obj.delete()
            deleted += 1
        _forget_vectors(model, ids)
        for user_id in user_ids:
            forget_notices(user_id=user_id, kind=KIND_OF[model], ids=ids)
    return deleted


def memory_revert(*, record, actor, reason: str = ""):
    """Restore a memory to the state of one of its history records (recreating it if it was
    deleted). The restore is itself a new history record naming ``actor`` (and ``reason``,
    else the version's date)."""
    with transaction.atomic():
        restored = record.instance  # built from the record (fields it does not track: current)
        model = type(restored)
        if not get_user_model().objects.filter(pk=restored.user_id).exists():
            raise ValidationError("The memory's owner no longer exists.")
        if (
            restored.conversation_id
            and not Conversation.objects.filter(pk=restored.conversation_id).exists()
        ):
            restored.conversation_id = None
        if (
            model is Fact
            and restored.superseded_by_id
            and not Fact.objects.filter(pk=restored.superseded_by_id).exists()
        ):
            restored.superseded_by_id = None
        _check_unique_key(restored)
        exists = model.objects.select_for_update().filter(pk=restored.pk).exists()
        restored.updated_at = timezone.now()
        when = timezone.localtime(record.history_date).strftime("%Y-%m-%d %H:%M:%S")
        attribute(restored, actor=actor, reason=reason or f"restored to the version of {when}")
        restored.save(force_insert=not exists, force_update=exists)
    return restored


# -- the user on their own memory --------------------------------------------------------------

BY_USER = "by the user"


def memory_edit_text(*, memory, actor, text: str):
    """The user corrects a memory's text: it is theirs now ("edited by the user"), never
    touched by extraction again. A suggestion edited is kept with the new text. Raises
    ValidationError (empty, or a duplicate)."""
    text = text.strip()
    if not text:
        raise ValidationError({TEXT_FIELD[type(memory)]: "The text cannot be empty."})
    with transaction.atomic():
        current = type(memory).objects.select_for_update().get(pk=memory.pk)
        if getattr(current, TEXT_FIELD[type(memory)]) == text:
            return current  # saved unchanged: no edit, no history record
        obj = memory_update(
            memory=memory,
            actor=actor,
            changes={TEXT_FIELD[type(memory)]: text, "state": MemoryState.EDITED},
            reason=f"edited {BY_USER}",
        )
        if isinstance(obj, Fact) and memory.state == MemoryState.SUGGESTED:
            _supersede_same_subject(obj, actor)
    return obj


def memory_add(
    *,
    user,
    kind: str,
    text: str,
    category: str = Fact.Category.OTHER,
    suggest: bool = False,
    project=None,
    due_date=None,
):
    """A memory the user types on the Memory page (or their client sends through MCP): theirs
    ("added by the user", never touched by extraction), found by search and the context at
    once (the index follows its row), its vector made by a background task. ``kind``: "fact",
    "decision" or "action_item". ``suggest`` (memory mode "ask first"): it waits as a
    suggestion for the user to keep. ``project``: one of the user's projects (None:
    everywhere); ``due_date``: an action item's. Raises ValidationError: an unknown kind or
    category, empty text, one they already have, another user's project."""
    model = {kind_: model_ for model_, kind_ in KIND_OF.items()}.get(kind)
    if model is None:
        raise ValidationError({"kind": "Choose a fact, a decision or an action item."})
    text = " ".join((text or "").split())
    if not text:
        raise ValidationError({"text": "Write what the assistant should remember."})
    key = extraction.normalise_key(text)
    if not key:
        raise ValidationError({"text": "Write words, not only punctuation."})
    if project is not None and project.user_id != user.pk:
        raise ValidationError({"project": "No such project."})
    project_id = project.pk if project is not None else None
    same = model.objects.filter(user=user, dedupe_key=key)
    if model is Fact:
        # A fact the conversations of that scope already read (everywhere's too).
        same = same.filter(memories_in(readable(project_id)), status=Fact.Status.ACTIVE)
    else:
        same = same.filter(Q(project_id=project_id))
    if same.exists():
        label = model._meta.verbose_name
        raise ValidationError({"text": f"You already have this {label}."})
    fields: dict[str, object] = {TEXT_FIELD[model]: text}
    if due_date is not None and model is ActionItem:
        fields.update(due_date=due_date)
    if model is Fact:
        if category not in Fact.Category.values:
            raise ValidationError({"category": "Choose one of the categories."})
        fields.update(category=category, importance=0.8)
    elif model is Decision:
        fields.update(decided_at=timezone.now())
    else:
        fields.update(owner="user")
    now = timezone.now()
    state = MemoryState.SUGGESTED if suggest else MemoryState.ADDED
    obj = model(
        user=user,
        dedupe_key=key,
        state=state,
        project=project,
        created_at=now,
        updated_at=now,
        **fields,
    )
    obj.full_clean(
        exclude=["user", "conversation", "project", "dedupe_key"], validate_constraints=False
    )
    with transaction.atomic():
        attribute(obj, actor=user, reason="suggested" if suggest else f"added {BY_USER}")
        obj.save()
        if not suggest:  # a suggestion enters the index when it is kept (memory_keep)
            embedding_soon(obj)
    return obj


def action_item_set_done(*, item: ActionItem, actor, done: bool) -> ActionItem:
    """Mark an action item done, or reopen it (open again)."""
    status = ActionItem.Status.DONE if done else ActionItem.Status.OPEN
    current = ActionItem.objects.get(pk=item.pk)
    if current.status == status:
        return current  # already so: no history record
    return memory_update(
        memory=item,
        actor=actor,
        changes={"status": status, "state": MemoryState.EDITED},
        reason=f"{'marked done' if done else 'reopened'} {BY_USER}",
    )


def memory_keep(*, memory, actor):
    """Keep a suggestion: from now on it is recalled like any memory; a kept fact supersedes
    the active facts about the same subject (the user chose it over them)."""
    with transaction.atomic():
        model = type(memory)
        obj = model.objects.select_for_update().get(pk=memory.pk)
        if obj.state != MemoryState.SUGGESTED:
            return obj
        obj.state = MemoryState.KEPT
        obj.updated_at = timezone.now()
        attribute(obj, actor=actor, reason=f"kept {BY_USER}")
        obj.save(update_fields=["state", "updated_at"])
        if model is Fact:
            _supersede_same_subject(obj, actor)
        embedding_soon(obj)  # it enters the index now
    return obj


def memory_discard(*, memory, actor) -> None:
    """Discard a suggestion: deleted (its history keeps it), never recalled."""
    if memory.state != MemoryState.SUGGESTED:
        raise ValidationError("Only a suggestion can be discarded; delete a memory instead.")
    memory_delete(memory=memory, actor=actor, reason=f"suggestion discarded {BY_USER}")


def _supersede_same_subject(fact: Fact, actor) -> None:
    from memory.services.memories import fact_supersede

    if not fact.subject:
        return
    older = (
        # Of its own scope only: a project's fact does not retire one everywhere knows.
        Fact.objects.filter(
            user_id=fact.user_id,
            subject=fact.subject,
            status=Fact.Status.ACTIVE,
            project=fact.project_id,  # None: IS NULL
        )
        .exclude(pk=fact.pk)
        .exclude(state=MemoryState.SUGGESTED)
    )
    for old in older:
        fact_supersede(fact=old, by=fact, actor=actor, reason=f"replaced {BY_USER}")
