"""Import the seed application's JSON stores (the seed chapter's file formats):

- ``user_memory/<user>.json``: ``[{"role", "content"}, ...]`` — a user's whole history;
- ``sessions/<user>.json``: ``{"last_interaction": iso, "history": [{"role", "content"}]}``;
- ``user_profiles/<user>.json``: ``{"communication_style": {"formality_level",
  "technical_level", "verbosity", "emoji_usage"}, "preferences": {"language", "timezone",
  "topics_of_interest"}, "interaction_history": [{"timestamp", "user_message",
  "assistant_response"}]}``;
- ``knowledge_<user>_<category>.json``: ``[{"timestamp", "category", "content": {...}}]`` —
  ``content`` is ``{"role", "message"}`` for the "conversations" category, free key/values
  (``{"learning_style": "hands-on"}``) otherwise;
- ``summaries.json``: ``[{"timestamp", "message_count", "summary"}]`` or ``{"error", "timestamp"}``
  entries; it names no user (``--summaries-user``, or the directory's only user).

Each history becomes a conversation, stored through ``chat.services.message_create`` (its first
message, carrying a marker in ``client_id`` that finds the conversation again) and
``message_create_many`` (the rest). Knowledge key/values become facts (``fact_remember``: a later
value of the same key supersedes an earlier one); the profile's style and preferences go to the
user's profile; summaries become summary versions.

A rerun creates nothing new: conversations are found by their marker and only messages beyond
those already stored are added; facts, preferences and summary versions already there are left
alone. A file that cannot be read or has the wrong shape is reported and skipped (its partial
writes rolled back); the others import. Users that do not exist are created with an unusable
password.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from audit import attribute
from chat import jsonsafe
from chat.models import Conversation, Message
from chat.services import (
    ChatError,
    NewMessage,
    conversation_create,
    message_create,
    message_create_many,
)
from memory import extraction
from memory.extraction import Extraction
from memory.models import Fact, Summary
from memory.services import fact_remember, summary_create
from profiles.models import UserProfile
from profiles.services import profile_update_preferences
from web.visible import has_visible_text

REASON = "imported from the seed's JSON stores"
SEED_MAX_DEPTH = 16  # the seed's files nest four levels
ROLES = ("system", "user", "assistant")
STYLE_MAP = {
    "formality_level": "formality",
    "technical_level": "technical_level",
    "verbosity": "verbosity",
    "emoji_usage": "emoji_use",
}
PREFERENCE_KEYS = ("language", "timezone", "topics_of_interest")
CATEGORY_MAP = {
    "preference": Fact.Category.PREFERENCE,
    "preferences": Fact.Category.PREFERENCE,
    "personal": Fact.Category.PERSONAL,
    "profile": Fact.Category.PERSONAL,
    "project": Fact.Category.PROJECT,
    "projects": Fact.Category.PROJECT,
    "schedule": Fact.Category.SCHEDULE,
    "calendar": Fact.Category.SCHEDULE,
    "deadlines": Fact.Category.SCHEDULE,
    "technical": Fact.Category.TECHNICAL,
    "tech": Fact.Category.TECHNICAL,
}
KNOWLEDGE_FILE = re.compile(r"knowledge_(?P<rest>.+)\.json")  # fullmatch


class BadFile(Exception):
    """The file cannot be imported; the message says why."""


@dataclass
class SeedFile:
    kind: str  # "profile", "memory", "session", "knowledge", "summaries"
    path: Path
    username: str = ""
    category: str = ""


@dataclass
class Entry:
    role: str
    content: str
    created_at: datetime | None = None


@dataclass
class SeedReport:
    files: int = 0
    bad: list[tuple[str, str]] = field(default_factory=list)
    created: Counter = field(default_factory=Counter)
    users_created: list[str] = field(default_factory=list)


def discover(directory: Path) -> list[SeedFile]:
    """The seed files under ``directory``, in import order (profiles first, summaries last)."""
    files: list[SeedFile] = []
    for kind, folder in (
        ("profile", "user_profiles"),
        ("memory", "user_memory"),
        ("session", "sessions"),
    ):
        for path in sorted((directory / folder).glob("*.json")):
            files.append(SeedFile(kind=kind, path=path, username=path.stem))
    known = {f.username for f in files}
    for path in sorted(directory.glob("knowledge_*.json")):
        username, category = _split_knowledge_name(path.name, known)
        files.append(SeedFile(kind="knowledge", path=path, username=username, category=category))
    if (directory / "summaries.json").is_file():
        files.append(SeedFile(kind="summaries", path=directory / "summaries.json"))
    return files


def _split_knowledge_name(name: str, known: set[str]) -> tuple[str, str]:
    """``knowledge_<user>_<category>.json``; user ids may hold underscores ("user_456"), so a
    user known from the other files wins, then an existing account, then the last underscore."""
    match = KNOWLEDGE_FILE.fullmatch(name)
    rest = match.group("rest") if match else ""
    splits = [(rest[:i], rest[i + 1 :]) for i, ch in enumerate(rest) if ch == "_"]
    splits = [(user, category) for user, category in splits if user and category]
    if not splits:
        return "", ""
    for user, category in splits:
        if user in known:
            return user, category
    User = get_user_model()
    for user, category in splits:
        if User.objects.filter(**{User.USERNAME_FIELD: user}).exists():
            return user, category
    return splits[-1]


def _marker(name: str) -> str:
    """A client_id that finds an imported conversation again (at most 64 characters)."""
    marker = f"seed:{name}"
    if len(marker) > 64:
        marker = "seed:" + hashlib.sha256(name.encode()).hexdigest()[:40]
    return marker


def _when(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    if not isinstance(value, str):
        raise BadFile(f"timestamp {value!r} is not a string")
    parsed = parse_datetime(value)
    if parsed is None:
        raise BadFile(f"timestamp {value!r} is not an ISO date and time")
    return parsed if timezone.is_aware(parsed) else timezone.make_aware(parsed)


def _messages(items: Any, where: str) -> list[Entry]:
    if not isinstance(items, list):
        raise BadFile(f"{where} must be a list of {{role, content}} messages")
    entries = []
    for index, item in enumerate(items):
        if not (
            isinstance(item, dict)
            and item.get("role") in ROLES
            and isinstance(item.get("content"), str)
        ):
            raise BadFile(f"{where}: entry {index} is not a {{role, content}} message")
        if item["role"] == "user" and not has_visible_text(item["content"]):
            raise BadFile(f"{where}: entry {index} is a user message with no visible character")
        entries.append(Entry(item["role"], item["content"]))
    return entries


class SeedImporter:
    def __init__(
        self,
        directory: Path,
        *,
        dry_run: bool = False,
        summaries_user: str | None = None,
        write: Callable[[str], None] = print,
    ):
        self.directory = Path(directory)
        self.dry_run = dry_run
        self.summaries_user = summaries_user
        self.write = write
        self.report = SeedReport()
        self._pending_users: list[str] = []
        self._counts: Counter = Counter()

    # -- the run ----------------------------------------------------------------------------

    def run(self) -> SeedReport:
        if not self.directory.is_dir():
            raise BadFile(f"{self.directory} is not a directory")
        files = discover(self.directory)
        self.report.files = len(files)
        try:
            with transaction.atomic():
                for number, seed_file in enumerate(files, start=1):
                    self._one(number, len(files), seed_file)
                if self.dry_run:
                    raise _DryRun()
        except _DryRun:
            pass
        return self.report

    def _one(self, number: int, total: int, seed_file: SeedFile) -> None:
        name = seed_file.path.relative_to(self.directory).as_posix()
        prefix = f"[{number:>{len(str(total))}}/{total}] {name}"
        self._pending_users, self._counts = [], Counter()
        try:
            with transaction.atomic():
                notes = getattr(self, f"_import_{seed_file.kind}")(seed_file)
        except BadFile as error:
            self.report.bad.append((name, str(error)))
            self.write(f"{prefix}: SKIPPED, {error}")
            return
        except (ValidationError, ChatError, DatabaseError, ValueError, TypeError) as error:
            message = (
                "; ".join(error.messages) if isinstance(error, ValidationError) else str(error)
            )
            self.report.bad.append((name, message))
            self.write(f"{prefix}: SKIPPED, {message}")
            return
        self.report.created.update(self._counts)
        for username in self._pending_users:
            self.report.users_created.append(username)
            self.write(
                f"{'Would create' if self.dry_run else 'Created'} user {username} with an "
                "unusable password "
                f"(set one with: manage.py changepassword {username})."
            )
        made = describe(self._counts) or "nothing new"
        extra = f" ({'; '.join(notes)})" if notes else ""
        self.write(f"{prefix}: {made}{extra}")

    # -- helpers ----------------------------------------------------------------------------

    def _load(self, seed_file: SeedFile) -> Any:
        try:
            text = seed_file.path.read_text(encoding="utf-8")
            return jsonsafe.loads(text, max_depth=SEED_MAX_DEPTH)
        except UnicodeDecodeError as error:
            raise BadFile(f"not UTF-8 text ({error.reason})") from error
        except json.JSONDecodeError as error:
            raise BadFile(f"not valid JSON ({error.msg}, line {error.lineno})") from error
        except jsonsafe.JSONRejected as error:
            raise BadFile(f"not JSON that can be imported: {error}") from error
        except OSError as error:
            raise BadFile(f"cannot be read ({error.strerror})") from error

    def _user(self, username: str):
        if not username:
            raise BadFile("the file name does not say which user it belongs to")
        try:
            UnicodeUsernameValidator()(username)
        except ValidationError as error:
            raise BadFile(f"{username!r} is not a valid username") from error
        User = get_user_model()
        user = User.objects.filter(**{User.USERNAME_FIELD: username}).first()
        if user is None:
            user = User(**{User.USERNAME_FIELD: username})
            user.set_unusable_password()
            user.save()
            self._pending_users.append(username)
            self._counts["users"] += 1
        return user

    def _thread(self, user, marker: str, title: str, entries: list[Entry]) -> list[str]:
        """Store ``entries`` as one conversation, or add those beyond what a rerun finds."""
        notes = []
        system = [e for e in entries if e.role == "system"]
        entries = [e for e in entries if e.role != "system"]
        if system:
            notes.append(
                f"{len(system)} system prompt{'s' if len(system) > 1 else ''} not imported"
            )
        existing = (
            Message.objects.filter(conversation__user=user, client_id=marker)
            .select_related("conversation")
            .first()
        )
        if existing is None:
            if not entries:
                return notes
            conversation = conversation_create(user=user, title=title)
            self._counts["conversations"] += 1
            first, rest = entries[0], entries[1:]
            message_create(
                conversation=conversation,
                role=first.role,
                content=first.content,
                created_at=first.created_at,
                client_id=marker,
            )
            self._counts["messages"] += 1
        else:
            conversation = existing.conversation
            stored = list(
                Message.objects.filter(conversation=conversation)
                .order_by("created_at", "id")
                .values_list("role", "content")
            )
            if [(e.role, e.content) for e in entries[: len(stored)]] != stored[: len(entries)]:
                notes.append("the conversation changed since it was imported; nothing added")
                return notes
            rest = entries[len(stored) :]
        if rest:
            message_create_many(
                conversation=conversation,
                messages=[NewMessage(e.role, e.content, e.created_at) for e in rest],
            )
            self._counts["messages"] += len(rest)
        return notes

    # -- the formats ------------------------------------------------------------------------

    def _import_memory(self, seed_file: SeedFile) -> list[str]:
        entries = _messages(self._load(seed_file), "the history")
        user = self._user(seed_file.username)
        return self._thread(user, _marker("user_memory"), "Imported history", entries)

    def _import_session(self, seed_file: SeedFile) -> list[str]:
        data = self._load(seed_file)
        if not isinstance(data, dict) or "history" not in data:
            raise BadFile("a session must be an object with a 'history' list")
        when = _when(data.get("last_interaction"))
        entries = _messages(data["history"], "history")
        for entry in entries:
            entry.created_at = when
        user = self._user(seed_file.username)
        return self._thread(user, _marker("sessions"), "Imported session", entries)

    def _import_profile(self, seed_file: SeedFile) -> list[str]:
        data = self._load(seed_file)
        if not isinstance(data, dict):
            raise BadFile("a profile must be an object")
        style = data.get("communication_style") or {}
        preferences = data.get("preferences") or {}
        history = data.get("interaction_history") or []
        if not (
            isinstance(style, dict) and isinstance(preferences, dict) and isinstance(history, list)
        ):
            raise BadFile(
                "communication_style and preferences must be objects, interaction_history a list"
            )
        values = {}
        for key, metric in STYLE_MAP.items():
            if key not in style:
                continue
            value = style[key]
            if isinstance(value, bool):
                value = 1.0 if value else 0.0
            if not isinstance(value, int | float) or not 0 <= value <= 1:
                raise BadFile(f"communication_style.{key} must be from 0 to 1")
            values[metric] = float(value)
        entries = []
        for index, item in enumerate(history):
            if not (
                isinstance(item, dict)
                and isinstance(item.get("user_message"), str)
                and isinstance(item.get("assistant_response"), str)
            ):
                raise BadFile(
                    f"interaction_history[{index}] needs user_message and assistant_response"
                )
            when = _when(item.get("timestamp"))
            entries += [
                Entry("user", item["user_message"], when),
                Entry("assistant", item["assistant_response"], when),
            ]
        user = self._user(seed_file.username)
        notes = self._style(user, values, observed=len(history))
        notes += self._preferences(user, preferences)
        notes += self._thread(user, _marker("user_profiles"), "Imported interactions", entries)
        return notes

    def _style(self, user, values: dict[str, float], *, observed: int) -> list[str]:
        if not values:
            return []
        profile, _ = UserProfile.objects.select_for_update().get_or_create(user=user)
        changed = [name for name, value in values.items() if getattr(profile, name) != value]
        if not changed:
            return []
        for name in changed:
            setattr(profile, name, values[name])
            setattr(profile, f"{name}_count", max(getattr(profile, f"{name}_count"), observed))
        profile.messages_observed = max(profile.messages_observed, observed)
        profile.style_updated_at = profile.updated_at = timezone.now()
        attribute(profile, reason=REASON)
        profile.save()
        self._counts["style metrics"] += len(changed)
        return []

    def _preferences(self, user, preferences: dict) -> list[str]:
        wanted = {k: preferences[k] for k in PREFERENCE_KEYS if k in preferences}
        if "topics_of_interest" in wanted and not isinstance(wanted["topics_of_interest"], list):
            wanted["topics_of_interest"] = [str(wanted["topics_of_interest"])]
        profile = UserProfile.objects.filter(user=user).first()
        if profile is not None:
            wanted = {k: v for k, v in wanted.items() if getattr(profile, k) != v}
        notes = []
        while wanted:
            try:
                profile_update_preferences(user=user, preferences=wanted)
            except ValidationError as error:
                bad = set(getattr(error, "message_dict", {})) & set(wanted)
                if not bad:
                    raise
                for name in sorted(bad):
                    why = " ".join(error.message_dict[name])
                    notes.append(f"preference {name}={wanted.pop(name)!r} not imported: {why}")
                continue
            self._counts["preferences"] += len(wanted)
            break
        return notes

    def _import_knowledge(self, seed_file: SeedFile) -> list[str]:
        data = self._load(seed_file)
        if not isinstance(data, list):
            raise BadFile("a knowledge file must be a list of entries")
        messages, facts = [], []
        for index, item in enumerate(data):
            if not isinstance(item, dict) or "content" not in item:
                raise BadFile(f"entry {index} has no 'content'")
            when = _when(item.get("timestamp"))
            content = item["content"]
            if isinstance(content, dict) and set(content) == {"role", "message"}:
                if content["role"] not in ROLES or not isinstance(content["message"], str):
                    raise BadFile(f"entry {index} is not a valid message")
                messages.append(Entry(content["role"], content["message"], when))
            else:
                facts.append((content, when))
        user = self._user(seed_file.username)
        category = seed_file.category
        notes = []
        if messages:
            notes += self._thread(
                user,
                _marker(f"knowledge:{category}"),
                f"Imported {category.replace('_', ' ')}",
                messages,
            )
        fact_category = CATEGORY_MAP.get(category.lower(), Fact.Category.OTHER)
        for content, when in facts:
            for subject, text in _fact_texts(content):
                self._fact(user, fact_category, subject, text, when)
        return notes

    def _fact(self, user, category: str, subject: str, text: str, when: datetime | None) -> None:
        key = extraction.normalise_key(text)
        if not key or Fact.objects.filter(user=user, dedupe_key=key).exists():
            return
        outcome = fact_remember(
            user=user,
            conversation=None,
            category=category,
            subject=subject,
            text=text,
            importance=0.5,
        )
        if when is not None:
            Fact.objects.filter(user=user, dedupe_key=key, status=Fact.Status.ACTIVE).update(
                created_at=when, updated_at=when
            )
        self._counts["facts"] += 1
        if outcome == "superseded":
            self._counts["facts superseded"] += 1

    def _import_summaries(self, seed_file: SeedFile) -> list[str]:
        data = self._load(seed_file)
        if not isinstance(data, list):
            raise BadFile("summaries.json must be a list")
        username = self.summaries_user
        if not username:
            owners = {f.username for f in discover(self.directory) if f.username}
            if len(owners) != 1:
                raise BadFile("it does not say whose summaries they are: pass --summaries-user")
            username = owners.pop()
        valid, failed = [], 0
        for index, item in enumerate(data):
            if not isinstance(item, dict):
                raise BadFile(f"entry {index} is not an object")
            if "error" in item and "summary" not in item:
                failed += 1
                continue
            if not isinstance(item.get("summary"), str):
                raise BadFile(f"entry {index} has no summary text")
            count = item.get("message_count", 0)
            if not isinstance(count, int) or count < 0:
                raise BadFile(f"entry {index}: message_count must be a whole number")
            valid.append((item["summary"], count, _when(item.get("timestamp"))))
        user = self._user(username)
        conversation = self._summary_conversation(user)
        existing = set(
            Summary.objects.filter(conversation=conversation).values_list("text", flat=True)
        )
        for text, count, when in valid:
            if text in existing:
                continue
            summary = summary_create(
                conversation=conversation,
                extraction=Extraction(summary=text),
                covered_through=0,
                message_count=count,
                source=Summary.Source.STAFF,
                model="seed import",
            )
            if when is not None:
                Summary.objects.filter(pk=summary.pk).update(created_at=when)
            existing.add(text)
            self._counts["summary versions"] += 1
        notes = [f"{failed} failed summar{'ies' if failed > 1 else 'y'} skipped"] if failed else []
        return notes

    def _summary_conversation(self, user) -> Conversation:
        for name in ("user_memory", "sessions"):
            message = (
                Message.objects.filter(conversation__user=user, client_id=_marker(name))
                .select_related("conversation")
                .first()
            )
            if message is not None:
                return message.conversation
        conversation = Conversation.objects.filter(user=user, title="Imported summaries").first()
        if conversation is None:
            conversation = conversation_create(user=user, title="Imported summaries")
            self._counts["conversations"] += 1
        return conversation


class _DryRun(Exception):
    pass


_SINGULAR = {
    "users": "user",
    "conversations": "conversation",
    "messages": "message",
    "facts": "fact",
    "facts superseded": "fact superseded",
    "summary versions": "summary version",
    "style metrics": "style metric",
    "preferences": "preference",
}


def describe(counts: Counter) -> str:
    """ "1 user, 2 messages" """
    return ", ".join(
        f"{n} {_SINGULAR.get(what, what) if n == 1 else what}" for what, n in counts.items() if n
    )


def _fact_texts(content: Any) -> list[tuple[str, str]]:
    """(subject, text) pairs from a knowledge entry's content."""
    if isinstance(content, dict):
        pairs = []
        for key, value in content.items():
            label = " ".join(str(key).replace("_", " ").split())
            pairs.append((label.lower(), f"{label.capitalize()}: {_as_text(value)}"))
        return pairs
    return [("", _as_text(content))]


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return " ".join(value.split())
    if isinstance(value, list):
        return ", ".join(_as_text(v) for v in value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
