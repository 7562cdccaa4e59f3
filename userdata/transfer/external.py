"""Conversations exported by another assistant (ChatGPT, Claude), read into one plain shape.

Pure: no Django (``chat.jsonsafe`` is plain Python). ``read_export`` takes the uploaded bytes
(``conversations.json``, or a zip holding it), finds which assistant made it and hands it to
that parser (``chatgpt.parse``, ``claude.parse``). Every check happens here, before anything
is stored: a file refused raises ``BadFile`` whose text names what is wrong and where
("conversation 3 (“Trip”): …")."""

from __future__ import annotations

import io
import json
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from chat import jsonsafe

CONVERSATIONS_FILE = "conversations.json"
# ChatGPT opened to the public at the end of 2022; a date long before or after now is not a
# date of a real conversation (a clock, a unit mistaken: milliseconds for seconds).
EARLIEST = datetime(2015, 1, 1, tzinfo=UTC)
FUTURE_SLACK = timedelta(days=1)
TITLE_MAX_CHARS = 200
MAX_DEPTH = 64  # ChatGPT's deepest (a message's metadata) is about 12 levels down


class BadFile(ValueError):
    """The upload cannot be imported; ``str()`` says what is wrong, in words for the page."""


@dataclass(frozen=True)
class ImportedMessage:
    role: str  # "user" or "assistant"
    text: str
    created_at: datetime


@dataclass(frozen=True)
class ImportedConversation:
    source_id: str  # the conversation's id in the export: what a second import recognises
    title: str
    created_at: datetime
    updated_at: datetime
    messages: tuple[ImportedMessage, ...]


@dataclass(frozen=True)
class Export:
    source: str  # "chatgpt" or "claude"
    conversations: list[ImportedConversation]
    skipped_empty: int  # conversations with no message left to import


def read_export(data: bytes, *, max_bytes: int, now: datetime | None = None) -> Export:
    """The conversations of an upload: ``conversations.json`` or a zip holding it."""
    from userdata.transfer import chatgpt, claude

    document = _load_json(_conversations_bytes(data, max_bytes=max_bytes))
    now = now or datetime.now(UTC)
    if not isinstance(document, list):
        raise BadFile(
            "This is not a ChatGPT or Claude export: conversations.json holds a list of "
            f"conversations, this file holds {_kind(document)}."
        )
    first = next((item for item in document if isinstance(item, dict)), None)
    if first is None and document:
        raise BadFile("This is not a ChatGPT or Claude export: its items are not conversations.")
    if first is None or chatgpt.looks_like(first):
        parsed, source = chatgpt.parse(document, now=now), "chatgpt"
    elif claude.looks_like(first):
        parsed, source = claude.parse(document, now=now), "claude"
    else:
        keys = ", ".join(sorted(map(str, first))[:6]) or "none"
        raise BadFile(
            "This is not a ChatGPT or Claude export: a ChatGPT conversation has a "
            "“mapping”, a Claude conversation “chat_messages”; the first item here has "
            f"{keys}."
        )
    kept = [c for c in parsed if c.messages]
    return Export(source=source, conversations=kept, skipped_empty=len(parsed) - len(kept))


def _conversations_bytes(data: bytes, *, max_bytes: int) -> bytes:
    if not data.startswith(b"PK\x03\x04"):
        return data
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as error:
        raise BadFile(f"The zip file could not be read: {error}.") from None
    with archive:
        names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == CONVERSATIONS_FILE]
        if not names:
            raise BadFile(
                f"The zip holds no {CONVERSATIONS_FILE}: upload the export's zip as it came, "
                f"or the {CONVERSATIONS_FILE} inside it."
            )
        info = archive.getinfo(min(names, key=len))  # the top-level one if several
        if info.file_size > max_bytes:
            raise BadFile(
                f"{CONVERSATIONS_FILE} in the zip is {info.file_size / 1e6:,.0f} MB unpacked; "
                f"an import reads at most {max_bytes / 1e6:,.0f} MB."
            )
        try:
            with archive.open(info) as member:
                body = member.read(max_bytes + 1)
        except (zipfile.BadZipFile, OSError, EOFError) as error:
            raise BadFile(f"{CONVERSATIONS_FILE} in the zip could not be read: {error}.") from None
    if len(body) > max_bytes:  # the zip's directory said less than it holds
        raise BadFile(f"{CONVERSATIONS_FILE} in the zip is larger than it says.")
    return body


def _load_json(body: bytes):
    try:
        return jsonsafe.loads(body.decode("utf-8-sig"), max_depth=MAX_DEPTH)
    except jsonsafe.JSONRejected as error:
        raise BadFile(f"The file's JSON cannot be imported: {error}") from None
    except UnicodeDecodeError:
        raise BadFile("The file is not text (JSON in UTF-8): is it the right file?") from None
    except json.JSONDecodeError as error:
        raise BadFile(
            f"The file is not valid JSON: {error.msg} at line {error.lineno}, column "
            f"{error.colno}. Is it complete (not cut off while downloading)?"
        ) from None


def _kind(value) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        return "text"
    if value is None:
        return "null"
    return type(value).__name__ if not isinstance(value, bool | int | float) else "a number"


def where(index: int, title: object) -> str:
    """How an error names a conversation: its place (from 1) and its title."""
    if isinstance(title, str) and title.strip():
        short = " ".join(title.split())[:60]
        return f"conversation {index + 1} (“{short}”)"
    return f"conversation {index + 1}"


def check_date(value: datetime, at: str, *, now: datetime) -> datetime:
    if value < EARLIEST or value > now + FUTURE_SLACK:
        raise BadFile(f"{at}: the date {value:%Y-%m-%d %H:%M} UTC is not a plausible date.")
    return value


def epoch_date(value, at: str, *, now: datetime) -> datetime:
    """A Unix time in seconds (ChatGPT's dates)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadFile(f"{at}: must be a Unix time in seconds, not {_kind(value)}.")
    try:
        moment = datetime.fromtimestamp(value, tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise BadFile(f"{at}: {value!r} is not a plausible date.") from None
    return check_date(moment, at, now=now)


def iso_date(value, at: str, *, now: datetime) -> datetime:
    """An ISO 8601 date and time (Claude's dates); without an offset it is taken as UTC."""
    if not isinstance(value, str):
        raise BadFile(f"{at}: must be a date (ISO 8601 text), not {_kind(value)}.")
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise BadFile(f"{at}: {value[:40]!r} is not a date.") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return check_date(moment.astimezone(UTC), at, now=now)


def clean_title(value, at: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadFile(f"{at}: the title must be text, not {_kind(value)}.")
    return " ".join(value.replace("\x00", "").split())[:TITLE_MAX_CHARS]


def source_id(value, at: str, name: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 100:
        raise BadFile(f"{at}: “{name}” must be the conversation's id (text).")
    return value.strip()


def in_order(messages: list[ImportedMessage]) -> tuple[ImportedMessage, ...]:
    """Messages as read along the conversation, consecutive ones of one role joined (a reply
    split by a tool call the import leaves out is one reply), dates never going back (the
    chat shows messages by date)."""
    out: list[ImportedMessage] = []
    for message in messages:
        text = message.text.replace("\x00", "").strip()
        if not text:
            continue
        at = max(message.created_at, out[-1].created_at) if out else message.created_at
        if out and out[-1].role == message.role:
            out[-1] = ImportedMessage(out[-1].role, f"{out[-1].text}\n\n{text}", out[-1].created_at)
        else:
            out.append(ImportedMessage(message.role, text, at))
    return tuple(out)


def unique_ids(conversations: list[ImportedConversation]) -> None:
    seen: dict[str, int] = {}
    for n, conversation in enumerate(conversations):
        if conversation.source_id in seen:
            raise BadFile(
                f"{where(n, conversation.title)}: its id {conversation.source_id!r} is also "
                f"conversation {seen[conversation.source_id] + 1}'s."
            )
        seen[conversation.source_id] = n
