"""Moving memory between a project and everywhere (issue 37).

``memory_move``: one fact, decision or action item to a project of its user or to everywhere
(``project=None``); where the same memory already is, the two merge into the row already there
(``memory.services.merges``: one per scope, both histories kept). ``conversation_move``: a
conversation into a project, out of one, or to another; what came only from it (the memories
``conversation_forget_plan`` would delete with it) and still in its old scope follows it (and
merges likewise), each move a history record naming the actor.
``project_empty``: what deleting a project does to what points at it, as the user chose:
``DELETE`` (its conversations forgotten and deleted, its memories deleted) or ``EVERYWHERE``
(all of it moved out, outside any project). ``project_learning_forget``: the same choice for
what the project learned (its memories and summaries), its conversations staying.

The index follows through its triggers (``memory.search.schema``): the rows are re-indexed in
their new scope, and their vectors, stored under the old one, are dropped; the vectors are
then stored again under the new scope here (``_carry_vectors``), as new rows, so that every
process's held matrices (``memory.search.vectors``) see the change. A temporary chat stays
outside every project.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from audit import attribute
from chat.models import Conversation, Message
from memory.models import ActionItem, Decision, Embedding, Fact, KeptMemory, Summary
from memory.search import scope as scoping
from memory.services.forget import (
    FORGETTABLE,
    conversation_forget,
    conversation_forget_plan,
    id_chunks,
    memories_delete_with_history,
)
from memory.services.merges import can_merge, memory_merge, merge_target, merge_targets

KINDS: dict[type[KeptMemory], str] = {Fact: "fact", Decision: "decision", ActionItem: "action_item"}
# What becomes of a project's conversations and memories (``project_empty``).
DELETE, EVERYWHERE = "delete", "everywhere"


@dataclass
class Moved:
    conversations: int = 0
    memories: dict[str, int] = field(default_factory=dict)


def _check_owner(user_id: int, project) -> None:
    if project is not None and project.user_id != user_id:
        # Another user's project is as good as none (the views answer 404 before this).
        raise ValidationError("No such project.")


def memory_move(*, obj, project, actor=None):
    """Move a fact, decision or action item to ``project`` (None: everywhere). Where the same
    memory already is there, the two merge (``memory.services.merges``). Returns the row that
    now holds it: ``obj``, or the one it merged into."""
    _check_owner(obj.user_id, project)
    project_id = project.pk if project is not None else None
    if obj.project_id == project_id:
        return obj
    return _move_one(obj, project_id, actor=actor, reason=_reason(project))


def _move_one(obj, project_id: int | None, *, actor, reason: str):
    kind = KINDS[type(obj)]
    with transaction.atomic():
        target = merge_target(obj, project_id)
        if target is not None:
            return memory_merge(source=obj, target=target, actor=actor, reason=reason)
        saved = _vectors_of(Q(kind=kind, object_id=obj.pk))
        obj.project_id = project_id
        obj.updated_at = timezone.now()
        attribute(obj, actor=actor, reason=reason)
        obj.save(update_fields=["project", "updated_at"])
        _carry_vectors(saved, scoping.of(project_id))
    return obj


def conversation_move(*, conversation: Conversation, project, actor=None) -> Moved:
    """Move ``conversation`` to ``project`` (None: outside any project), with what came only
    from it."""
    _check_owner(conversation.user_id, project)
    if conversation.temporary and project is not None:
        raise ValidationError("A temporary chat stays outside every project.")
    old_id = conversation.project_id
    new_id = project.pk if project is not None else None
    moved = Moved()
    if old_id == new_id:
        return moved
    with transaction.atomic():
        plan = conversation_forget_plan(conversation=conversation)
        messages = Message.objects.filter(conversation=conversation).values("id")
        summaries = Summary.objects.filter(conversation=conversation).values("id")
        saved = _vectors_of(
            Q(kind="message", object_id__in=messages) | Q(kind="summary", object_id__in=summaries)
        )
        conversation.project_id = new_id
        conversation.save(update_fields=["project"])
        moved.conversations = 1
        _carry_vectors(saved, scoping.of(new_id))
        for name, model, kind in FORGETTABLE:
            ids = plan.delete.get(name, [])
            count = 0
            for chunk in id_chunks(ids):
                objs = list(model.objects.filter(pk__in=chunk, project=old_id))  # None: IS NULL
                reason = _reason(project, conversation)
                _move_many(model, kind, objs, new_id, actor=actor, reason=reason)
                count += len(objs)
            moved.memories[name] = count
    return moved


def _move_many(model, kind: str, objs: list, project_id: int | None, *, actor, reason: str):
    """``memory_move`` for a chunk of one kind: those whose same memory is already in the
    new scope merge into it, one by one (``memory_merge``); the others move together: one read
    of their vectors (before the update, whose triggers drop them), one UPDATE, one insert of
    history records, one of vectors."""
    with transaction.atomic():
        targets = merge_targets(objs, project_id)
        moving, after, keys = [], [], set()
        for obj in objs:
            if obj.pk in targets:
                memory_merge(source=obj, target=targets[obj.pk], actor=actor, reason=reason)
            elif can_merge(obj) and obj.dedupe_key in keys:
                after.append(obj)  # the same as one moving now: merges into it once moved
            else:
                if can_merge(obj):
                    keys.add(obj.dedupe_key)
                moving.append(obj)
        saved = _vectors_of(Q(kind=kind, object_id__in=[obj.pk for obj in moving]))
        now = timezone.now()
        model.objects.filter(pk__in=[obj.pk for obj in moving]).update(
            project_id=project_id, updated_at=now
        )
        for obj in moving:
            obj.project_id, obj.updated_at = project_id, now
            attribute(obj, actor=actor, reason=reason)
        model.history.bulk_history_create(moving, update=True)
        _carry_vectors(saved, scoping.of(project_id))
        for obj in after:
            _move_one(obj, project_id, actor=actor, reason=reason)


def _reason(project, conversation: Conversation | None = None) -> str:
    where = f"project {project.name!r}" if project is not None else "everywhere"
    if conversation is not None:
        return f"moved to {where} with conversation {conversation.pk}"
    return f"moved to {where}"


def _vectors_of(condition: Q) -> list[Embedding]:
    return list(Embedding.objects.filter(condition))


def _carry_vectors(saved: list[Embedding], scope: int) -> None:
    """Store again, under the new scope and as new rows, the vectors the triggers dropped."""
    fresh = [
        Embedding(
            user_id=e.user_id,
            kind=e.kind,
            object_id=e.object_id,
            model=e.model,
            vector=e.vector,
            created_at=e.created_at,
            scope=scope,
        )
        for e in saved
    ]
    Embedding.objects.bulk_create(fresh, batch_size=500, ignore_conflicts=True)


def _check_keep(keep: str) -> None:
    if keep not in (DELETE, EVERYWHERE):
        raise ValidationError("Choose whether to delete them or move them to everywhere.")


def _project_memories_delete(project, *, actor, reason: str) -> None:
    for _name, model, kind in FORGETTABLE:
        ids = list(model.objects.filter(project=project).values_list("pk", flat=True))
        memories_delete_with_history(model, kind, ids, actor=actor, reason=reason)


def _project_memories_release(project, *, actor) -> None:
    reason = _reason(None)
    for _name, model, kind in FORGETTABLE:
        ids = list(model.objects.filter(project=project).values_list("pk", flat=True))
        for chunk in id_chunks(ids):
            objs = list(model.objects.filter(pk__in=chunk))
            _move_many(model, kind, objs, None, actor=actor, reason=reason)


def project_learning_forget(*, project, keep: str, actor) -> None:
    """What the project learned: ``DELETE`` forgets it (each conversation's summaries and the
    memories only from it, as ``conversation_forget``, then the project's other memories);
    ``EVERYWHERE`` moves its memories outside any project. Its conversations stay."""
    _check_keep(keep)
    with transaction.atomic():
        if keep == EVERYWHERE:
            _project_memories_release(project, actor=actor)
            return
        for conversation in project.conversations.all():
            conversation_forget(conversation=conversation, actor=actor)
        reason = f"forgotten by the user (project {project.name!r})"
        _project_memories_delete(project, actor=actor, reason=reason)


def project_empty(*, project, keep: str, actor) -> None:
    """Before a project is deleted: ``DELETE`` forgets and deletes its conversations and
    deletes its memories; ``EVERYWHERE`` moves its conversations (with what came only from
    them) and its memories outside any project. Nothing points at it afterwards (RESTRICT)."""
    _check_keep(keep)
    with transaction.atomic():
        for conversation in project.conversations.all():
            if keep == EVERYWHERE:
                conversation_move(conversation=conversation, project=None, actor=actor)
            else:
                conversation_forget(conversation=conversation, actor=actor, keep_place=False)
                conversation.delete()
        if keep == EVERYWHERE:
            _project_memories_release(project, actor=actor)
        else:
            reason = f"deleted with project {project.name!r}"
            _project_memories_delete(project, actor=actor, reason=reason)
