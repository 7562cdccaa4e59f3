"""The chat websocket's frames in one place: what the browser may send (checked here, handed on
as typed values), what the server sends (built here, one function per frame), and the events
the consumers of a conversation's tabs pass each other through the channel layer.

docs/protocol.md describes the same frames and tests/chat/test_protocol.py keeps the two in
step. static/js/chat.js reads these dicts as JSON: keep their keys and key order as they are.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, TypedDict, cast

from django.conf import settings
from django.template.loader import render_to_string

from chat import jsonsafe
from chat.models import Message
from chat.rendering import render_stored
from chat.services import ChatError
from llm.errors import NOT_RETRYABLE
from memory.report import ContextReport, report_read
from web.visible import has_visible_text

CLIENT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # fullmatch: "$" would let "\n" end one
MESSAGE_TEMPLATE = "chat/_message.html"
# No frame nests deeper than this (an object holding a value): deeper is not ours.
MAX_DEPTH = 4


class FrameError(ChatError):
    """A frame the server will not act on; sent back as an ``error`` frame (``bad_frame``
    unless the text itself is refused: ``empty``, ``too_long``, ``not_found``)."""

    def __init__(self, message: str, code: str = "bad_frame"):
        super().__init__(message, code=code)


# -- browser -> server ------------------------------------------------------------------------


@dataclass(frozen=True)
class Send:
    text: str
    client_id: str

    @classmethod
    def parse(cls, frame: dict) -> Send:
        text, client_id = frame.get("text"), frame.get("client_id", "")
        if not isinstance(text, str):
            raise FrameError("A message must be text.")
        if not isinstance(client_id, str) or (client_id and not CLIENT_ID.fullmatch(client_id)):
            raise FrameError("client_id must be 1-64 letters, digits, '-' or '_'.")
        return cls(text=_text(text), client_id=client_id)


@dataclass(frozen=True)
class Stop:
    @classmethod
    def parse(cls, frame: dict) -> Stop:
        return cls()


@dataclass(frozen=True)
class Retry:
    message_id: int

    @classmethod
    def parse(cls, frame: dict) -> Retry:
        return cls(message_id=_integer(frame, "message_id", "retry"))


@dataclass(frozen=True)
class Regenerate:
    message_id: int  # the user message whose reply is written again

    @classmethod
    def parse(cls, frame: dict) -> Regenerate:
        return cls(message_id=_integer(frame, "message_id", "regenerate"))


@dataclass(frozen=True)
class Edit:
    message_id: int  # the conversation's last user message
    text: str

    @classmethod
    def parse(cls, frame: dict) -> Edit:
        message_id = _integer(frame, "message_id", "edit")
        return cls(message_id=message_id, text=_text(frame.get("text")))


@dataclass(frozen=True)
class SwitchBranch:
    message_id: int  # a question of the conversation: show the branch it starts

    @classmethod
    def parse(cls, frame: dict) -> SwitchBranch:
        return cls(message_id=_integer(frame, "message_id", "switch_branch"))


@dataclass(frozen=True)
class Continue:
    message_id: int  # the cut reply's

    @classmethod
    def parse(cls, frame: dict) -> Continue:
        return cls(message_id=_integer(frame, "message_id", "continue"))


@dataclass(frozen=True)
class Sync:
    reply_id: int

    @classmethod
    def parse(cls, frame: dict) -> Sync:
        return cls(reply_id=_integer(frame, "reply_id", "sync"))


@dataclass(frozen=True)
class MemoryUndo:
    event_id: int  # a "Remembered: ..." notice of this conversation

    @classmethod
    def parse(cls, frame: dict) -> MemoryUndo:
        return cls(event_id=_integer(frame, "event_id", "memory_undo"))


ClientFrame = Send | Stop | Retry | Continue | Regenerate | Edit | SwitchBranch | Sync | MemoryUndo
CLIENT_FRAMES: dict[str, type[ClientFrame]] = {
    "send": Send,
    "stop": Stop,
    "retry": Retry,
    "continue": Continue,
    "regenerate": Regenerate,
    "edit": Edit,
    "switch_branch": SwitchBranch,
    "sync": Sync,
    "memory_undo": MemoryUndo,
}


def _text(text: object) -> str:
    """A user message's text: not empty, within MAX_MESSAGE_CHARS."""
    if not isinstance(text, str):
        raise FrameError("A message must be text.")
    if not has_visible_text(text):  # spaces, NUL, zero-width and bidi marks show nothing
        raise FrameError("The message is empty.", code="empty")
    limit = settings.MEMORYCHAT_MAX_MESSAGE_CHARS
    if len(text) > limit:
        raise FrameError(
            f"The message is too long ({len(text):,} characters; the limit is {limit:,}).",
            code="too_long",
        )
    return text


def _integer(frame: dict, field: str, frame_type: str) -> int:
    value = frame.get(field)
    # JSON true is not an id; nor is a number no id column can hold (past it, the database
    # driver fails rather than finding nothing).
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= jsonsafe.MAX_ID:
        raise FrameError(f"{frame_type} needs a {field} (an integer).")
    return value


def decode(text_data: str | None) -> object:
    """The JSON of a websocket message. Refused with an error frame, never an exception:
    binary messages, frames longer than any message at the limit could be (``too_long``,
    unparsed), bad JSON, NaN or Infinity, nesting deeper than ``MAX_DEPTH`` and strings with
    lone surrogates (``bad_frame``)."""
    if text_data is None:
        raise FrameError("Frames must be JSON text.")
    if len(text_data) > settings.MEMORYCHAT_MAX_FRAME_CHARS:
        raise FrameError(
            f"That frame is too large ({len(text_data):,} characters); a message may have at "
            f"most {settings.MEMORYCHAT_MAX_MESSAGE_CHARS:,} characters.",
            code="too_long",
        )
    try:
        return jsonsafe.loads(text_data, max_depth=MAX_DEPTH)
    except jsonsafe.JSONRejected as rejected:
        raise FrameError(f"That frame is not one the chat takes: {rejected}") from None
    except ValueError:
        raise FrameError("That frame is not valid JSON.") from None


def parse(content: object) -> ClientFrame:
    """A decoded frame, checked; FrameError says what is wrong with it."""
    if not isinstance(content, dict):
        raise FrameError("A frame must be a JSON object.")
    frame_type = content.get("type")
    frame_class = CLIENT_FRAMES.get(frame_type) if isinstance(frame_type, str) else None
    if frame_class is None:
        shown = repr(frame_type)
        shown = shown if len(shown) <= 40 else shown[:39] + "…"
        raise FrameError(f"Unknown frame type {shown}.")
    return frame_class.parse(content)


def error_client_id(content: object) -> str:
    """The client_id an error about ``content`` echoes, so the page knows which of its
    messages was refused: the frame's own when it is a string, even if it is malformed."""
    client_id = content.get("client_id", "") if isinstance(content, dict) else ""
    return client_id if isinstance(client_id, str) else ""


# -- server -> browser ------------------------------------------------------------------------
# Typed like the browser's frames: one TypedDict per frame (the dicts are what is sent).


class ReadyFrame(TypedDict):
    type: Literal["ready"]
    streaming: int | None
    offline: bool


class UserMessageFrame(TypedDict):
    type: Literal["user_message"]
    id: int
    client_id: str
    article: str


class TitleFrame(TypedDict):
    type: Literal["title"]
    title: str


class ReplyStartFrame(TypedDict):
    type: Literal["reply_start"]
    id: int
    reply_to: int | None
    article: str


class ChunkFrame(TypedDict):
    type: Literal["chunk"]
    id: int
    seq: int
    text: str
    html: str
    tail: str


class ResumeFrame(TypedDict):
    type: Literal["resume"]
    id: int
    reply_to: int | None
    seq: int
    text: str
    html: str
    tail: str
    article: str


class SnapshotFrame(TypedDict):
    type: Literal["snapshot"]
    id: int
    seq: int | None
    text: str
    html: str


class ContextFigures(TypedDict):
    used: int | None
    limit: int | None
    budget: int | None
    estimated: bool


# "continue" is a Python keyword: the functional form spells it.
ReplyEndFrame = TypedDict(
    "ReplyEndFrame",
    {
        "type": Literal["reply_end"],
        "id": int,
        "reply_to": int | None,
        "status": str,
        "error": str,
        "retry": bool,
        "continue": bool,
        "saved": bool,
        "html": str,
        "article": str,
        "context": ContextFigures,
    },
)


class BranchShownFrame(TypedDict):
    type: Literal["branch_shown"]
    replaces: int
    html: str
    context: ContextFigures


class MemoryEventFrame(TypedDict):
    type: Literal["memory_event"]
    id: int
    message_id: int | None
    html: str


class MemoryElsewhereFrame(TypedDict):
    type: Literal["memory_elsewhere"]
    id: int
    conversation_id: int
    html: str


class ErrorFrame(TypedDict):
    type: Literal["error"]
    code: str
    message: str
    client_id: str


ServerFrame = (
    ReadyFrame
    | UserMessageFrame
    | TitleFrame
    | ReplyStartFrame
    | ChunkFrame
    | ResumeFrame
    | SnapshotFrame
    | ReplyEndFrame
    | BranchShownFrame
    | MemoryEventFrame
    | MemoryElsewhereFrame
    | ErrorFrame
)


def ready(*, streaming: int | None, offline: bool) -> ReadyFrame:
    return {"type": "ready", "streaming": streaming, "offline": offline}


def article(message: Message) -> str:
    """A message as the page shows it: the one template the page itself renders them with
    (chat/_message.html), so the script only swaps it in."""
    return render_to_string(MESSAGE_TEMPLATE, _article_context(message))


def _article_context(message: Message) -> dict:
    # The page's own variables, said absent: each use of a name the context lacks costs the
    # template engine an exception (5 µs an article).
    return {"message": message, "highlight": None, "found": None}


def user_message(message: Message) -> UserMessageFrame:
    # The article shows the text as typed (escaped, not Markdown).
    return {
        "type": "user_message",
        "id": message.pk,
        "client_id": message.client_id,
        "article": article(message),
    }


def title(title: str) -> TitleFrame:
    return {"type": "title", "title": title}


def reply_start(reply: Message) -> ReplyStartFrame:
    """The reply's article in its waiting state ("Thinking…")."""
    return {
        "type": "reply_start",
        "id": reply.pk,
        "reply_to": reply.reply_to_id,
        "article": article(reply),
    }


def chunk(*, reply_id: int, seq: int, text: str, html: str = "", tail: str = "") -> ChunkFrame:
    """For the tabs in the reply's own server process: ``text`` to append to the reply's
    text; ``html``, the rendered blocks that became final (append), and ``tail``, the
    rendered last block (replaces the previous tail): see chat.rendering.StreamRenderer.
    ``seq`` counts the reply's chunks from 1: a tab skips one its ``resume`` included."""
    return {"type": "chunk", "id": reply_id, "seq": seq, "text": text, "html": html, "tail": tail}


def resume(
    *, reply: Message, seq: int, text: str, html: str, tail: str, article: str
) -> ResumeFrame:
    """To a tab that opens a conversation whose reply is streaming: the reply's text so far
    through chunk ``seq`` (``html`` + ``tail`` as the chunks would have built them), then
    the chunks after it (or, from another server process, snapshots). ``article`` is the
    reply's article when it began, for a page that does not show it yet."""
    return {
        "type": "resume",
        "id": reply.pk,
        "reply_to": reply.reply_to_id,
        "seq": seq,
        "text": text,
        "html": html,
        "tail": tail,
        "article": article,
    }


def snapshot(*, reply_id: int, text: str, html: str, seq: int | None = None) -> SnapshotFrame:
    """The whole reply so far, text and rendered, to replace: for tabs in other server
    processes (``seq``: the last chunk it includes), and for a tab that asks (``seq`` null:
    the text stored at the last checkpoint)."""
    return {"type": "snapshot", "id": reply_id, "seq": seq, "text": text, "html": html}


def reply_end(reply: Message, *, built: bool = False) -> ReplyEndFrame:
    """``built``: the reply's report is the one this process built for the turn
    (``memory.context.build``), of its shape by construction, so it is not checked again (the
    shape check of a turn's report cost 40-130 µs, as much as the rest of the frame's data)."""
    if built:
        report = cast(ContextReport, reply.context_report) if reply.context_report else None
    else:
        report = report_read(reply.context_report)  # None: no report, or not of its shape
    return {
        "type": "reply_end",
        "id": reply.pk,
        "reply_to": reply.reply_to_id,
        "status": reply.status,
        "error": reply.error,
        # Retry cannot help a request the server refused as it is; Continue only a cut reply.
        "retry": reply.status != Message.Status.COMPLETE and reply.error_kind not in NOT_RETRYABLE,
        "continue": reply.status == Message.Status.TRUNCATED,
        # False when the database could not take it: the page shows why (the row is
        # marked interrupted once its lease runs out).
        "saved": getattr(reply, "saved", True),
        # The article renders the same text through the same cache: one render, not two.
        "html": render_stored(reply.content, reply.conversation_id),
        "article": article(reply),
        "context": _figures(report),
    }


def _figures(report) -> ContextFigures:
    """The context meter's figures from a context report (None: no report)."""
    return {
        "used": report.get("total_tokens") if report else None,
        "limit": report.get("limit") if report else None,
        "budget": report.get("budget") if report else None,
        "estimated": bool(report and report.get("tokens_estimated")),
    }


def branch_shown(
    *, replaces: int, messages: list[Message], context: Mapping[str, object] | None = None
) -> BranchShownFrame:
    """The conversation shows another branch from a question on (an earlier question edited,
    or "1 / 2"): the page removes the article ``replaces`` and everything after it, then
    adds ``html``, the articles of the branch shown from its question on (``messages``, as
    ``chat.selectors.branch_shown_from`` gives them); ``context``, the context report of the
    branch's newest reply, for the context meter (None: nulls, the meter stays as it is)."""
    html = "".join(render_to_string(MESSAGE_TEMPLATE, _article_context(m)) for m in messages)
    return {
        "type": "branch_shown",
        "replaces": replaces,
        "html": html,
        "context": _figures(context),
    }


NOTICE_TEMPLATE = "memory/_notice.html"


def memory_event(notice) -> MemoryEventFrame:
    """A "Remembered: ..." notice (a ``memory.selectors.Notice``), new or changed (undone, an
    item kept or discarded): under the message ``message_id``, replacing the one with its id."""
    event = notice.event
    return {
        "type": "memory_event",
        "id": event.pk,
        "message_id": event.message_id,
        "html": render_to_string(NOTICE_TEMPLATE, {"notice": notice}),
    }


ELSEWHERE_TEMPLATE = "memory/_notice_elsewhere.html"


def memory_elsewhere(notice) -> MemoryElsewhereFrame:
    """The same notice for the user's tabs on their other conversations: what was remembered,
    where, with a link to the message (Undo lives under it)."""
    event = notice.event
    return {
        "type": "memory_elsewhere",
        "id": event.pk,
        "conversation_id": event.conversation_id,
        "html": render_to_string(ELSEWHERE_TEMPLATE, {"notice": notice}),
    }


def error(exc: ChatError, *, client_id: str = "") -> ErrorFrame:
    """Only to the tab that caused it."""
    return {"type": "error", "code": exc.code, "message": exc.message, "client_id": client_id}


SERVER_FRAMES = {
    "ready": ready,
    "user_message": user_message,
    "title": title,
    "reply_start": reply_start,
    "chunk": chunk,
    "resume": resume,
    "snapshot": snapshot,
    "reply_end": reply_end,
    "branch_shown": branch_shown,
    "memory_event": memory_event,
    "memory_elsewhere": memory_elsewhere,
    "error": error,
}


# -- between the tabs' consumers, through the channel layer ------------------------------------
# Every process must agree on these: a tab on another server gets its frames this way.


def group_name(conversation_id: int) -> str:
    return f"conversation-{conversation_id}"


def group_frame(frame: ServerFrame, *, sender: str) -> dict:
    """A server frame for the other tabs; ``sender`` already has it."""
    return {"type": "chat.frame", "frame": frame, "sender": sender}


def group_stop() -> dict:
    """Stop: the reply may be streaming in another server process."""
    return {"type": "chat.stop"}


def group_join(*, sender: str) -> dict:
    """A tab opened the conversation in the process of ``sender`` (its room's channel) while
    a reply streams elsewhere: the process that streams it sends ``sender`` a ``resume``."""
    return {"type": "chat.join", "sender": sender}


def user_group(user_id: int) -> str:
    """Every tab of one user, whatever conversation it shows."""
    return f"user-{user_id}"


def group_user_frame(frame: ServerFrame, *, conversation_id: int) -> dict:
    """A server frame for the user's tabs on conversations other than ``conversation_id``."""
    return {"type": "chat.user_frame", "frame": frame, "conversation_id": conversation_id}


def group_conversation_settings(conversation) -> dict:
    """A conversation's model, strategy, budget or project changed: its tabs take them for
    their next turn (``ChatConsumer.chat_conversation_settings``)."""
    return {
        "type": "chat.conversation_settings",
        "conversation_id": conversation.pk,
        "model": conversation.model,
        "strategy": conversation.strategy,
        "context_budget": conversation.context_budget,
        "project_id": conversation.project_id,
    }


def session_group(session_key: str) -> str:
    """The group of every socket signed in with one session (the tabs of one browser)."""
    return "session-" + hashlib.sha256(session_key.encode()).hexdigest()[:40]


def group_signed_out() -> dict:
    """The session signed out (in any tab): its sockets close with 4401."""
    return {"type": "chat.signed_out"}


def group_present(*, sender: str) -> dict:
    return {"type": "chat.present", "sender": sender}


def group_left(*, sender: str) -> dict:
    return {"type": "chat.left", "sender": sender}


GROUP_EVENTS = {
    "chat.frame": group_frame,
    "chat.stop": group_stop,
    "chat.join": group_join,
    "chat.signed_out": group_signed_out,
    "chat.present": group_present,
    "chat.left": group_left,
    "chat.user_frame": group_user_frame,
    "chat.conversation_settings": group_conversation_settings,
}
