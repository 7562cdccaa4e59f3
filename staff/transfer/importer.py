"""Import a user export (see ``export``) into a user with no data; messages are stored through
``chat.services.message_create_many``. Memories and their history are restored as they were:
no new history records are made for rows that merely come back."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import DatabaseError, models, transaction

from audit import acting_as
from chat.models import Conversation, Message
from chat.services import ChatError, NewMessage, conversation_create, message_create_many
from memory.models import ActionItem, Fact, Summary
from profiles.models import StyleSnapshot, UserProfile
from staff.transfer import FORMAT, VERSION
from staff.transfer.codec import decode
from staff.transfer.export import MEMORY_SECTIONS, NESTED_OWNER, USER_FIELDS

# Message fields message_create_many does not take; restored right after it stores the rows.
MESSAGE_EXTRA = (
    "token_count",
    "status",
    "error",
    "model",
    "prompt_tokens",
    "completion_tokens",
    "time_to_first_token",
    "duration",
    "client_id",
    "reply_to",
    "system_prompt_version",
    "lease_expires_at",
    "context_report",
)
# Links filled in a second pass (they may point forward in the document).
DEFERRED = {Message: {"reply_to"}, Fact: {"superseded_by"}}


class BadExport(ValidationError):
    pass


@dataclass
class ImportResult:
    user: Any
    user_created: bool
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def describe(self) -> str:
        return ", ".join(f"{n} {name.replace('_', ' ')}" for name, n in self.counts.items())


class _Ids:
    """Document references to the new ids, and usernames to user ids."""

    def __init__(self):
        self.ids: dict[type, dict[str, int]] = defaultdict(dict)
        self._users: dict[str, int | None] = {}

    def id(self, model: type, ref: str | None) -> int | None:
        return self.ids[model].get(ref) if ref else None

    def user_id(self, username: str | None) -> int | None:
        if not username:
            return None
        if username not in self._users:
            User = get_user_model()
            self._users[username] = (
                User.objects.filter(**{User.USERNAME_FIELD: username})
                .values_list("pk", flat=True)
                .first()
            )
        return self._users[username]


def _values(model, data: dict, ids: _Ids, fields=None, skip=()) -> dict[str, Any]:
    """Attribute values for ``model`` from a document row's ``fields``."""
    if not isinstance(data, dict):
        raise BadExport(f"{model.__name__}: fields must be an object.")
    owner = NESTED_OWNER.get(model, set())
    out = {}
    for f in fields if fields is not None else model._meta.concrete_fields:
        if f.primary_key or f.name in owner or f.name in skip or f.name not in data:
            continue
        raw = data[f.name]
        if f.is_relation:
            if f.related_model is get_user_model():
                out[f.attname] = ids.user_id(raw)
            else:
                out[f.attname] = ids.id(f.related_model, raw)
        elif model is Summary and f.name == "covered_through":
            out[f.attname] = ids.id(Message, raw) or 0
        else:
            out[f.attname] = decode(f, raw)
    return out


def _history_rows(model, records: list, object_id: int, owner: dict, ids: _Ids) -> list:
    history_model = model.history.model
    rows = []
    for record in records:
        values = _values(model, record["fields"], ids, history_model.tracked_fields)
        values.update(owner)
        rows.append(
            history_model(
                id=object_id,
                history_date=decode(models.DateTimeField(), record["history_date"]),
                history_type=record["history_type"],
                history_user_id=ids.user_id(record.get("history_user")),
                history_change_reason=record.get("history_change_reason"),
                **values,
            )
        )
    return rows


def _user_for(document: dict, username: str | None):
    User = get_user_model()
    data = document["user"]
    username = username or data["username"]
    user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
    if user is not None:
        return user, False
    user = User(**{User.USERNAME_FIELD: username})
    for name in USER_FIELDS[1:]:
        if name in data:
            setattr(user, name, decode(User._meta.get_field(name), data[name]))
    user.set_unusable_password()
    user.save()
    return user, True


def _has_data(user) -> bool:
    return (
        Conversation.objects.filter(user=user).exists()
        or UserProfile.objects.filter(user=user).exists()
        or any(model.objects.filter(user=user).exists() for _key, model, _p in MEMORY_SECTIONS)
    )


def user_data_import(*, document: dict, actor, username: str | None = None) -> ImportResult:
    """Import ``document`` for the user it names (or ``username``), creating the user (with an
    unusable password) if needed. Refused when that user already has data: importing over it
    would duplicate conversations and memories. All or nothing."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise BadExport("This is not a memorychat user export.")
    if document.get("version") != VERSION:
        raise BadExport(f"Unsupported export version {document.get('version')!r}.")
    try:
        with transaction.atomic(), acting_as(actor):
            user, created = _user_for(document, username)
            if not created and _has_data(user):
                raise BadExport(
                    f"{user.get_username()} already has data; delete it first (importing over "
                    "it would duplicate conversations and memories)."
                )
            result = ImportResult(user=user, user_created=created)
            ids = _Ids()
            _import_profile(document.get("profile"), user, ids, result)
            for conversation in document.get("conversations", []):
                _import_conversation(conversation, user, ids, result)
            for key, model, _prefix in MEMORY_SECTIONS:
                _import_memories(key, model, document.get(key, []), user, ids, result)
            LogEntry.objects.log_actions(
                user_id=actor.pk,
                queryset=[user],
                action_flag=ADDITION if created else CHANGE,
                change_message=f"Imported the user's data from an export: {result.describe()}.",
                single_object=True,
            )
            return result
    except BadExport:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, ChatError, DatabaseError) as error:
        raise BadExport(
            f"The export could not be imported: {type(error).__name__}: {error}"
        ) from error
    except ValidationError as error:
        raise BadExport(f"The export could not be imported: {'; '.join(error.messages)}") from error


def _import_profile(data, user, ids: _Ids, result: ImportResult) -> None:
    if not data:
        return
    profile = UserProfile(user=user, **_values(UserProfile, data["fields"], ids))
    UserProfile.objects.bulk_create([profile])  # no signal: its history comes from the file
    StyleSnapshot.objects.bulk_create(
        StyleSnapshot(profile=profile, **_values(StyleSnapshot, row, ids))
        for row in data.get("snapshots", [])
    )
    history = _history_rows(
        UserProfile, data.get("history", []), profile.pk, {"user_id": user.pk}, ids
    )
    UserProfile.history.model.objects.bulk_create(history)
    result.counts["profile"] += 1
    result.counts["history_records"] += len(history)


def _import_conversation(data: dict, user, ids: _Ids, result: ImportResult) -> None:
    values = _values(Conversation, data["fields"], ids)
    conversation = conversation_create(
        user=user,
        title=values.get("title", ""),
        temporary=values.get("temporary", False),
        strategy=values.get("strategy"),
        context_budget=values.get("context_budget"),
        model=values.get("model", ""),
    )
    ids.ids[Conversation][data["ref"]] = conversation.pk
    items = data["messages"]
    rows = [_values(Message, item["fields"], ids, skip=DEFERRED[Message]) for item in items]
    created = message_create_many(
        conversation=conversation,
        messages=[
            NewMessage(role=v["role"], content=v.get("content", ""), created_at=v.get("created_at"))
            for v in rows
        ],
    )
    for item, message in zip(items, created, strict=True):
        ids.ids[Message][item["ref"]] = message.pk
    for item, values_, message in zip(items, rows, created, strict=True):
        for name in MESSAGE_EXTRA:
            if name == "reply_to":
                message.reply_to_id = ids.id(Message, item["fields"].get("reply_to"))
            elif name in values_:
                setattr(message, name, values_[name])
    if created:
        Message.objects.bulk_update(created, list(MESSAGE_EXTRA), batch_size=500)
    Conversation.objects.filter(pk=conversation.pk).update(
        **{
            k: v
            for k, v in values.items()
            if k in ("title", "created_at", "updated_at", "archived")
        }
    )
    history = []
    for item in data.get("summaries", []):
        summary = Summary(conversation=conversation, **_values(Summary, item["fields"], ids))
        Summary.objects.bulk_create([summary])
        history += _history_rows(
            Summary, item.get("history", []), summary.pk, {"conversation_id": conversation.pk}, ids
        )
        result.counts["summaries"] += 1
    Summary.history.model.objects.bulk_create(history)
    result.counts["conversations"] += 1
    result.counts["messages"] += len(created)
    result.counts["history_records"] += len(history)


def _import_memories(key: str, model, items: list, user, ids: _Ids, result: ImportResult) -> None:
    deferred = DEFERRED.get(model, set())
    objects = [
        model(user=user, **_values(model, item["fields"], ids, skip=deferred)) for item in items
    ]
    model.objects.bulk_create(objects, batch_size=500)
    for item, obj in zip(items, objects, strict=True):
        ids.ids[model][item["ref"]] = obj.pk
    if deferred:
        for item, obj in zip(items, objects, strict=True):
            for name in deferred:
                setattr(obj, f"{name}_id", ids.id(model, item["fields"].get(name)))
        model.objects.bulk_update(objects, list(deferred), batch_size=500)
    owner = f"{model._meta.model_name}_id"
    through = model.source_messages.through
    links = [
        through(**{owner: obj.pk, "message_id": ids.id(Message, ref)})
        for item, obj in zip(items, objects, strict=True)
        for ref in item.get("source_messages", [])
        if ids.id(Message, ref)
    ]
    through.objects.bulk_create(links, batch_size=500)
    if model is ActionItem:
        depends = ActionItem.depends_on.through
        depends.objects.bulk_create(
            (
                depends(from_actionitem_id=obj.pk, to_actionitem_id=ids.id(ActionItem, ref))
                for item, obj in zip(items, objects, strict=True)
                for ref in item.get("depends_on", [])
                if ids.id(ActionItem, ref)
            ),
            batch_size=500,
        )
    history = []
    for item, obj in zip(items, objects, strict=True):
        history += _history_rows(model, item.get("history", []), obj.pk, {"user_id": user.pk}, ids)
    model.history.model.objects.bulk_create(history, batch_size=500)
    result.counts[key] += len(objects)
    result.counts["history_records"] += len(history)
