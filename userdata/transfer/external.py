"""Conversations exported by another assistant (ChatGPT, Claude), read into one plain shape.

Pure: no Django. ``ExportReader`` reads an upload (``conversations.json``, or a zip holding
it) as a stream: the JSON is parsed item by item (``ijson``), so an export of hundreds of
megabytes never sits whole in memory, neither as bytes nor as Python objects. Its first
conversation tells which assistant made it (``Shape``: ``chatgpt.SHAPE``, ``claude.SHAPE``);
``conversation`` reads the part every format shares (title, id, dates) and hands the messages
to the format's own reader. Every check happens here, before anything is stored: a file
refused raises ``BadFile`` whose text names what is wrong and where ("conversation 3
(“Trip”): …")."""

from __future__ import annotations

import io
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import IO, Any

import ijson

CONVERSATIONS_FILE = "conversations.json"
# ChatGPT opened to the public at the end of 2022; a date long before or after now is not a
# date of a real conversation (a clock, a unit mistaken: milliseconds for seconds).
EARLIEST = datetime(2015, 1, 1, tzinfo=UTC)
FUTURE_SLACK = timedelta(days=1)
TITLE_MAX_CHARS = 200
READ_BYTES = 64 * 1024  # what the parser asks for at a time
ZIP_MAGIC = b"PK\x03\x04"
UTF8_BOM = b"\xef\xbb\xbf"
JSON_WHITESPACE = b" \t\r\n"
NOT_TEXT = "The file is not text (JSON in UTF-8): is it the right file?"


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


# A format's messages: (the conversation's object, how errors name it, its creation date, now)
# → its messages in reading order, unjoined (``conversation`` orders and joins them).
MessagesReader = Callable[[dict, str, datetime, datetime], list[ImportedMessage]]


@dataclass(frozen=True)
class Shape:
    """One assistant's export: the keys of what every conversation has, and its messages'
    reader."""

    source: str  # "chatgpt" or "claude": ``ChatImport.Source``
    name: str  # as the user knows it, in errors
    title_key: str
    id_keys: tuple[str, ...]  # the first one present is the id; errors name the last
    created_key: str
    updated_key: str
    date: Callable[..., datetime]  # (value, where, *, now) → a UTC date
    messages_key: str  # what tells the format: a key only its conversations have
    messages: MessagesReader

    def looks_like(self, item: dict) -> bool:
        return self.messages_key in item


def _shapes() -> tuple[Shape, ...]:
    from userdata.transfer import chatgpt, claude  # they import this module's helpers

    return (chatgpt.SHAPE, claude.SHAPE)


def conversation(item: Any, n: int, shape: Shape, *, now: datetime) -> ImportedConversation:
    """The ``n``-th item of the export (from 0) as one conversation of ``shape``."""
    if not isinstance(item, dict):
        raise BadFile(f"conversation {n + 1}: must be an object, as every item of the list.")
    at = where(n, item.get(shape.title_key))
    if shape.messages_key not in item:
        raise BadFile(
            f"{at}: has no “{shape.messages_key}” (a {shape.name} conversation's messages)."
        )
    title = clean_title(item.get(shape.title_key), at)
    raw_id = next((item[key] for key in shape.id_keys if item.get(key)), None)
    ident = source_id(raw_id, at, shape.id_keys[-1])
    created = shape.date(item.get(shape.created_key), f"{at}: {shape.created_key}", now=now)
    raw_updated = item.get(shape.updated_key)
    updated = (
        created
        if raw_updated is None
        else shape.date(raw_updated, f"{at}: {shape.updated_key}", now=now)
    )
    ordered = in_order(shape.messages(item, at, created, now))
    if ordered:
        updated = max(updated, ordered[-1].created_at)
    return ImportedConversation(
        source_id=ident,
        title=title,
        created_at=created,
        updated_at=max(updated, created),
        messages=ordered,
    )


def read_export(
    upload: bytes | IO[bytes], *, max_bytes: int, now: datetime | None = None
) -> Export:
    """All the conversations of an upload at once (a small file's, a test's); an import
    reads them one at a time through ``ExportReader``."""
    reader = ExportReader(io_of(upload), max_bytes=max_bytes, now=now)
    conversations = list(reader)
    return Export(reader.source, conversations, reader.skipped_empty)


def io_of(upload: bytes | IO[bytes]) -> IO[bytes]:
    return io.BytesIO(upload) if isinstance(upload, bytes | bytearray) else upload


class ExportReader:
    """The conversations of an upload, read and checked one at a time (those with no message
    left are counted in ``skipped_empty``, not given). ``source`` is known once the first is
    read ("chatgpt" for an empty list). Iterating raises ``BadFile`` at the first thing wrong;
    the caller keeps nothing of a refused file."""

    def __init__(self, upload: IO[bytes], *, max_bytes: int, now: datetime | None = None):
        self._upload = upload
        self._max_bytes = max_bytes
        self._now = now or datetime.now(UTC)
        self.source = "chatgpt"
        self.skipped_empty = 0
        self._read = 0  # items read: where a broken file's error says it broke
        self._last_title = ""

    def __iter__(self) -> Iterator[ImportedConversation]:
        with _conversations_stream(self._upload, max_bytes=self._max_bytes) as stream:
            items = self._items(stream)
            first = next(items, None)
            if first is None:
                return
            shape = self._shape_of(first, items)
            self.source = shape.source
            seen: dict[str, int] = {}
            for n, item in enumerate(_chain(first, items)):
                parsed = conversation(item, n, shape, now=self._now)
                self._last_title = parsed.title
                if parsed.source_id in seen:
                    raise BadFile(
                        f"{where(n, parsed.title)}: its id {parsed.source_id!r} is also "
                        f"conversation {seen[parsed.source_id] + 1}'s."
                    )
                seen[parsed.source_id] = n
                if parsed.messages:
                    yield parsed
                else:
                    self.skipped_empty += 1

    def _shape_of(self, first: Any, items: Iterator[Any]) -> Shape:
        if not isinstance(first, dict):
            # Nothing but an object is a conversation: the first object says whether this
            # is an export with a wrong item first or no export at all.
            first = next((item for item in items if isinstance(item, dict)), None)
            if first is None:
                raise BadFile(
                    "This is not a ChatGPT or Claude export: its items are not conversations."
                )
            if any(shape.looks_like(first) for shape in _shapes()):
                raise BadFile("conversation 1: must be an object, as every item of the list.")
        for shape in _shapes():
            if shape.looks_like(first):
                return shape
        keys = ", ".join(sorted(map(str, first))[:6]) or "none"
        raise BadFile(
            "This is not a ChatGPT or Claude export: a ChatGPT conversation has a "
            "“mapping”, a Claude conversation “chat_messages”; the first item here has "
            f"{keys}."
        )

    def _items(self, stream: _Stream) -> Iterator[Any]:
        """The list's items as Python values (floats as ``float``: ChatGPT's dates)."""
        items = ijson.items(stream, "item", use_float=True)
        while True:
            try:
                item = next(items)
            except StopIteration:
                return
            except ijson.JSONError as error:
                raise BadFile(self._broken(error)) from None
            self._read += 1
            yield item

    def _broken(self, error: Exception) -> str:
        reason = _yajl_reason(error)
        if "UTF8" in reason:
            return NOT_TEXT
        after = (
            f" after {where(self._read - 1, self._last_title)}"
            if self._read
            else " in its first conversation"
        )
        return (
            f"The file is not valid JSON ({reason}){after}. Is it complete (not cut off "
            "while downloading)?"
        )


def _chain(first: Any, rest: Iterator[Any]) -> Iterator[Any]:
    yield first
    yield from rest


def _yajl_reason(error: Exception) -> str:
    """The parser's message without its picture of the place ("parse error: premature EOF")."""
    text = str(error)
    if text[:2] in ("b'", 'b"'):  # the C parser's message as the repr of bytes
        text = text[2:]
    return text.replace("\\n", "\n").split("\n", 1)[0].strip().rstrip(".") or "unreadable"


@contextmanager
def _conversations_stream(upload: IO[bytes], *, max_bytes: int) -> Iterator[_Stream]:
    """The bytes of ``conversations.json``: the upload itself, or the zip's member; checked
    to be a JSON list (``_Stream.expect_list``)."""
    upload.seek(0)
    zipped = upload.read(len(ZIP_MAGIC)) == ZIP_MAGIC
    upload.seek(0)
    if not zipped:
        stream = _Stream(upload, max_bytes=max_bytes, too_large=_too_large(max_bytes))
        stream.expect_list()
        yield stream
        return
    try:
        archive = zipfile.ZipFile(upload)
    except (zipfile.BadZipFile, OSError, EOFError) as error:
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
            member = archive.open(info)
        except (zipfile.BadZipFile, OSError, EOFError, RuntimeError) as error:
            raise BadFile(f"{CONVERSATIONS_FILE} in the zip could not be read: {error}.") from None
        with member:
            # The zip's directory said less than the member holds: refused at the limit.
            stream = _Stream(
                member,
                max_bytes=max_bytes,
                too_large=f"{CONVERSATIONS_FILE} in the zip is larger than it says.",
                unreadable=f"{CONVERSATIONS_FILE} in the zip could not be read",
            )
            stream.expect_list()
            yield stream


def _too_large(max_bytes: int) -> str:
    return f"The file is larger than an import takes ({max_bytes / 1e6:,.0f} MB)."


class _Stream:
    """A file read by the JSON parser: at most ``max_bytes``, a UTF-8 mark at its start left
    out, a zip member's read errors said as ``BadFile``."""

    def __init__(
        self, raw: IO[bytes], *, max_bytes: int, too_large: str, unreadable: str = ""
    ) -> None:
        self._raw = raw
        self._max_bytes = max_bytes
        self._too_large = too_large
        self._unreadable = unreadable
        self._pending = b""  # read ahead by ``expect_list``, given first
        self.read_bytes = 0

    def read(self, size: int = -1) -> bytes:
        if size == 0:  # the parser asks, to learn whether the file gives bytes or text
            return b""
        if self._pending:
            chunk, self._pending = self._pending, b""
            return chunk
        try:
            chunk = self._raw.read(READ_BYTES if size is None or size < 0 else size)
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as error:
            if not self._unreadable:
                raise
            raise BadFile(f"{self._unreadable}: {error}.") from None
        self.read_bytes += len(chunk)
        if self.read_bytes > self._max_bytes:
            raise BadFile(self._too_large)
        return chunk

    def expect_list(self) -> None:
        """Read up to the JSON's first character: anything but a list is refused here,
        saying what the file holds (after reading it through: a broken file is said broken)."""
        head = self.read(READ_BYTES)
        if head.startswith(UTF8_BOM):
            head = head[len(UTF8_BOM) :]
        while not head.lstrip(JSON_WHITESPACE):
            chunk = self.read(READ_BYTES)
            if not chunk:
                break
            head += chunk
        body = head.lstrip(JSON_WHITESPACE)
        self._pending = head
        first = body[:1]
        if first == b"[":
            return
        if not first:
            raise BadFile("The file is empty: is it the right file?")
        try:
            body[:64].decode("utf-8")
        except UnicodeDecodeError as error:
            if error.start < 60:  # not a character cut at the end of the slice
                raise BadFile(NOT_TEXT) from None
        try:
            for _event in ijson.basic_parse(self, use_float=True):
                pass
        except ijson.JSONError as error:
            raise BadFile(
                f"The file is not valid JSON ({_yajl_reason(error)}). Is it complete (not cut "
                "off while downloading)?"
            ) from None
        kinds = {b"{": "an object", b'"': "text", b"n": "null", b"t": "true", b"f": "false"}
        raise BadFile(
            "This is not a ChatGPT or Claude export: conversations.json holds a list of "
            f"conversations, this file holds {kinds.get(first, 'a number')}."
        )


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


def storable(text: str) -> str:
    """Text a database stores: no NUL, and a lone surrogate (JSON's "\\ud800", which is no
    character) replaced, as what is only read back is checked, not every string of the file."""
    text = text.replace("\x00", "")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


def clean_title(value, at: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadFile(f"{at}: the title must be text, not {_kind(value)}.")
    return " ".join(storable(value).split())[:TITLE_MAX_CHARS]


def source_id(value, at: str, name: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 100:
        raise BadFile(f"{at}: “{name}” must be the conversation's id (text).")
    return storable(value.strip())


def in_order(messages: list[ImportedMessage]) -> tuple[ImportedMessage, ...]:
    """Messages as read along the conversation, consecutive ones of one role joined (a reply
    split by a tool call the import leaves out is one reply), dates never going back (the
    chat shows messages by date)."""
    out: list[ImportedMessage] = []
    for message in messages:
        text = storable(message.text).strip()
        if not text:
            continue
        at = max(message.created_at, out[-1].created_at) if out else message.created_at
        if out and out[-1].role == message.role:
            out[-1] = ImportedMessage(out[-1].role, f"{out[-1].text}\n\n{text}", out[-1].created_at)
        else:
            out.append(ImportedMessage(message.role, text, at))
    return tuple(out)
