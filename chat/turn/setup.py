"""A turn's database steps before the model streams, run in a database thread
(``chat.turn.gate.run_setup``), one trip a turn: the message stored (its checks under
the store's locks), then the context built once (``prepare_turn``); the same for retry,
regenerate, edit and Continue. Each returns a ``PreparedTurn``; the first frames' articles
are rendered here, off the event loop."""

from __future__ import annotations

from dataclasses import dataclass

from chat import protocol, selectors, services
from chat.models import Message
from memory import context
from memory.search import embeddings

CONTINUE_PROMPT = (
    "Your previous reply was cut off by its length limit. Continue it exactly where it "
    "stopped: do not repeat anything and add no preamble."
)


@dataclass
class PreparedTurn:
    start: services.TurnStart
    built: context.BuiltContext | None  # None when the message was a resend (replayed)
    prefix: str = ""  # the text a continued reply already has
    # The first frames, their articles rendered in the set-up thread rather than on the
    # event loop, where they would delay this reply's request and every other chat's chunks.
    user_frame: protocol.UserMessageFrame | None = None
    start_frame: protocol.ReplyStartFrame | None = None
    # An earlier question edited: the new branch's question, in place of the old branch.
    branch_frame: protocol.BranchShownFrame | None = None


def _prepared(start: services.TurnStart, built, prefix: str = "") -> PreparedTurn:
    branch_frame = None
    if start.branched_from is not None:
        selectors.with_notices_and_branches([start.user_message])  # its "2 / 2"
        branch_frame = protocol.branch_shown(
            replaces=start.branched_from, messages=[start.user_message]
        )
    return PreparedTurn(
        start,
        built,
        prefix=prefix,
        user_frame=protocol.user_message(start.user_message),
        start_frame=protocol.reply_start(_reply(start)),
        branch_frame=branch_frame,
    )


def prepare_turn(*, conversation, text: str, client_id: str) -> PreparedTurn:
    """A new message, in one trip: stored with the reply's placeholder (``turn_begin``: the
    one busy check, under the user's lock, and the one resend check, the unique client_id),
    then its context built once. For the resend of a stored message (a reconnected page
    sends again what it had no answer to), what exists and no context: no request goes out.
    Raises ChatError for a turn refused (a reply still streaming, too many elsewhere)."""
    start = services.turn_begin(conversation=conversation, text=text, client_id=client_id)
    if start.replayed:
        return PreparedTurn(start, None)
    if not conversation.temporary:  # the query's vector, computed beside the build
        embeddings.query_vector_soon(user_id=conversation.user_id, query=start.user_message.content)
    return _prepared(start, _build(conversation, start.user_message))


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
    prefix = _reply(start).content
    tail = [
        {"role": "assistant", "content": prefix},
        {"role": "user", "content": CONTINUE_PROMPT},
    ]
    built = _build(conversation, start.user_message, tail=tail)
    return _prepared(start, built, prefix=prefix)


def _reply(start: services.TurnStart) -> Message:
    """The reply placeholder, which the services store with every turn but a resend."""
    assert start.reply is not None, "only a resend can lack its reply"
    return start.reply


def _build(conversation, user_message: Message, tail=()) -> context.BuiltContext:
    return context.build(
        conversation=conversation,
        user_text=user_message.content,
        user_message=user_message,
        tail=list(tail),
    )
