"""Long-term memories written from extractions: merged, never duplicated, each with its
source messages; and the memories that came only from one conversation.

Extraction never touches a protected memory (a pinned fact, or one the user edited). In memory
mode "ask first" (``suggest``) what is new waits as a suggestion (state "suggested", outside the
index) and supersedes nothing until the user keeps it. Each remember function notes what it
added or visibly changed in ``changes`` (``memory.services.events.EventItem``), so that the
turn can show "Remembered: ..." with an Undo.

What a project's conversation learns belongs to the project (``project``); outside any
project, to everywhere. A decision or action item merges only into the row of its own scope
(one per user, scope and key: the same one said in two projects is learned in each, and a
project's details never flow into a row another scope reads); a fact told again is any fact
the conversation reads, as its text is all a merge adds to.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from audit import attribute
from chat.models import Conversation, Message
from memory import extraction
from memory.extraction import Extraction
from memory.models import ActionItem, Decision, Fact, MemoryState
from memory.search import scope as scoping
from memory.search.scope import memories_in
from memory.services.events import (
    EventItem,
    history_id,
    memory_event_record,
    note,
    notice_message,
)
from profiles.models import UserProfile
from profiles.selectors import memory_mode

MEMORY_MODELS = (("facts", Fact), ("decisions", Decision), ("action_items", ActionItem))


def _suggesting(conversation: Conversation) -> bool:
    return memory_mode(conversation.user) == UserProfile.MemoryMode.ASK


def memories_merge(
    *,
    conversation: Conversation,
    extraction: Extraction,
    messages: list[Message],
    changes: list[EventItem] | None = None,
) -> dict[str, int]:
    """Merge, don't duplicate: a restated fact updates the existing one, a contradicting one
    supersedes it; the same decision or action item is one row. Returns counts by outcome;
    what was added or changed is appended to ``changes``."""
    user = conversation.user
    counts = {"created": 0, "updated": 0, "superseded": 0}
    suggest = _suggesting(conversation)

    def source(index: int) -> Message:
        return messages[min(max(index, 0), len(messages) - 1)]

    for fact in extraction.facts:
        outcome = fact_remember(
            user=user,
            conversation=conversation,
            category=fact.category,
            subject=fact.subject,
            text=fact.text,
            importance=fact.importance,
            source_message=source(fact.message_index),
            suggest=suggest,
            changes=changes,
        )
        counts[outcome] += 1
    for decision in extraction.decisions:
        created = decision_remember(
            user=user,
            conversation=conversation,
            what=decision.what,
            context=decision.context,
            rationale=decision.rationale,
            alternatives=decision.alternatives,
            stakeholders=decision.stakeholders,
            status=decision.status,
            source_message=source(decision.message_index),
            suggest=suggest,
            changes=changes,
        )
        counts["created" if created else "updated"] += 1
    for action in extraction.action_items:
        created = action_item_remember(
            user=user,
            conversation=conversation,
            what=action.what,
            owner=action.owner,
            due_date=action.due_date,
            status=action.status,
            source_message=source(action.message_index),
            suggest=suggest,
            changes=changes,
        )
        counts["created" if created else "updated"] += 1
    return counts


def memories_from_turn(*, conversation: Conversation, message: Message) -> dict[str, int]:
    """The light extractor, run after each reply: the clear statements of the user's new
    message become memories within the same turn: facts ("my daughter's name is Ada", "I live
    in Lyon", "remember that..."), decisions taken ("we decided to go to Porto in August") and
    action items ("I need to fix the fence by Friday"). The summary run, which reads the whole
    exchange, later merges into these rows (the same message read again is not told again;
    its own wording of the same item, from the same message, is the same row). What it added
    or changed is shown under the reply (a ``MemoryEvent``, with Undo)."""
    counts = {"created": 0, "updated": 0, "superseded": 0}
    if message.role != Message.Role.USER or not message.content.strip():
        return counts
    found = extraction.extract_turn(
        [{"role": message.role, "content": message.content, "model": message.model}],
        today=timezone.localdate(),
    )
    if not (found.facts or found.decisions or found.action_items):
        return counts
    changes: list[EventItem] = []
    with transaction.atomic():
        counts = memories_merge(
            conversation=conversation, extraction=found, messages=[message], changes=changes
        )
        memory_event_record(
            conversation=conversation, message=notice_message(message), items=changes
        )
    return counts


def fact_remember(
    *,
    user,
    conversation,
    category: str,
    subject: str,
    text: str,
    importance: float,
    source_message: Message | None = None,
    suggest: bool = False,
    changes: list[EventItem] | None = None,
) -> str:
    """Store a fact: 'updated' (told again), 'superseded' (contradicts one), or 'created'.
    A fact told again that the user pinned or edited is left exactly as it is; a new one that
    contradicts such a fact waits as a suggestion instead of superseding it."""
    key = extraction.normalise_key(text)
    subject = extraction.normalise_key(subject) if subject else ""
    now = timezone.now()
    project_id = _project_of(conversation)
    # Told again: any fact the conversation reads (everywhere's, its project's). Contradicted:
    # only a fact of its own scope (a project's fact does not retire one everywhere knows).
    active = Fact.objects.select_for_update().filter(
        memories_in(scoping.readable(project_id)), user=user, status=Fact.Status.ACTIVE
    )
    own_scope = (
        active.filter(project__isnull=True)
        if project_id is None
        else active.filter(project_id=project_id)
    )
    with transaction.atomic():
        same = active.filter(dedupe_key=key).first()
        if (
            same is not None
            and source_message is not None
            and same.source_messages.filter(pk=source_message.pk).exists()
        ):
            return "updated"  # the same message read again (a re-summarise): not told again
        if same is not None and same.protected:
            return "updated"  # the user's word stands: not even a mention is counted
        if same is not None:
            same.mentions += 1
            same.importance = max(same.importance, importance)
            same.updated_at = now
            same.save(update_fields=["mentions", "importance", "updated_at"])
            if source_message is not None:
                same.source_messages.add(source_message)
            return "updated"
        if _deleted_after(Fact, user, key, source_message, project_id):
            return "updated"  # the user deleted it after saying it: not learned again
        if _taken_from(source_message, active, subject, text):
            return "updated"  # this message's fact, already taken in other words
        older = list(own_scope.filter(subject=subject)) if subject else []
        if any(old.protected for old in older):
            suggest = True  # contradicts what the user pinned or typed: they decide
        fact = Fact.objects.create(
            user=user,
            conversation=conversation,
            project_id=project_id,
            category=category,
            subject=subject,
            text=text,
            importance=importance,
            dedupe_key=key,
            state=MemoryState.SUGGESTED if suggest else MemoryState.LEARNED,
            created_at=now,
            updated_at=now,
        )
        if source_message is not None:
            fact.source_messages.add(source_message)
        note(changes, fact, "suggested" if suggest else "added")
        if suggest:
            return "created"  # a suggestion supersedes nothing until it is kept
        for old in older:
            before = history_id(old, changes)
            old = fact_supersede(fact=old, by=fact)
            note(changes, old, "replaced", before=before)
        return "superseded" if older else "created"


def fact_supersede(*, fact: Fact, by: Fact | None = None, actor=None, reason: str = "") -> Fact:
    """Retire ``fact``, optionally naming the fact that replaces it: another fact of the same
    user (raises ValidationError otherwise). ``actor`` and ``reason``, when given, go into the
    history record. Returns the fact as saved (re-read under a row lock)."""
    if by is not None and (by.pk == fact.pk or by.user_id != fact.user_id):
        raise ValidationError("A fact can only be superseded by another fact of the same user.")
    with transaction.atomic():
        fact = Fact.objects.select_for_update().get(pk=fact.pk)
        fact.status = Fact.Status.SUPERSEDED
        fact.superseded_by = by
        fact.updated_at = timezone.now()
        attribute(fact, actor=actor, reason=reason)
        fact.save(update_fields=["status", "superseded_by", "updated_at"])
    return fact


# What a person sees of a merged decision or action item: a merge that changes none of it
# (the same thing said again) is not news.
DECISION_SHOWN = ("context", "rationale", "alternatives", "stakeholders", "status")
ACTION_SHOWN = ("owner", "due_date", "status")


def _waiting(obj) -> bool:
    return obj.state == MemoryState.SUGGESTED


def _visible(obj, fields: tuple[str, ...]) -> tuple:
    return tuple(repr(getattr(obj, name)) for name in fields)


def _taken_from(source_message: Message | None, active, subject: str, text: str) -> bool:
    """Whether an active fact of the user already came from ``source_message`` about the same
    subject or in nearly the same words: the turn's extractor said "The user lives in Lyon.",
    a summary model "Alice lives in Lyon." from the same message; one fact, not two (nor a
    second suggestion in "ask first")."""
    if source_message is None:
        return False
    for other_subject, other_text in active.filter(source_messages=source_message).values_list(
        "subject", "text"
    ):
        if (subject and other_subject == subject) or extraction.same_item(text, other_text):
            return True
    return False


def _scope(project_id: int | None) -> dict[str, Any]:
    """The lookup of one scope: a project's, or everywhere's (None: ``project IS NULL``)."""
    return {"project_id": project_id}


def _in_scope(model, user, project_id: int | None):
    """The user's rows of ``model`` in one scope."""
    return model.objects.filter(user=user, **_scope(project_id))


def _deleted_after(model, user, key: str, source_message: Message | None, project_id) -> bool:
    """Whether a memory with ``key`` was deleted (discarded, undone, deleted) after
    ``source_message`` was said, in the scope it is learned in (or when it came from the
    message's conversation): then reading that message again (the summary run after the
    turn's extractor, a re-summarise) does not bring it back; saying it again later does.
    Only asked before a new row is made, from the history's deletion records."""
    if source_message is None or source_message.created_at is None:
        return False
    if model is not Fact and _in_scope(model, user, project_id).filter(dedupe_key=key).exists():
        return False  # a row to merge into: nothing is created
    return (
        model.history.filter(
            user_id=user.pk,
            dedupe_key=key,
            history_type="-",
            history_date__gte=source_message.created_at,
        )
        .filter(Q(project_id=project_id) | Q(conversation_id=source_message.conversation_id))
        .exists()
    )


def _key_of(model, user, what: str, source_message: Message | None, project_id) -> str:
    """The row ``what`` merges into, in the scope it is learned in: its own key, or the key of
    a row of the same kind already taken from the same message in other words (the turn's
    extractor said "Go to Porto in August", a summary model "Travel to Porto in August"): one
    decision, not two."""
    key = extraction.normalise_key(what)
    rows = _in_scope(model, user, project_id)
    if source_message is None or rows.filter(dedupe_key=key).exists():
        return key
    taken = rows.filter(source_messages=source_message).values_list("dedupe_key", "what")
    for other_key, other in taken:
        if extraction.same_item(what, other):
            return other_key
    return key


def _project_of(conversation) -> int | None:
    """What a conversation learns belongs to its project (None: everywhere)."""
    return getattr(conversation, "project_id", None)


def _merge_text(old: str, new: str) -> str:
    return new if new and not old else old


def decision_remember(
    *,
    user,
    conversation,
    what: str,
    context: str = "",
    rationale: str = "",
    alternatives=(),
    stakeholders=(),
    status: str = Decision.Status.DECIDED,
    source_message: Message | None = None,
    suggest: bool = False,
    changes: list[EventItem] | None = None,
) -> bool:
    """The same decision extracted twice is one row (richer fields fill the gaps), unless the
    user edited it: then it is left as it is."""
    project_id = _project_of(conversation)
    key = _key_of(Decision, user, what, source_message, project_id)
    state = MemoryState.SUGGESTED if suggest else MemoryState.LEARNED
    if _deleted_after(Decision, user, key, source_message, project_id):
        return False
    with transaction.atomic():
        decision, created = Decision.objects.select_for_update().get_or_create(
            user=user,
            dedupe_key=key,
            **_scope(project_id),
            defaults={
                "conversation": conversation,
                "what": what,
                "context": context,
                "rationale": rationale,
                "alternatives": list(alternatives),
                "stakeholders": list(stakeholders),
                "status": status,
                "decided_at": source_message.created_at if source_message else timezone.now(),
                "state": state,
            },
        )
        if created:
            note(changes, decision, "suggested" if suggest else "added")
        elif decision.protected:
            return False
        else:
            before, shown = history_id(decision, changes), _visible(decision, DECISION_SHOWN)
            decision.context = _merge_text(decision.context, context)
            decision.rationale = _merge_text(decision.rationale, rationale)
            decision.alternatives = sorted(set(decision.alternatives) | set(alternatives))
            decision.stakeholders = sorted(set(decision.stakeholders) | set(stakeholders))
            if status == Decision.Status.DECIDED:
                decision.status = status
            decision.updated_at = timezone.now()
            decision.save()
            if _visible(decision, DECISION_SHOWN) != shown and not _waiting(decision):
                note(changes, decision, "updated", before=before)
        if source_message is not None:
            decision.source_messages.add(source_message)
    return created


def action_item_remember(
    *,
    user,
    conversation,
    what: str,
    owner: str = "",
    due_date=None,
    status: str = ActionItem.Status.OPEN,
    source_message: Message | None = None,
    suggest: bool = False,
    changes: list[EventItem] | None = None,
) -> bool:
    """The same action item extracted twice is one row, unless the user edited it (or marked
    it done or reopened it): then it is left as it is."""
    project_id = _project_of(conversation)
    key = _key_of(ActionItem, user, what, source_message, project_id)
    state = MemoryState.SUGGESTED if suggest else MemoryState.LEARNED
    if _deleted_after(ActionItem, user, key, source_message, project_id):
        return False
    with transaction.atomic():
        item, created = ActionItem.objects.select_for_update().get_or_create(
            user=user,
            dedupe_key=key,
            **_scope(project_id),
            defaults={
                "conversation": conversation,
                "what": what,
                "owner": owner,
                "due_date": due_date,
                "status": status,
                "state": state,
            },
        )
        if created:
            note(changes, item, "suggested" if suggest else "added")
        elif item.protected:
            return False
        else:
            before, shown = history_id(item, changes), _visible(item, ACTION_SHOWN)
            item.owner = _merge_text(item.owner, owner)
            item.due_date = due_date or item.due_date
            if status == ActionItem.Status.DONE:
                item.status = status
            item.updated_at = timezone.now()
            item.save()
            if _visible(item, ACTION_SHOWN) != shown and not _waiting(item):
                note(changes, item, "updated", before=before)
        if source_message is not None:
            item.source_messages.add(source_message)
    return created
