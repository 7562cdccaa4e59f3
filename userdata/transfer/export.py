"""Export one user's data: profile, conversations, messages, summaries, memories, with history."""

from __future__ import annotations

import bisect
from collections import defaultdict
from typing import Any, cast

from django.contrib.auth import get_user_model
from django.db import models
from django.utils import timezone

from chat.models import Conversation, Message
from memory.models import ActionItem, Decision, Fact, KeptMemory, Summary
from profiles.models import DomainLevel, DomainSnapshot, StyleSnapshot, UserProfile
from projects.models import Project
from userdata.models import ImportedConversation
from userdata.transfer import FORMAT, VERSION
from userdata.transfer.codec import encode

# Memory kinds in the document: (key, model, reference prefix).
MEMORY_SECTIONS: tuple[tuple[str, type[KeptMemory], str], ...] = (
    ("facts", Fact, "f"),
    ("decisions", Decision, "d"),
    ("action_items", ActionItem, "a"),
)
# Fields implied by where a row sits in the document.
NESTED_OWNER = {
    Message: {"conversation"},
    Summary: {"conversation"},
    StyleSnapshot: {"profile"},
    DomainLevel: {"profile"},
    DomainSnapshot: {"profile"},
    UserProfile: {"user"},
    Project: {"user"},
    Conversation: {"user"},
    Fact: {"user"},
    Decision: {"user"},
    ActionItem: {"user"},
}
USER_FIELDS = ("username", "email", "first_name", "last_name", "date_joined", "is_active")


# What the user's own copy says for any other account (staff who edited their memories or
# asked for a summary): the staff's names are not theirs to know.
OTHER_ACCOUNT = "staff"


class _Refs:
    """Database ids to document references, and user ids to usernames (with ``owner_only``,
    every account but the owner's ``OTHER_ACCOUNT``)."""

    def __init__(self, owner_id: int | None = None):
        self.refs: dict[type[models.Model], dict[int, str]] = defaultdict(dict)
        self.message_ids: dict[int, list[int]] = {}  # conversation id -> sorted message ids
        self._usernames: dict[int, str | None] = {}
        self.owner_id = owner_id

    def ref(self, model: type[models.Model], pk: int | None) -> str | None:
        return self.refs[model].get(pk) if pk else None

    def username(self, pk: int | None) -> str | None:
        if not pk:
            return None
        if self.owner_id is not None and pk != self.owner_id:
            return OTHER_ACCOUNT
        if pk not in self._usernames:
            User = get_user_model()
            self._usernames[pk] = (
                User.objects.filter(pk=pk).values_list(User.USERNAME_FIELD, flat=True).first()
            )
        return self._usernames[pk]

    def covering(self, conversation_id: int, covered_through: int) -> str | None:
        """The reference of the newest message a summary covers (ids only grow)."""
        ids = self.message_ids.get(conversation_id, [])
        index = bisect.bisect_right(ids, covered_through)
        return self.refs[Message].get(ids[index - 1]) if index else None


def _fields(obj: Any, model: type[models.Model], refs: _Refs, fields=None) -> dict:
    skip = NESTED_OWNER.get(model, set())
    out = {}
    for f in fields if fields is not None else model._meta.concrete_fields:
        if f.primary_key or f.name in skip:
            continue
        value = getattr(obj, f.attname)
        if f.is_relation:
            if f.related_model is get_user_model():
                out[f.name] = refs.username(value)
            else:
                # A loaded model's relation names a class ("self" is resolved by then).
                out[f.name] = refs.ref(cast("type[models.Model]", f.related_model), value)
        elif model is Summary and f.name == "covered_through":
            out[f.name] = refs.covering(obj.conversation_id, value)
        else:
            out[f.name] = encode(value)
    return out


# The models whose simple-history records a document carries.
_Tracked = type[KeptMemory] | type[Summary] | type[UserProfile]


def _history(model: _Tracked, records, refs: _Refs) -> list[dict]:
    tracked = model.history.model.tracked_fields
    return [
        {
            "history_date": encode(record.history_date),
            "history_type": record.history_type,
            "history_user": refs.username(record.history_user_id),
            "history_change_reason": record.history_change_reason,
            "fields": _fields(record, model, refs, tracked),
        }
        for record in records
    ]


def _history_by_object(model, queryset, ids: set[int]) -> dict[int, list]:
    grouped: dict[int, list] = defaultdict(list)
    for record in queryset.order_by("history_date", "history_id"):
        if record.id in ids:
            grouped[record.id].append(record)
    return grouped


def user_data_export(*, user, for_the_user: bool = False) -> dict:
    """Everything held about ``user`` as a JSON-serialisable dict (see the package docstring).
    ``for_the_user``: their own copy, which names no other account (``OTHER_ACCOUNT``)."""
    refs = _Refs(owner_id=user.pk if for_the_user else None)
    document: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": encode(timezone.now()),
        "user": {name: encode(getattr(user, name)) for name in USER_FIELDS},
    }

    # Projects first: conversations and memories name theirs ("p1").
    projects = list(Project.objects.filter(user=user).order_by("created_at", "id"))
    for number, project in enumerate(projects, start=1):
        refs.refs[Project][project.pk] = f"p{number}"
    document["projects"] = [
        {"ref": refs.ref(Project, p.pk), "fields": _fields(p, Project, refs)} for p in projects
    ]

    conversations = list(Conversation.objects.filter(user=user).order_by("created_at", "id"))
    for number, conversation in enumerate(conversations, start=1):
        refs.refs[Conversation][conversation.pk] = f"c{number}"
    messages_by_conversation: dict[int, list[Message]] = defaultdict(list)
    for message in Message.objects.filter(conversation__user=user).order_by("created_at", "id"):
        messages_by_conversation[message.conversation_id].append(message)
    number = 0
    for conversation in conversations:
        for message in messages_by_conversation[conversation.pk]:
            number += 1
            refs.refs[Message][message.pk] = f"m{number}"
        refs.message_ids[conversation.pk] = sorted(
            m.pk for m in messages_by_conversation[conversation.pk]
        )
    memories = {}
    for key, model, prefix in MEMORY_SECTIONS:
        rows = list(model.objects.filter(user=user).order_by("created_at", "id"))
        for number, row in enumerate(rows, start=1):
            refs.refs[model][row.pk] = f"{prefix}{number}"
        memories[key] = rows

    profile = UserProfile.objects.filter(user=user).first()
    if profile is None:
        document["profile"] = None
    else:
        document["profile"] = {
            "fields": _fields(profile, UserProfile, refs),
            "snapshots": [
                _fields(s, StyleSnapshot, refs)
                for s in StyleSnapshot.objects.filter(profile=profile).order_by(
                    "messages_observed", "id"
                )
            ],
            # The level per subject (learned and set by the user) and its progress.
            "domains": [
                _fields(row, DomainLevel, refs)
                for row in DomainLevel.objects.filter(profile=profile).order_by("domain")
            ],
            "domain_snapshots": [
                _fields(row, DomainSnapshot, refs)
                for row in DomainSnapshot.objects.filter(profile=profile).order_by(
                    "domain", "evidence", "id"
                )
            ],
            "history": _history(
                UserProfile,
                UserProfile.history.filter(id=profile.pk).order_by("history_date", "history_id"),
                refs,
            ),
        }

    summaries = list(
        Summary.objects.filter(conversation__user=user).order_by("conversation_id", "version")
    )
    summary_history = _history_by_object(
        Summary,
        Summary.history.filter(conversation_id__in=[c.pk for c in conversations]),
        {s.pk for s in summaries},
    )
    summaries_by_conversation: dict[int, list[Summary]] = defaultdict(list)
    for summary in summaries:
        summaries_by_conversation[summary.conversation_id].append(summary)
    imported_from = {
        conversation_id: {"source": source, "id": source_id}
        for conversation_id, source, source_id in ImportedConversation.objects.filter(
            user=user
        ).values_list("conversation_id", "source", "source_id")
    }
    document["conversations"] = [
        {
            "ref": refs.ref(Conversation, conversation.pk),
            "fields": _fields(conversation, Conversation, refs),
            # The ChatGPT or Claude conversation it was imported from: a later import of
            # that export knows it after this file is imported back (or null).
            "imported_from": imported_from.get(conversation.pk),
            "messages": [
                {"ref": refs.ref(Message, m.pk), "fields": _fields(m, Message, refs)}
                for m in messages_by_conversation[conversation.pk]
            ],
            "summaries": [
                {
                    "fields": _fields(s, Summary, refs),
                    "history": _history(Summary, summary_history.get(s.pk, []), refs),
                }
                for s in summaries_by_conversation[conversation.pk]
            ],
        }
        for conversation in conversations
    ]

    for key, model, _prefix in MEMORY_SECTIONS:
        rows = memories[key]
        ids = {row.pk for row in rows}
        history = _history_by_object(model, model.history.filter(user_id=user.pk), ids)
        owner = f"{model._meta.model_name}_id"
        sources: dict[int, list[str]] = defaultdict(list)
        for row_id, message_id in (
            model.source_messages.through.objects.filter(**{f"{owner}__in": ids})
            .order_by(owner, "message_id")
            .values_list(owner, "message_id")
        ):
            ref = refs.ref(Message, message_id)
            if ref:
                sources[row_id].append(ref)
        depends: dict[int, list[str]] = defaultdict(list)
        if model is ActionItem:
            through = ActionItem.depends_on.through
            for from_id, to_id in (
                through.objects.filter(from_actionitem_id__in=ids)
                .order_by("from_actionitem_id", "to_actionitem_id")
                .values_list("from_actionitem_id", "to_actionitem_id")
            ):
                ref = refs.ref(ActionItem, to_id)
                if ref:
                    depends[from_id].append(ref)
        section = []
        for row in rows:
            item = {
                "ref": refs.ref(model, row.pk),
                "fields": _fields(row, model, refs),
                "source_messages": sorted(sources[row.pk], key=_ref_order),
                "history": _history(model, history.get(row.pk, []), refs),
            }
            if model is ActionItem:
                item["depends_on"] = sorted(depends[row.pk], key=_ref_order)
            section.append(item)
        document[key] = section
    return document


def _ref_order(ref: str) -> int:
    return int(ref[1:])
