"""One turn, in order, with no websocket in it: what a tab's ``send`` does, and what any other
driver (an HTTP endpoint) calls with a sink for the frames.

admit (the per-minute count, ``admit_model_call``) → the message and the reply's placeholder
stored (the one busy check, under the user's lock, and the one resend check) → the context
built once (``chat.turn.setup.prepare_turn``, one trip with the store) → the model's request
sent and the reply streamed in the conversation's room (``chat.live``: every tab on the
conversation, in every process, sees it) → stored once → the after-turn work
(``chat.turn.reply.ReplyTask``).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from functools import partial

from django.conf import settings

from chat import limits, live, protocol, services
from chat.models import Conversation, Message
from chat.services import ChatError
from chat.turn.gate import run_setup
from chat.turn.reply import ReplyTask
from chat.turn.setup import (
    PreparedTurn,
    prepare_continue,
    prepare_edit,
    prepare_regenerate,
    prepare_retry,
    prepare_turn,
)


@dataclass
class Turn:
    start: services.TurnStart
    task: asyncio.Task | None = None  # the reply's (it returns the stored reply); None: a resend


def admit_model_call(user) -> None:
    """Count one model call against the user's per-minute limit, or refuse it. Every turn
    that makes the model work comes through here: a retry stopped at once and retried again
    is as many calls as messages."""
    verdict = limits.hit(
        f"messages:{user.pk}", limit=settings.MEMORYCHAT_MESSAGES_PER_MINUTE, window=60
    )
    if not verdict.allowed:
        refused = ChatError(
            f"You are sending messages too fast (limit "
            f"{settings.MEMORYCHAT_MESSAGES_PER_MINUTE} a minute). Your message is still "
            f"here: try again in {verdict.retry_after} s.",
            code="rate_limited",
            retry_after=verdict.retry_after,
        )
        raise refused


def _admitted(fn, user, **kwargs):
    admit_model_call(user)
    return fn(**kwargs)


async def admitted_setup(fn, *, user, conversation, **kwargs):
    """A set-up step that makes the model work, once the call is counted against the user's
    per-minute limit (the counter may live in Redis: never a blocking call on the event
    loop), in one thread trip with the step."""
    return await run_setup(partial(_admitted, fn, user), conversation=conversation, **kwargs)


@dataclass
class TurnSetUp:
    """A new message's set-up done (``set_up_turn``), for ``start_turn`` on the event loop."""

    conversation: Conversation
    prepared: PreparedTurn
    untitled: bool  # the conversation had no title before this message


def set_up_turn(*, user, conversation, text: str, client_id: str = "") -> TurnSetUp:
    """A new message admitted (``admit_model_call``), stored and its context built
    (``prepare_turn``): sync, for one database thread trip with whatever a driver needs
    before it (``run_setup``). Raises ChatError for a turn refused."""
    untitled = not conversation.title
    admit_model_call(user)
    prepared = prepare_turn(conversation=conversation, text=text, client_id=client_id)
    return TurnSetUp(conversation, prepared, untitled)


async def start_turn(set_up: TurnSetUp, *, room: live.Room, started: float) -> Turn:
    """A set-up turn's first frames published in ``room`` and its reply started there
    (``Turn.task``); for a resend of a stored message, what exists (no task)."""
    prepared, conversation = set_up.prepared, set_up.conversation
    if prepared.start.replayed:  # a resend: no request
        return Turn(prepared.start)
    assert prepared.user_frame is not None  # a new message's set-up renders it
    await room.publish(prepared.user_frame)
    if set_up.untitled and conversation.title:  # the first message gave it its title
        await room.publish(protocol.title(conversation.title))
    return Turn(prepared.start, _start(room, conversation, prepared, started))


async def take_turn(*, user, conversation, text: str, client_id: str, room: live.Room) -> Turn:
    """A new message: admitted, stored, its context built, and its reply started in ``room``
    (``Turn.task``); or, for a resend of a stored message, what exists (no task). Raises
    ChatError for a turn refused (limits, a reply streaming)."""
    started = time.monotonic()  # when the message arrived: TTFT as the user sees it
    set_up = await run_setup(
        set_up_turn, user=user, conversation=conversation, text=text, client_id=client_id
    )
    return await start_turn(set_up, room=room, started=started)


AGAIN = {
    "retry": prepare_retry,
    "continue": prepare_continue,
    "regenerate": prepare_regenerate,
    "edit": prepare_edit,
}


async def take_turn_again(kind: str, *, user, conversation, room: live.Room, **arguments) -> Turn:
    """Retry, Continue, regenerate or edit (``AGAIN``): stored first, in one set-up trip,
    then streamed as a new turn's reply is. An edit shows the message's new text first."""
    started = time.monotonic()
    prepared = await admitted_setup(AGAIN[kind], user=user, conversation=conversation, **arguments)
    if prepared.branch_frame is not None:  # an earlier question: a new branch from there
        await room.publish(prepared.branch_frame)
        if prepared.start.new_title:
            await room.publish(protocol.title(prepared.start.new_title))
    elif kind == "edit":
        await room.publish(prepared.user_frame)
        if prepared.start.new_title:  # the first question's new wording
            await room.publish(protocol.title(prepared.start.new_title))
    # Only an edit is a new message to learn the user's style from.
    return Turn(prepared.start, _start(room, conversation, prepared, started, new=kind == "edit"))


def _start(
    room: live.Room, conversation, prepared: PreparedTurn, started: float, *, new=True
) -> asyncio.Task:
    reply = ReplyTask(
        conversation=conversation,
        prepared=prepared,
        publish=room.publish,
        new_message=new,
        started=started,
    )
    return room.start_reply(reply)


async def run_turn(*, user, conversation, text: str, client_id: str = "", sink) -> Message | None:
    """Drive one turn without a websocket: the conversation's frames go to ``sink`` (an async
    callable taking a frame dict) as they would to a tab, and to any tab open on it; returns
    the stored reply once it ended (for a resend, the reply that exists). The reply does not
    depend on the caller: cancelled, it goes on in the room. The caller checks ``user`` owns
    ``conversation``; ChatError says why a turn was refused."""
    started = time.monotonic()
    set_up = await run_setup(
        set_up_turn, user=user, conversation=conversation, text=text, client_id=client_id
    )
    return await run_set_up_turn(set_up, sink=sink, started=started)


async def run_set_up_turn(set_up: TurnSetUp, *, sink, started: float) -> Message | None:
    """``run_turn`` once its set-up is done (a driver that did the set-up in the same thread
    trip as its own checks): the room entered, the reply started and awaited."""
    tab = live.Tab(sink)
    room = await live.enter(set_up.conversation.pk, tab)
    tab.open()
    try:
        turn = await start_turn(set_up, room=room, started=started)
        if turn.task is None:
            return turn.start.reply
        reply = await asyncio.shield(turn.task)
        await tab.sent()
        return reply
    finally:
        await room.leave(tab)
