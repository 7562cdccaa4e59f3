"""Import a user export (see ``export``) into a user with no data; messages are stored through
``chat.services.message_create_many``. Memories and their history are restored as they were:
no new history records are made for rows that merely come back.

The whole file is checked first, writing nothing (a refusal keeps nothing); then it is stored
in steps, each its own short transaction (the profile, each conversation, memories by
IMPORT_CHUNK), so a large import never holds the database's write lock for long (SQLite has
one for the whole database: a reply ending meanwhile waits for it). ``ImportProgress`` records
the steps done: importing the same file again after a stop resumes from the next step."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.apps import apps
from django.conf import settings
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction
from django.db.models import Model
from django.utils import timezone

from audit import acting_as
from chat.models import Conversation, Message
from chat.services import ChatError, NewMessage, conversation_create, message_create_many
from memory.models import ActionItem, Fact, Summary
from profiles.models import DomainLevel, DomainSnapshot, StyleSnapshot, UserProfile
from projects.models import Project
from userdata.models import ImportedConversation, ImportProgress
from userdata.transfer import FORMAT, VERSION
from userdata.transfer.export import MEMORY_SECTIONS, NESTED_OWNER, USER_FIELDS
from userdata.transfer.validation import (
    Invalid,
    clean_history,
    clean_imported_from,
    clean_username,
    clean_value,
    row_rules,
)
from web.fields import concrete_field

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
    "branch_of",
    "hidden_by",
    "branch_title",
    "system_prompt_version",
    "lease_expires_at",
    "context_report",
    "branch_title",
)
# Links filled in a second pass (they may point forward in the document).
DEFERRED = {Message: {"reply_to", "branch_of", "hidden_by"}, Fact: {"superseded_by"}}
# A message's links to a message at or before it (a branch's first question, itself too):
# known once its chunk is stored.
BRANCH_LINKS = ("branch_of", "hidden_by")
IMPORT_CHUNK = 100  # memories per transaction (about 0.7 s of SQLite writes each)
MESSAGE_CHUNK = 500  # a long conversation's messages per transaction


DOCUMENT_KEYS = {
    "format",
    "version",
    "exported_at",
    "user",
    "profile",
    "projects",
    "conversations",
    *(key for key, _model, _prefix in MEMORY_SECTIONS),
}


class BadExport(ValidationError):
    pass


@dataclass
class ImportResult:
    user: Any
    user_created: bool
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def describe(self) -> str:
        return ", ".join(f"{n} {name.replace('_', ' ')}" for name, n in self.counts.items())


IMPORTED = "imported from an export"


class _Ids:
    """The rows the import made, found two ways kept apart: by the file's own references
    (``by_ref``, what its links name) and by their place in the document (``by_place``,
    "conversations[3]", "facts[120]": how a later step of the same row finds it, ref or none).
    Apart, no reference of the file can name a row by its place, nor displace one. Also
    usernames to user ids."""

    def __init__(self, stored: dict | None = None):
        self.by_ref: dict[type[Model], dict[str, int]] = defaultdict(dict)
        self.by_place: dict[type[Model], dict[str, int]] = defaultdict(dict)
        refs, places = _saved_tables(stored or {})
        for table, saved in ((self.by_ref, refs), (self.by_place, places)):
            for label, rows in saved.items():
                table[apps.get_model(label)].update(rows)
        self._users: dict[str, int | None] = {}
        # The account the export was made of (its username there) and the one it goes to.
        self.exported_as: str | None = None
        self.owner_id: int | None = None

    def history_author(self, username) -> int | None:
        """A history record the user made stays theirs; anyone else's (staff, the app) is
        left unnamed, the import's reason says where it came from: never the importer."""
        if username and username == self.exported_as:
            return self.owner_id
        return None

    def stored(self) -> dict:
        """What ``ImportProgress.ids`` keeps for a resume (JSON)."""
        return {
            "refs": {model._meta.label: rows for model, rows in self.by_ref.items()},
            "places": {model._meta.label: rows for model, rows in self.by_place.items()},
        }

    def remember(self, model: type[Model], ref: object, pk: int) -> None:
        """``ref`` names the new row ``pk``; a row without a ref is matched by no reference
        (kept under a None key, it would come back from the saved progress as "null")."""
        if isinstance(ref, str) and ref:
            self.by_ref[model][ref] = pk

    def id(self, model: type[Model], ref: str | None) -> int | None:
        return self.by_ref[model].get(ref) if ref else None

    def place(self, model: type[Model], where: str, pk: int) -> None:
        """The row ``pk`` was made for the document's ``where``."""
        self.by_place[model][where] = pk

    def made(self, model: type[Model], where: str) -> int:
        """The id of the row an earlier step made for the document's ``where``."""
        return self.by_place[model][where]

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


def _saved_tables(stored: dict) -> tuple[dict, dict]:
    """The saved progress's refs and places, by model label. Progress saved before the two
    were apart holds one table, the places among the refs as "#<where>" (a memory's as
    "#<n>", its index in its section)."""
    if "refs" in stored or "places" in stored:
        return stored.get("refs", {}), stored.get("places", {})
    refs: dict[str, dict[str, int]] = defaultdict(dict)
    places: dict[str, dict[str, int]] = defaultdict(dict)
    sections = {model._meta.label: key for key, model, _prefix in MEMORY_SECTIONS}
    for label, rows in stored.items():
        for key, pk in rows.items():
            if not key.startswith("#"):
                refs[label][key] = pk
            elif label in sections:
                places[label][f"{sections[label]}[{key[1:]}]"] = pk
            else:
                places[label][key[1:]] = pk
    return refs, places


def _values(
    model, data: object, ids: _Ids, fields=None, skip=(), *, where: str, actor=None
) -> dict[str, Any]:
    """Attribute values for ``model`` from a document row's ``fields``, each checked
    (``userdata.transfer.validation``); an unknown field is refused, not ignored."""
    if not isinstance(data, dict):
        raise Invalid(f"{where}: must be an object.")
    owner = NESTED_OWNER.get(model, set())
    fields = list(fields if fields is not None else model._meta.concrete_fields)
    known = {f.name for f in fields if not f.primary_key and f.name not in owner}
    unknown = sorted(set(data) - known)
    if unknown:
        raise Invalid(f"{where}.{unknown[0]}: not a field of {model.__name__}.")
    out = {}
    for f in fields:
        if f.primary_key or f.name in owner or f.name in skip or f.name not in data:
            continue
        raw = data[f.name]
        if f.is_relation:
            if raw is not None and not isinstance(raw, str):
                raise Invalid(f"{where}.{f.name}: must be a reference (text) or null.")
            if f.related_model is Project and raw is not None and raw not in ids.by_ref[Project]:
                # Only a project of the file itself: any other is not found.
                raise Invalid(f"{where}.{f.name}: no project {raw!r:.40} in this file.")
            if f.related_model is get_user_model():
                # Who made a row is the staff member importing it: a file cannot name
                # another account as the author.
                out[f.attname] = actor.pk if raw is not None and actor is not None else None
            else:
                out[f.attname] = ids.id(f.related_model, raw)
        elif model is Summary and f.name == "covered_through":
            if raw is not None and not isinstance(raw, str):
                raise Invalid(f"{where}.covered_through: must be a message reference.")
            out[f.attname] = ids.id(Message, raw) or 0
        else:
            out[f.attname] = clean_value(model, f, raw, where)
    return row_rules(model, out, where)


def _history_rows(model, records, object_id: int, owner: dict, ids: _Ids, *, where, actor):
    """History records as they were, their author the user when it was them (see
    ``_Ids.history_author``)."""
    history_model = model.history.model
    rows = []
    for n, record in enumerate(_list(records, where)):
        at = f"{where}[{n}]"
        history_date, history_type, reason = clean_history(record, at)
        values = _values(
            model,
            record.get("fields"),
            ids,
            history_model.tracked_fields,
            where=f"{at}.fields",
            actor=actor,
        )
        values.update(owner)
        author = ids.history_author(record.get("history_user"))
        rows.append(
            history_model(
                id=object_id,
                history_date=history_date,
                history_type=history_type,
                history_user_id=author,
                history_change_reason=reason if reason or author else IMPORTED,
                **values,
            )
        )
    return rows


def _list(value, where: str) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        raise Invalid(f"{where}: must be a list.")
    return value


def _item(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise Invalid(f"{where}: must be an object.")
    ref = value.get("ref")
    if "ref" in value and not isinstance(ref, str):
        raise Invalid(f"{where}.ref: must be text.")
    return value


def _user_for(document: dict, username: str | None):
    User = get_user_model()
    data = document.get("user")
    if not isinstance(data, dict):
        raise Invalid("user: must be an object.")
    unknown = sorted(set(data) - set(USER_FIELDS))
    if unknown:
        raise Invalid(f"user.{unknown[0]}: not a field an export holds.")
    username = clean_username(username or data.get("username"), "user.username")
    user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
    if user is not None:
        return user, False
    user = User(**{User.USERNAME_FIELD: username})
    for name in USER_FIELDS[1:]:
        if name in data:
            setattr(user, name, clean_value(User, concrete_field(User, name), data[name], "user"))
    if user.email:
        try:
            User._meta.get_field("email").run_validators(user.email)
        except ValidationError as error:
            raise Invalid(f"user.email: {' '.join(error.messages)}") from None
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
    unusable password) if needed. Refused when that user already has data (importing over it
    would duplicate conversations and memories), unless it is this same file's import, stopped
    half-way: it then goes on from where it stopped. The file is checked whole before anything
    is stored; then it is stored in steps (see the module's docstring)."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise BadExport("This is not a memorychat user export.")
    if document.get("version") != VERSION:
        raise BadExport(f"Unsupported export version {document.get('version')!r}.")
    unknown = sorted(set(document) - DOCUMENT_KEYS)
    if unknown:
        raise BadExport(f"The export could not be imported: {unknown[0]}: not part of an export.")
    rows, limit = _row_count(document), settings.MEMORYCHAT_IMPORT_MAX_ROWS
    if rows > limit:
        raise BadExport(
            f"The export holds {rows:,} rows (messages, memories, history records); an import "
            f"takes at most {limit:,} (IMPORT_MAX_ROWS). Split it, or raise the limit."
        )
    steps_done = 0
    try:
        _check_all(document, username, actor)
        with transaction.atomic(), acting_as(actor):
            user, created = _user_for(document, username)
            progress = _progress_for(user, created, _digest(document))
        result = ImportResult(user=user, user_created=created)
        result.counts.update(progress.counts)
        ids = _Ids(progress.ids)
        ids.exported_as, ids.owner_id = document["user"].get("username"), user.pk
        steps = _steps(document, user, ids, result, actor)
        for number, step in enumerate(steps):
            if number < progress.steps_done:
                continue
            with transaction.atomic(), acting_as(actor):
                step()
                progress.steps_done = steps_done = number + 1
                progress.ids, progress.counts = ids.stored(), dict(result.counts)
                progress.save(update_fields=["steps_done", "ids", "counts"])
        with transaction.atomic():
            progress.finished_at = timezone.now()
            progress.save(update_fields=["finished_at"])
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
    except Invalid as error:
        raise BadExport(f"The export could not be imported: {error}") from error
    except DatabaseError as error:
        if not steps_done:
            raise BadExport(f"The export could not be imported: {error}") from error
        raise BadExport(
            f"The import stopped after step {steps_done} (database: {error}). What was "
            "stored is kept: import the same file again to go on from there."
        ) from error
    except (KeyError, TypeError, ValueError, AttributeError, ChatError) as error:
        raise BadExport(
            f"The export could not be imported: {type(error).__name__}: {error}"
        ) from error
    except ValidationError as error:
        raise BadExport(f"The export could not be imported: {'; '.join(error.messages)}") from error


def _digest(document: dict) -> str:
    canonical = json.dumps(document, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def _row_count(document: dict) -> int:
    """Rows the file would store, roughly (what the size cap counts)."""

    def length(value) -> int:
        return len(value) if isinstance(value, list) else 0

    def with_history(items) -> int:
        if not isinstance(items, list):
            return 0
        return sum(1 + length(i.get("history")) for i in items if isinstance(i, dict))

    total = 0
    for conversation in document.get("conversations") or []:
        if isinstance(conversation, dict):
            total += 1 + length(conversation.get("messages"))
            total += with_history(conversation.get("summaries"))
    for key, _model, _prefix in MEMORY_SECTIONS:
        total += with_history(document.get(key))
    return total


def _progress_for(user, created: bool, digest: str) -> ImportProgress:
    progress = (
        ImportProgress.objects.select_for_update()
        .filter(user=user, digest=digest, finished_at=None)
        .first()
    )
    if progress is not None:
        return progress  # this file's import, stopped half-way: go on
    if not created and _has_data(user):
        raise BadExport(
            f"{user.get_username()} already has data; delete it first (importing over "
            "it would duplicate conversations and memories)."
        )
    ImportProgress.objects.filter(user=user).delete()  # an earlier, finished import's record
    return ImportProgress.objects.create(user=user, digest=digest)


def _check_all(document: dict, username: str | None, actor) -> None:
    """Every value of the file checked as the steps will check it, storing nothing: a file
    refused is refused before its first step."""
    ids = _Ids()
    user_data = document.get("user")
    if not isinstance(user_data, dict):
        raise Invalid("user: must be an object.")
    clean_username(username or user_data.get("username"), "user.username")
    profile = document.get("profile")
    if profile:
        if not isinstance(profile, dict):
            raise Invalid("profile: must be an object.")
        fields = _memory_switch_to_mode(profile.get("fields"))
        _values(UserProfile, fields, ids, where="profile.fields", actor=actor)
        for n, row in enumerate(_list(profile.get("snapshots"), "profile.snapshots")):
            _values(StyleSnapshot, row, ids, where=f"profile.snapshots[{n}]", actor=actor)
        history = [
            dict(r, fields=_memory_switch_to_mode(r.get("fields"))) if isinstance(r, dict) else r
            for r in _list(profile.get("history"), "profile.history")
        ]
        _history_rows(UserProfile, history, 0, {}, ids, where="profile.history", actor=actor)
    names: set[str] = set()
    for n, project in enumerate(_list(document.get("projects"), "projects")):
        where = f"projects[{n}]"
        project = _item(project, where)
        values = _values(Project, project.get("fields"), ids, where=f"{where}.fields")
        ref = project.get("ref")
        if not isinstance(ref, str) or ref in ids.by_ref[Project]:
            raise Invalid(f"{where}.ref: a reference (text) of its own is needed.")
        name = values.get("name", "").casefold()
        if name in names:
            raise Invalid(f"{where}.fields.name: two projects of the same name.")
        names.add(name)
        ids.by_ref[Project][ref] = 0  # known: the file's conversations and memories may name it
    sources: dict[tuple[str, str], str] = {}
    for n, conversation in enumerate(_list(document.get("conversations"), "conversations")):
        where = f"conversations[{n}]"
        conversation = _item(conversation, where)
        _values(Conversation, conversation.get("fields"), ids, where=f"{where}.fields")
        source = clean_imported_from(conversation.get("imported_from"), f"{where}.imported_from")
        if source in sources:
            raise Invalid(f"{where}.imported_from: also {sources[source]}'s.")
        if source is not None:
            sources[source] = where
        for m, item in enumerate(_list(conversation.get("messages"), f"{where}.messages")):
            at = f"{where}.messages[{m}]"
            _values(Message, _item(item, at).get("fields"), ids, where=f"{at}.fields")
        for m, item in enumerate(_list(conversation.get("summaries"), f"{where}.summaries")):
            at = f"{where}.summaries[{m}]"
            item = _item(item, at)
            _values(Summary, item.get("fields"), ids, where=f"{at}.fields", actor=actor)
            _history_rows(
                Summary, item.get("history"), 0, {}, ids, where=f"{at}.history", actor=actor
            )
    for key, model, _prefix in MEMORY_SECTIONS:
        keys: set[tuple] = set()  # decisions and action items: one per scope and key
        for n, item in enumerate(_list(document.get(key), key)):
            item = _item(item, f"{key}[{n}]")
            values = _values(
                model, item.get("fields"), ids, where=f"{key}[{n}].fields", actor=actor
            )
            if model is not Fact:
                scoped = (item["fields"].get("project"), values.get("dedupe_key"))
                if scoped in keys:
                    raise Invalid(
                        f"{key}[{n}].fields.dedupe_key: the same {model._meta.verbose_name} "
                        "twice in one project (or twice outside any)."
                    )
                keys.add(scoped)
            _refs(item, "source_messages", f"{key}[{n}]")
            if model is ActionItem:
                _refs(item, "depends_on", f"{key}[{n}]")
            _history_rows(
                model, item.get("history"), 0, {}, ids, where=f"{key}[{n}].history", actor=actor
            )


def _steps(document: dict, user, ids: _Ids, result: ImportResult, actor) -> list[Callable]:
    """The import's steps, in order; the same file gives the same steps (resuming counts
    them)."""
    steps: list[Callable] = [
        lambda: _import_profile_and_projects(document, user, ids, result, actor)
    ]
    for n, conversation in enumerate(_list(document.get("conversations"), "conversations")):
        where = f"conversations[{n}]"
        data = _item(conversation, where)
        steps.append(
            lambda d=data, w=where: _import_conversation(d, user, ids, result, actor, where=w)
        )
        messages = _list(data.get("messages"), f"{where}.messages")
        for start in range(0, len(messages), MESSAGE_CHUNK):
            steps.append(
                lambda d=data, w=where, s=start: _import_messages(
                    d, ids, result, actor, where=w, start=s
                )
            )
        steps.append(lambda d=data, w=where: _finish_conversation(d, ids, result, actor, where=w))
    for key, model, _prefix in MEMORY_SECTIONS:
        items = _list(document.get(key), key)
        for start in range(0, len(items), IMPORT_CHUNK):
            steps.append(
                lambda k=key, m=model, i=items, s=start: _import_memories(
                    k, m, i[s : s + IMPORT_CHUNK], user, ids, result, actor, offset=s
                )
            )
        steps.append(lambda k=key, m=model, i=items: _link_memories(k, m, i, ids))
        for start in range(0, len(items), IMPORT_CHUNK):
            steps.append(
                lambda k=key, m=model, i=items, s=start: _import_memory_history(
                    k, m, i[s : s + IMPORT_CHUNK], user, ids, result, actor, offset=s
                )
            )
    return steps


def _memory_switch_to_mode(fields):
    """Exports made before the memory mode have the memory switch (memory_enabled, a
    boolean): on is "automatic", off is "off". Anything else is left for validation."""
    if isinstance(fields, dict) and "memory_enabled" in fields and "memory_mode" not in fields:
        fields = dict(fields)
        enabled = fields.pop("memory_enabled")
        if isinstance(enabled, bool):
            fields["memory_mode"] = "automatic" if enabled else "off"
        else:
            fields["memory_enabled"] = enabled  # refused: not a field any more
    return fields


def _import_profile(data, user, ids: _Ids, result: ImportResult, actor) -> None:
    if not data:
        return
    if not isinstance(data, dict):
        raise Invalid("profile: must be an object.")
    data = dict(data, fields=_memory_switch_to_mode(data.get("fields")))
    if isinstance(data.get("history"), list):
        data["history"] = [
            dict(record, fields=_memory_switch_to_mode(record.get("fields")))
            if isinstance(record, dict)
            else record
            for record in data["history"]
        ]
    values = _values(UserProfile, data.get("fields"), ids, where="profile.fields", actor=actor)
    profile = UserProfile(user=user, **values)
    UserProfile.objects.bulk_create([profile])  # no signal: its history comes from the file
    StyleSnapshot.objects.bulk_create(
        StyleSnapshot(
            profile=profile,
            **_values(StyleSnapshot, row, ids, where=f"profile.snapshots[{n}]", actor=actor),
        )
        for n, row in enumerate(_list(data.get("snapshots"), "profile.snapshots"))
    )
    _import_domains(data, profile, ids, actor)
    history = _history_rows(
        UserProfile,
        data.get("history"),
        profile.pk,
        {"user_id": user.pk},
        ids,
        where="profile.history",
        actor=actor,
    )
    UserProfile.history.model.objects.bulk_create(history)
    result.counts["profile"] += 1
    result.counts["history_records"] += len(history)


def _import_domains(data: dict, profile: UserProfile, ids: _Ids, actor) -> None:
    """The level per subject and its progress (absent from older exports)."""
    rows, seen = [], set()
    for n, row in enumerate(_list(data.get("domains"), "profile.domains")):
        values = _values(DomainLevel, row, ids, where=f"profile.domains[{n}]", actor=actor)
        if values.get("domain") in seen:
            raise Invalid(f"profile.domains[{n}].domain: {values['domain']!r} appears twice.")
        seen.add(values.get("domain"))
        rows.append(DomainLevel(profile=profile, **values))
    DomainLevel.objects.bulk_create(rows)
    DomainSnapshot.objects.bulk_create(
        DomainSnapshot(
            profile=profile,
            **_values(
                DomainSnapshot, row, ids, where=f"profile.domain_snapshots[{n}]", actor=actor
            ),
        )
        for n, row in enumerate(_list(data.get("domain_snapshots"), "profile.domain_snapshots"))
    )


def _import_profile_and_projects(document: dict, user, ids: _Ids, result, actor) -> None:
    """The first step: the profile, then the projects the conversations and memories name."""
    _import_profile(document.get("profile"), user, ids, result, actor)
    _import_projects(document.get("projects"), user, ids, result, actor)


def _import_projects(data, user, ids: _Ids, result: ImportResult, actor) -> None:
    """The user's projects, before the conversations and memories that name them."""
    for n, item in enumerate(_list(data, "projects")):
        item = _item(item, f"projects[{n}]")
        values = _values(Project, item.get("fields"), ids, where=f"projects[{n}].fields")
        project = Project.objects.create(user=user, **values)
        ids.remember(Project, item.get("ref"), project.pk)
        result.counts["projects"] += 1


def _import_conversation(data: dict, user, ids: _Ids, result: ImportResult, actor, *, where):
    """A conversation's first step: the conversation; its messages follow in chunks
    (``_import_messages``), then its fields and summaries (``_finish_conversation``)."""
    values = _values(Conversation, data.get("fields"), ids, where=f"{where}.fields", actor=actor)
    conversation = conversation_create(
        user=user,
        title=values.get("title", ""),
        temporary=values.get("temporary", False),
        strategy=values.get("strategy"),
        context_budget=values.get("context_budget"),
        model=values.get("model", ""),
    )
    if values.get("project_id"):  # before its messages: indexed in the project's scope
        conversation.project_id = values["project_id"]
        conversation.save(update_fields=["project"])
    source = clean_imported_from(data.get("imported_from"), f"{where}.imported_from")
    if source is not None:  # a later import of that ChatGPT or Claude export skips it
        ImportedConversation.objects.create(
            user=user, source=source[0], source_id=source[1], conversation=conversation
        )
    ids.remember(Conversation, data.get("ref"), conversation.pk)
    ids.place(Conversation, where, conversation.pk)


def _import_messages(data: dict, ids: _Ids, result: ImportResult, actor, *, where, start: int):
    """``MESSAGE_CHUNK`` messages of a conversation from ``start``, in one transaction."""
    conversation = Conversation.objects.get(pk=ids.made(Conversation, where))
    chunk = _list(data.get("messages"), f"{where}.messages")[start : start + MESSAGE_CHUNK]
    items = [_item(item, f"{where}.messages[{start + n}]") for n, item in enumerate(chunk)]
    rows = [
        _values(
            Message,
            item.get("fields"),
            ids,
            skip=DEFERRED[Message],
            where=f"{where}.messages[{start + n}].fields",
            actor=actor,
        )
        for n, item in enumerate(items)
    ]
    created = message_create_many(
        conversation=conversation,
        messages=[
            NewMessage(role=v["role"], content=v.get("content", ""), created_at=v.get("created_at"))
            for v in rows
        ],
    )
    for item, message in zip(items, created, strict=True):
        ids.remember(Message, item.get("ref"), message.pk)
    for item, values_, message in zip(items, rows, created, strict=True):
        for name in MESSAGE_EXTRA:
            if name == "reply_to":  # an earlier message; a later one is linked at the end
                message.reply_to_id = ids.id(Message, item["fields"].get("reply_to"))
            elif name in BRANCH_LINKS:
                setattr(message, f"{name}_id", ids.id(Message, item["fields"].get(name)))
            elif name in values_:
                setattr(message, name, values_[name])
    if created:
        Message.objects.bulk_update(created, list(MESSAGE_EXTRA), batch_size=500)
    result.counts["messages"] += len(created)


def _finish_conversation(data: dict, ids: _Ids, result: ImportResult, actor, *, where):
    """A conversation's last step: replies to later messages, its own fields, summaries."""
    conversation = Conversation.objects.get(pk=ids.made(Conversation, where))
    values = _values(Conversation, data.get("fields"), ids, where=f"{where}.fields", actor=actor)
    later = []
    for item in _list(data.get("messages"), f"{where}.messages"):
        target = (item.get("fields") or {}).get("reply_to")
        pk, reply_to = ids.id(Message, item.get("ref")), ids.id(Message, target)
        if target and pk and reply_to and reply_to > pk:
            later.append(Message(pk=pk, reply_to_id=reply_to))
    Message.objects.bulk_update(later, ["reply_to"], batch_size=500)
    Conversation.objects.filter(pk=conversation.pk).update(
        **{
            k: v
            for k, v in values.items()
            if k in ("title", "created_at", "updated_at", "archived")
        }
    )
    history = []
    for n, item in enumerate(_list(data.get("summaries"), f"{where}.summaries")):
        at = f"{where}.summaries[{n}]"
        item = _item(item, at)
        summary = Summary(
            conversation=conversation,
            **_values(Summary, item.get("fields"), ids, where=f"{at}.fields", actor=actor),
        )
        Summary.objects.bulk_create([summary])
        history += _history_rows(
            Summary,
            item.get("history"),
            summary.pk,
            {"conversation_id": conversation.pk},
            ids,
            where=f"{at}.history",
            actor=actor,
        )
        result.counts["summaries"] += 1
    Summary.history.model.objects.bulk_create(history)
    result.counts["conversations"] += 1
    result.counts["history_records"] += len(history)


def _refs(item: dict, key: str, where: str) -> list[str]:
    refs = _list(item.get(key), f"{where}.{key}")
    if not all(isinstance(ref, str) for ref in refs):
        raise Invalid(f"{where}.{key}: must be a list of references (text).")
    return refs


def _import_memories(
    key: str, model, items: list, user, ids: _Ids, result: ImportResult, actor, *, offset: int
) -> None:
    """One chunk of a memory section: ``items`` from the section's ``offset``."""
    deferred = DEFERRED.get(model, set())
    items = [_item(item, f"{key}[{offset + n}]") for n, item in enumerate(items)]
    objects = [
        model(
            user=user,
            **_values(
                model,
                item.get("fields"),
                ids,
                skip=deferred,
                where=f"{key}[{offset + n}].fields",
                actor=actor,
            ),
        )
        for n, item in enumerate(items)
    ]
    model.objects.bulk_create(objects, batch_size=500)
    for n, (item, obj) in enumerate(zip(items, objects, strict=True)):
        ids.remember(model, item.get("ref"), obj.pk)
        ids.place(model, f"{key}[{offset + n}]", obj.pk)
    owner = f"{model._meta.model_name}_id"
    through = model.source_messages.through
    links = [
        through(**{owner: obj.pk, "message_id": ids.id(Message, ref)})
        for n, (item, obj) in enumerate(zip(items, objects, strict=True))
        for ref in _refs(item, "source_messages", f"{key}[{offset + n}]")
        if ids.id(Message, ref)
    ]
    through.objects.bulk_create(links, batch_size=500)
    result.counts[key] += len(objects)


def _import_memory_history(
    key: str, model, items: list, user, ids: _Ids, result: ImportResult, actor, *, offset: int
) -> None:
    """One chunk of a section's history records, once all its rows exist (a record may name
    a row further on: a fact superseded by a later one)."""
    history = []
    for n, item in enumerate(items, start=offset):
        history += _history_rows(
            model,
            item.get("history"),
            ids.made(model, f"{key}[{n}]"),
            {"user_id": user.pk},
            ids,
            where=f"{key}[{n}].history",
            actor=actor,
        )
    model.history.model.objects.bulk_create(history, batch_size=500)
    result.counts["history_records"] += len(history)


def _link_memories(key: str, model, items: list, ids: _Ids) -> None:
    """A section's links between its own rows (they may point forward, across chunks)."""
    own = [ids.made(model, f"{key}[{n}]") for n in range(len(items))]
    deferred = DEFERRED.get(model, set())
    if deferred:
        objects = []
        for pk, item in zip(own, items, strict=True):
            obj = model(pk=pk)
            for name in deferred:
                setattr(obj, f"{name}_id", ids.id(model, item["fields"].get(name)))
            objects.append(obj)
        model.objects.bulk_update(objects, list(deferred), batch_size=500)
    if model is ActionItem:
        depends = ActionItem.depends_on.through
        depends.objects.bulk_create(
            (
                depends(from_actionitem_id=pk, to_actionitem_id=ids.id(ActionItem, ref))
                for n, (pk, item) in enumerate(zip(own, items, strict=True))
                for ref in _refs(item, "depends_on", f"{key}[{n}]")
                if ids.id(ActionItem, ref)
            ),
            batch_size=500,
        )
