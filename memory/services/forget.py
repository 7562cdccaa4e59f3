"""A user forgetting what was learned: from one conversation, one branch of it, or everything.

What was learned is the long-term memory (facts, decisions, action items) and the summaries.
A memory also supported by another conversation (a source message there, or made there) is
kept and loses only this conversation's sources. Every deletion is a history record naming the
actor; the search index follows through its triggers, in the same transaction.

A conversation that stays gets a blank summary version covering what it held (its model
``Summary.FORGOTTEN``), so the next summary run does not read the forgotten messages again and
re-learn them, and search recalls them no more (``memory.selectors.forgotten_through``). The
context build treats a blank summary as none, so the conversation itself still shows its
recent messages.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import models, transaction
from django.db.models import Max
from django.utils import timezone

from audit import acting_as, attribute
from chat.models import Conversation, Message
from memory.extraction import Extraction
from memory.models import ActionItem, Decision, Embedding, Fact, KeptMemory, Summary
from memory.services.copies import forget_copies
from memory.services.summaries import summary_create

FORGETTABLE: tuple[tuple[str, type[KeptMemory], str], ...]
FORGETTABLE = (("facts", Fact, "fact"), ("decisions", Decision, "decision"))
FORGETTABLE += (("action_items", ActionItem, "action_item"),)
CHUNK = 500  # ids per IN (...): well under SQLite's variable limit


@dataclass
class ForgetPlan:
    """What forgetting a conversation would do: ids to delete, and ids that lose a source."""

    delete: dict[str, list[int]] = field(default_factory=dict)
    detach: dict[str, list[int]] = field(default_factory=dict)
    summaries: int = 0

    @property
    def memories(self) -> int:
        return sum(len(ids) for ids in self.delete.values())

    @property
    def kept(self) -> int:
        return sum(len(ids) for ids in self.detach.values())


@dataclass
class Forgotten:
    deleted: dict[str, int] = field(default_factory=dict)
    kept: int = 0  # memories that lost a source but are supported elsewhere
    summaries: int = 0

    @property
    def memories(self) -> int:
        return sum(self.deleted.values())

    def describe(self) -> str:
        parts = [f"{n} {name.replace('_', ' ')}" for name, n in self.deleted.items() if n]
        if self.summaries:
            parts.append(f"{self.summaries} summary version{'s' if self.summaries != 1 else ''}")
        text = ", ".join(parts) or "nothing"
        if self.kept:
            text += f"; {self.kept} kept (also learned elsewhere), without this conversation"
        return text


def id_chunks(ids: list[int]) -> Iterable[list[int]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]


def conversation_forget_plan(*, conversation: Conversation) -> ForgetPlan:
    plan = ForgetPlan(summaries=Summary.objects.filter(conversation=conversation).count())
    for name, model, _kind in FORGETTABLE:
        owner = f"{model._meta.model_name}_id"
        through = model.source_messages.through.objects
        made_here = set(
            model.objects.filter(conversation=conversation).values_list("pk", flat=True)
        )
        sourced_here = set(
            through.filter(message__conversation=conversation).values_list(owner, flat=True)
        )
        touched = made_here | sourced_here
        elsewhere = set(
            through.filter(**{f"{owner}__in": touched})
            .exclude(message__conversation=conversation)
            .values_list(owner, flat=True)
        )
        # Made in another conversation (the row's own link): supported there too.
        elsewhere |= set(
            model.objects.filter(pk__in=sourced_here - made_here)
            .exclude(conversation=None)
            .values_list("pk", flat=True)
        )
        plan.delete[name] = sorted(touched - elsewhere)
        plan.detach[name] = sorted(touched & elsewhere)
    return plan


def _history_of_deletion(model, objs, *, actor, reason: str) -> None:
    """The '-' record of each row, written in bulk (simple-history's signal writes one at a
    time: minutes for 10k memories on a busy PostgreSQL)."""
    history = model.history.model
    when = timezone.now()
    history.objects.bulk_create(
        [
            history(
                history_date=when,
                history_type="-",
                history_user=actor,
                history_change_reason=reason[:100],
                **{f.attname: getattr(obj, f.attname) for f in history.tracked_fields},
            )
            for obj in objs
        ],
        batch_size=CHUNK,
    )


def _rows_delete(model, chunk: list[int], keep_links_of: set[int]) -> int:
    """DELETE the rows, doing first what Django's collector would for what points at them
    (m2m links deleted, SET_NULL links nulled, anything else deleted the ordinary way), but
    with no per-row signals. ``keep_links_of``: rows going too (no need to null their links)."""
    for m2m in model._meta.many_to_many:
        m2m.remote_field.through.objects.filter(**{f"{m2m.m2m_field_name()}__in": chunk}).delete()
    for relation in model._meta.related_objects:
        if relation.many_to_many:
            through = relation.through.objects
            through.filter(**{f"{relation.field.m2m_reverse_field_name()}__in": chunk}).delete()
            continue
        pointing = relation.related_model._base_manager.filter(
            **{f"{relation.field.name}__in": chunk}
        )
        if relation.on_delete is models.SET_NULL:
            if relation.related_model is model:
                pointing = pointing.exclude(pk__in=[pk for pk in chunk if pk in keep_links_of])
            pointing.update(**{relation.field.name: None})
        else:
            pointing.delete()
    return model._base_manager.filter(pk__in=chunk)._raw_delete(model._base_manager.db)


def memories_delete_with_history(model, kind: str, ids: list[int], *, actor, reason: str) -> int:
    """Delete memories, each with a history record naming ``actor`` and ``reason``."""
    deleted = 0
    going = set(ids)
    for chunk in id_chunks(ids):
        _history_of_deletion(model, model.objects.filter(pk__in=chunk), actor=actor, reason=reason)
        deleted += _rows_delete(model, chunk, going)
        Embedding.objects.filter(kind=kind, object_id__in=chunk).delete()
    return deleted


def _summaries_delete(ids: list[int], *, actor, reason: str) -> None:
    """Few rows: the ordinary delete (its signal writes the history), then the reason."""
    started = timezone.now()
    with acting_as(actor):
        for chunk in id_chunks(ids):
            Summary.objects.filter(pk__in=chunk).delete()
            Embedding.objects.filter(kind="summary", object_id__in=chunk).delete()
    for chunk in id_chunks(ids):
        Summary.history.model.objects.filter(
            id__in=chunk, history_type="-", history_date__gte=started
        ).update(history_change_reason=reason[:100], history_user=actor)


def memories_erase(*, user) -> None:
    """An account's memories gone with no history record (its history is being erased too)."""
    for _name, model, kind in FORGETTABLE:
        ids = list(model.objects.filter(user=user).values_list("pk", flat=True))
        for chunk in id_chunks(ids):
            _rows_delete(model, chunk, set(ids))
            Embedding.objects.filter(kind=kind, object_id__in=chunk).delete()


def _detach(model, ids: list[int], conversation: Conversation, *, actor, reason: str) -> None:
    """Take this conversation's sources off memories that other conversations support; one
    that named this conversation as its own names the earliest remaining source's instead."""
    owner = f"{model._meta.model_name}_id"
    through = model.source_messages.through.objects
    through.filter(**{f"{owner}__in": ids}, message__conversation=conversation).delete()
    now = timezone.now()
    for obj in model.objects.filter(pk__in=ids).order_by("pk"):
        if obj.conversation_id == conversation.pk:
            obj.conversation_id = (
                Message.objects.filter(pk__in=obj.source_messages.values("pk"))
                .order_by("created_at", "id")
                .values_list("conversation_id", flat=True)
                .first()
            )
        obj.updated_at = now
        attribute(obj, actor=actor, reason=reason)
        obj.save(update_fields=["conversation", "updated_at"])


def _summaries_forget(conversation: Conversation, *, actor, reason: str, keep_place: bool) -> int:
    ids = list(Summary.objects.filter(conversation=conversation).values_list("pk", flat=True))
    _summaries_delete(ids, actor=actor, reason=reason)
    last = Message.objects.filter(conversation=conversation).aggregate(last=Max("id"))["last"]
    if keep_place and last and not conversation.temporary:
        marker = summary_create(
            conversation=conversation,
            extraction=Extraction(summary=""),
            covered_through=last,
            message_count=Message.objects.filter(conversation=conversation).count(),
            source=Summary.Source.AUTO,
            created_by=actor,
            model=Summary.FORGOTTEN,
        )
        # Its creation record names who forgot, not a summary run.
        Summary.history.model.objects.filter(id=marker.pk).update(
            history_user=actor, history_change_reason=f"blank: {reason}"[:100]
        )
    return len(ids)


def conversation_forget(*, conversation: Conversation, actor, keep_place: bool = True) -> Forgotten:
    """Forget what was learned in ``conversation`` (see the module docstring). ``keep_place``
    False: the conversation is about to be deleted, no blank summary is needed."""
    reason = f"forgotten by the user (conversation #{conversation.pk})"
    result = Forgotten()
    with transaction.atomic():
        # Serialises with a summary run's swap, which locks the same row.
        Conversation.objects.select_for_update().filter(pk=conversation.pk).first()
        plan = conversation_forget_plan(conversation=conversation)
        for name, model, kind in FORGETTABLE:
            _detach(model, plan.detach[name], conversation, actor=actor, reason=reason)
            result.deleted[name] = memories_delete_with_history(
                model, kind, plan.delete[name], actor=actor, reason=reason
            )
        result.kept = plan.kept
        summary_ids = set(conversation.summaries.values_list("pk", flat=True))
        result.summaries = _summaries_forget(
            conversation, actor=actor, reason=reason, keep_place=keep_place
        )
        forgotten = {kind: set(plan.delete[name]) for name, _model, kind in FORGETTABLE}
        forgotten["summary"] = summary_ids
        if not keep_place:  # the conversation goes: its messages recalled elsewhere too
            forgotten["message"] = set(conversation.messages.values_list("pk", flat=True))
        forget_copies(user_id=conversation.user_id, forgotten=forgotten)
    return result


def branch_forget_plan(*, messages: models.QuerySet) -> ForgetPlan:
    """What forgetting one branch of a conversation would do (``messages``: its messages, a
    query of ``chat.Message``, ``chat.branches.branch_messages``): the memories whose every
    source is one of them are deleted; those also learned from another message, or made in
    another conversation, lose only these sources. The summary is the branch shown's already
    (``summary_follow_branch``)."""
    plan = ForgetPlan()
    ids = messages.values("pk")
    for name, model, _kind in FORGETTABLE:
        owner = f"{model._meta.model_name}_id"
        through = model.source_messages.through.objects
        touched = set(through.filter(message_id__in=ids).values_list(owner, flat=True))
        elsewhere = set(
            through.filter(**{f"{owner}__in": touched})
            .exclude(message_id__in=ids)
            .values_list(owner, flat=True)
        )
        # Made in another conversation (the row's own link): supported there too.
        elsewhere |= set(
            model.objects.filter(pk__in=touched)
            .exclude(conversation=None)
            .exclude(conversation_id__in=messages.values("conversation_id"))
            .values_list("pk", flat=True)
        )
        plan.delete[name] = sorted(touched - elsewhere)
        plan.detach[name] = sorted(touched & elsewhere)
    return plan


def branch_forget(*, conversation: Conversation, messages: models.QuerySet, actor) -> Forgotten:
    """Forget what only this branch of ``conversation`` taught (see ``branch_forget_plan``)."""
    reason = f"forgotten by the user (a branch of conversation #{conversation.pk})"
    result = Forgotten()
    with transaction.atomic():
        Conversation.objects.select_for_update().filter(pk=conversation.pk).first()
        plan = branch_forget_plan(messages=messages)
        ids = messages.values("pk")
        for name, model, kind in FORGETTABLE:
            owner = f"{model._meta.model_name}_id"
            through = model.source_messages.through.objects
            through.filter(**{f"{owner}__in": plan.detach[name]}, message_id__in=ids).delete()
            for obj in model.objects.filter(pk__in=plan.detach[name]).order_by("pk"):
                attribute(obj, actor=actor, reason=reason)
                obj.updated_at = timezone.now()
                obj.save(update_fields=["updated_at"])
            result.deleted[name] = memories_delete_with_history(
                model, kind, plan.delete[name], actor=actor, reason=reason
            )
        result.kept = plan.kept
        forgotten = {kind: set(plan.delete[name]) for name, _model, kind in FORGETTABLE}
        forget_copies(user_id=conversation.user_id, forgotten=forgotten)
    return result


def memories_forget_all(*, user, actor) -> Forgotten:
    """Forget every memory and summary of ``user``. Their conversations stay, each with a
    blank summary so that nothing in them is learned again."""
    reason = "everything forgotten by the user"
    result = Forgotten()
    with transaction.atomic():
        conversations = list(
            Conversation.objects.select_for_update().filter(user=user).order_by("pk")
        )
        for name, model, kind in FORGETTABLE:
            ids = list(model.objects.filter(user=user).values_list("pk", flat=True))
            result.deleted[name] = memories_delete_with_history(
                model, kind, ids, actor=actor, reason=reason
            )
        for conversation in conversations:
            result.summaries += _summaries_forget(
                conversation, actor=actor, reason=reason, keep_place=True
            )
        forget_copies(user_id=user.pk, forgotten={}, everything=True)
    return result
