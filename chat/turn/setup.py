"""A turn's database steps before the model streams, run in a set-up process or a database
thread (``chat.turn.gate.run_setup``): the resend and busy checks and the context build
(``prepare_context``), the store of the message and the reply's placeholder (``store_turn``),
and the same in one trip for retry, regenerate, edit and Continue. Each returns a
``PreparedTurn``; the first frames' articles are rendered here, off the event loop."""

from __future__ import annotations

from dataclasses import dataclass

from chat import protocol, services
from chat.models import Message
from memory import context
from memory.search import embeddings

CONTINUE_PROMPT = (
    "Your previous reply was cut off by its length limit. Continue it exactly where it "
    "stopped: do not repeat anything and add no preamble."
)


@dataclass
class PreparedTurn:
    start: services.TurnStart | None  # None while the message is not stored yet
    built: context.BuiltContext | None  # None when the message was a resend (replayed)
    prefix: str = ""  # the text a continued reply already has
    # The first frames, their articles rendered in the set-up thread rather than on the
    # event loop, where they would delay this reply's request and every other chat's chunks.
    user_frame: dict | None = None
    start_frame: dict | None = None


def _prepared(start: services.TurnStart, built, prefix: str = "") -> PreparedTurn:
    return PreparedTurn(
        start,
        built,
        prefix=prefix,
        user_frame=protocol.user_message(start.user_message),
        start_frame=protocol.reply_start(start.reply),
    )


def prepare_context(*, conversation, text: str, client_id: str) -> PreparedTurn:
    """The context for a new message, built before the message is stored (it only reads), so
    that the model's request can go out while ``store_turn`` stores the message: the model's
    own time to a first token hides the store. Its ``start`` is None until then; or, for the
    resend of a stored message (a reconnected page sends again what it had no answer to),
    what exists, and no context: no request goes out for it. Raises ChatError as turn_begin
    would for a turn it refuses (a reply still streaming)."""
    replayed = services.turn_replayed(conversation, client_id)
    if replayed is not None:
        return PreparedTurn(replayed, None)
    services.turn_check_idle(conversation)  # a refused turn sends no request
    text = services.clean_text(text)
    if not conversation.temporary:  # the query's vector, computed beside the build
        embeddings.query_vector_soon(user_id=conversation.user_id, query=text)
    return PreparedTurn(
        None, context.build(conversation=conversation, user_text=text, pending=True)
    )


def store_turn(*, conversation, text: str, client_id: str, built) -> PreparedTurn:
    """Store the message and the reply's placeholder for a context ``prepare_context`` built.
    A resend that came in meanwhile (``start.replayed``) stores nothing: its request is to be
    cancelled."""
    start = services.turn_begin(conversation=conversation, text=text, client_id=client_id)
    if start.replayed:
        return PreparedTurn(start, None)
    return _prepared(start, built)


def prepare_turn(*, conversation, text: str, client_id: str) -> PreparedTurn:
    """Both in one call, for a caller with no request to send in between."""
    draft = prepare_context(conversation=conversation, text=text, client_id=client_id)
    if draft.start is not None:
        return draft
    return store_turn(conversation=conversation, text=text, client_id=client_id, built=draft.built)


def prepare_retry(*, conversation, message_id: int) -> PreparedTurn:
    start = services.turn_retry(conversation=conversation, user_message_id=message_id)
    return _prepared(start, _build(conversation, start.user_message))


def prepare_regenerate(*, conversation, message_id: int) -> PreparedTurn:
    start = services.turn_regenerate(conversation=conversation, user_message_id=message_id)
    return _prepared(start, _build(conversation, start.user_message))


def prepare_edit(*, conversation, message_id: int, text: str) -> PreparedTurn:
    start = services.turn_edit(conversation=conversation, user_message_id=message_id, text=text)
    return _prepared(start, _build(conversation, start.user_message))


def prepare_continue(*, conversation, reply_id: int) -> PreparedTurn:
    """Continue a reply the length cap cut: the same context, then the reply so far and a
    request for the rest (a user turn: every server and template accepts that, unlike an
    assistant turn left open)."""
    start = services.turn_continue(conversation=conversation, reply_id=reply_id)
    prefix = start.reply.content
    tail = [
        {"role": "assistant", "content": prefix},
        {"role": "user", "content": CONTINUE_PROMPT},
    ]
    built = _build(conversation, start.user_message, tail=tail)
    return _prepared(start, built, prefix=prefix)


def _build(conversation, user_message: Message, tail=()) -> context.BuiltContext:
    return context.build(
        conversation=conversation,
        user_text=user_message.content,
        user_message=user_message,
        tail=list(tail),
    )
