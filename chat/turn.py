"""One reply, streamed: build the context, call the model, relay batched chunks, store once.

Runs as an asyncio task of the conversation's room in this process (``chat.live``), not of
the tab that sent the message: it ends whatever the tabs do. ``publish`` sends a frame to
every tab on the conversation. Cancelling the task (Stop, from any tab) keeps the partial
reply as interrupted; an upstream error keeps it too (failed when there is none).
Every request is capped at the conversation's reply reserve; a reply the cap cut is stored as
truncated, and Continue (``prepare_continue``) asks the model for the rest of it, appended to
the same reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import DatabaseError

from chat import protocol, services, setup_workers
from chat.models import Message
from chat.rendering import StreamRenderer
from chat.streaming import ChunkBatcher
from llm.errors import UpstreamError
from llm.providers import Usage, get_provider
from memory import context, search
from memory.recall import memory_enabled_many
from memory.search import embeddings
from memory.services import conversations_after_turn, memories_from_turn
from profiles.selectors import profiles_get_many
from profiles.services import profiles_observe_messages

logger = logging.getLogger(__name__)

Publish = Callable[[dict], Awaitable[None]]
STORE_RETRY_SECONDS = 30.0
# A streaming reply's frames go at most this often, each with the Markdown rendered so far;
# if one render costs more than 1/RENDER_COST_FACTOR of the interval, the interval grows.
RENDER_INTERVAL = 0.1
RENDER_COST_FACTOR = 10


def in_db_thread(fn):
    """Run ORM work off the event loop in a pool of threads (each with its own persistent
    connection), not asgiref's single shared one, so that many chats' turns do not queue
    behind each other. Only for code that needs no thread affinity."""
    return database_sync_to_async(fn, thread_sensitive=False)


# A turn's set-up (the database work before the model is called) comes first. The work after
# a reply (style, memory scheduling) is collected for AFTER_TURN_BATCH seconds and done for all
# the replies that ended meanwhile in one thread trip (the summary checks in three queries for
# all of them), once no set-up is running (waiting at most AFTER_TURN_MAX_WAIT, so it is never
# starved): one chat's first token does not wait for a thread, nor for the GIL, behind other
# chats' after-turn work.
AFTER_TURN_BATCH = 0.2  # seconds
AFTER_TURN_MAX_WAIT = 1.0  # seconds


class _Gate:
    """Per event loop: how many set-ups run, and the after-turn work waiting."""

    def __init__(self):
        self.setups = 0
        self.idle = asyncio.Event()
        self.idle.set()
        self.pending: list[tuple[object, Message | None, asyncio.Future]] = []
        self.worker: asyncio.Task | None = None

    async def after_turn(self, conversation, user_message: Message | None) -> None:
        done = asyncio.get_running_loop().create_future()
        self.pending.append((conversation, user_message, done))
        if self.worker is None or self.worker.done():
            self.worker = asyncio.create_task(self._work(), name="after-turns")
        await asyncio.shield(done)

    async def _work(self) -> None:
        while self.pending:
            await asyncio.sleep(AFTER_TURN_BATCH)
            if not self.idle.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.idle.wait(), AFTER_TURN_MAX_WAIT)
            batch, self.pending = self.pending, []
            try:
                await in_db_thread(_after_turns)([(c, m) for c, m, _ in batch])
            finally:
                for _, _, done in batch:
                    if not done.done():
                        done.set_result(None)


_gates: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _gate() -> _Gate:
    loop = asyncio.get_running_loop()
    gate = _gates.get(loop)
    if gate is None:
        gate = _gates[loop] = _Gate()
    return gate


async def run_setup(fn, *, conversation, in_process: bool | None = None, **kwargs):
    """A turn's set-up step, ``fn(conversation=conversation, **kwargs)``: in a set-up process
    when the server has them (``chat.setup_workers``; ``in_process`` for a caller that
    decided already), else in a database thread. After-turn work waits while any runs."""
    gate = _gate()
    gate.setups += 1
    gate.idle.clear()
    try:
        if setup_workers.enabled() if in_process is None else in_process:
            with contextlib.suppress(setup_workers.BrokenProcessPool):  # then in a thread
                return await setup_workers.run(fn, conversation=conversation, **kwargs)
        return await in_db_thread(fn)(conversation=conversation, **kwargs)
    finally:
        gate.setups -= 1
        if gate.setups == 0:
            gate.idle.set()


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


def open_stream(conversation, built: context.BuiltContext) -> asyncio.Task:
    """Send the model's request for ``built`` now; the task gives the reply's stream. A task
    nobody awaits (its turn was refused after it went out) is cancelled by its caller."""
    report = built.report
    max_tokens = report.get("reserve") or settings.MEMORYCHAT_REPLY_RESERVE
    request = asyncio.ensure_future(
        get_provider().stream(
            built.messages,
            model=conversation.effective_model,
            report=report,
            max_tokens=max_tokens,
        )
    )
    # A request cancelled or refused before anyone awaited it is not an unhandled error.
    request.add_done_callback(lambda task: task.cancelled() or task.exception())
    return request


async def drop_request(request: asyncio.Task) -> None:
    """Give up a request ``open_stream`` sent for a turn that was then refused: cancelled if
    it is still on its way, its stream closed if the model already answered."""
    if not request.done():
        request.cancel()
    elif not request.cancelled() and request.exception() is None:
        await _quietly(request.result().aclose())


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


class ReplyTask:
    """The streaming of one reply; ``cancel(reason)`` stops it and keeps what was written."""

    def __init__(
        self,
        *,
        conversation,
        prepared: PreparedTurn,
        publish: Publish,
        new_message: bool = True,
        started: float | None = None,
        request: asyncio.Task | None = None,
    ):
        self.conversation = conversation
        self.request = request  # the model's request, when it went out before the store
        self.built = prepared.built
        self.started = started if started is not None else time.monotonic()
        self.new_message = new_message  # False on a retry: the style already learned from it
        self.user_message = prepared.start.user_message
        self.reply = prepared.start.reply
        self.previous_content = prepared.start.previous_content
        self.prefix = prepared.prefix
        self.start_frame = prepared.start_frame
        self.publish = publish
        self.stop_reason = ""
        self.streaming = True  # until the reply is stored; after that, nothing to stop
        self.task: asyncio.Task | None = None
        # What the tabs were sent so far, for one that joins (``resume_frame``).
        self.renderer = StreamRenderer()
        self.seq = 0  # chunks sent
        self.tail = ""  # the last chunk's tail

    def start(self) -> asyncio.Task:
        self.task = asyncio.create_task(self.run(), name=f"reply-{self.reply.pk}")
        return self.task

    def cancel(self, reason: str) -> None:
        if self.streaming and self.task is not None and not self.task.done():
            self.stop_reason = reason
            self.task.cancel()

    def resume_frame(self) -> dict:
        """The reply so far exactly as the chunks sent built it, for a tab that joins now."""
        start = self.start_frame or protocol.reply_start(self.reply)
        return protocol.resume(
            reply=self.reply,
            seq=self.seq,
            text=self.renderer.text,
            html="".join(self.renderer.stable),
            tail=self.tail,
            article=start["article"],
        )

    async def run(self) -> Message:
        started = self.started  # when the user's message arrived: TTFT as the user sees it
        reply = self.reply
        parts: list[str] = [self.prefix] if self.prefix else []
        first_token: float | None = None
        status, error, error_kind, detail = Message.Status.COMPLETE, "", "", ""
        usage, model, report, prompt_version = Usage(), "", None, None
        stream = None

        renderer = self.renderer
        if self.prefix:  # a Continue: the page already shows the text so far
            renderer.feed(self.prefix)

        async def send_chunk(text: str) -> None:
            # The Markdown so far, rendered as the stored reply will be (the same function and
            # sanitiser), at the cost of its last block; at most every RENDER_INTERVAL, and
            # less often if rendering grows costly, so it stays a small share of the stream.
            began = time.perf_counter()
            renderer.feed(text)
            html, tail = renderer.render()
            cost = time.perf_counter() - began
            batcher.interval = max(RENDER_INTERVAL, cost * RENDER_COST_FACTOR)
            self.seq += 1
            self.tail = tail
            frame = protocol.chunk(reply_id=reply.pk, seq=self.seq, text=text, html=html, tail=tail)
            await self.publish(frame)

        batcher = ChunkBatcher(send_chunk, interval=RENDER_INTERVAL)
        request = None
        try:
            built = self.built
            report, prompt_version = built.report, built.report["system_prompt_version"]
            model = self.conversation.effective_model
            max_tokens = report.get("reserve") or settings.MEMORYCHAT_REPLY_RESERVE
            # The request goes out (if it has not yet) while the tabs are told a reply comes.
            request = self.request or open_stream(self.conversation, built)
            self.start_frame = self.start_frame or protocol.reply_start(reply)
            await self.publish(self.start_frame)
            stream = await request
            model = stream.model
            renewed = time.monotonic()
            renew_every = settings.MEMORYCHAT_STREAM_LEASE_SECONDS / 3
            async for delta in stream:
                if first_token is None:
                    first_token = time.monotonic() - started
                parts.append(delta)
                await batcher.add(delta)
                if self.stop_reason:
                    # Stop was asked but the cancellation was absorbed by a library awaited
                    # meanwhile (the Redis client can do that): honour it here.
                    raise asyncio.CancelledError
                if time.monotonic() - renewed > renew_every:
                    renewed = time.monotonic()
                    await _quietly(
                        in_db_thread(services.reply_renew_lease)(
                            reply=reply, content="".join(parts)
                        )
                    )
            usage = stream.usage
            if stream.cut_by_length:
                status = Message.Status.TRUNCATED
                error = (
                    f"The reply reached its length limit ({max_tokens:,} tokens). "
                    "Continue asks for the rest."
                )
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task.cancelling():
                task.uncancel()
            status = Message.Status.INTERRUPTED
            # Without a reason, the server process is shutting down (no tab cancels a reply).
            error = self.stop_reason or "The server stopped before this reply finished."
        except UpstreamError as exc:
            status = Message.Status.INTERRUPTED if parts else Message.Status.FAILED
            error, error_kind, detail = exc.message, exc.kind, exc.detail
            if detail:
                logger.warning("reply %s: %s (%s)", reply.pk, exc.message, detail)
        except Exception:
            logger.exception("reply %s failed", reply.pk)
            status = Message.Status.INTERRUPTED if parts else Message.Status.FAILED
            error = "Something went wrong while writing this reply."
        finally:
            if request is not None and not request.done():
                request.cancel()
            if stream is not None and status not in (
                Message.Status.COMPLETE,
                Message.Status.TRUNCATED,
            ):
                await _quietly(stream.aclose())
        await _quietly(batcher.close())
        content = "".join(parts)
        if not content and status != Message.Status.COMPLETE and self.previous_content:
            # A retry that wrote nothing: the earlier partial reply is still the best there is.
            content, status = self.previous_content, Message.Status.INTERRUPTED
            error = f"The retry did not finish ({error.rstrip('.')}); the earlier text is kept."
        reply, end_frame = await _store_with_retries(
            reply=reply,
            content=content,
            status=status,
            error=error,
            error_kind=error_kind,
            upstream_detail=detail,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            time_to_first_token=first_token,
            duration=time.monotonic() - started,
            model=model,
            context_report=report,
            system_prompt_version=prompt_version,
        )
        self.reply = reply
        self.streaming = False
        if end_frame is None:
            end_frame = protocol.reply_end(reply)
        await _quietly(self.publish(end_frame))
        await _gate().after_turn(self.conversation, self.user_message if self.new_message else None)
        return reply


def _finish(**fields) -> tuple[Message, dict]:
    """Store the reply and build its reply_end frame (Markdown, the context report's HTML) in
    the same thread trip: that rendering is CPU the event loop need not do. The conversation's
    activity is updated after the turn, in one statement for the replies that ended together."""
    reply = services.reply_finish(**fields, touch=False)
    return reply, protocol.reply_end(reply)


async def _store_with_retries(**fields) -> tuple[Message, dict | None]:
    """Store the finished reply; if the database is briefly unavailable, keep trying for a
    while (the text is in memory). If it never comes back, say so in the page. Returns the
    reply and its reply_end frame (None when it could not be stored: built by the caller)."""
    delay = 0.25
    deadline = time.monotonic() + STORE_RETRY_SECONDS
    while True:
        try:
            return await in_db_thread(_finish)(**fields)
        except DatabaseError:
            if time.monotonic() + delay > deadline:
                logger.exception("could not store reply %s", fields["reply"].pk)
                # The row stays "streaming" until its lease runs out and a sweep marks it
                # interrupted: the page says now what that will say, never "complete".
                reply = fields["reply"]
                reply.content = fields["content"]
                reply.status = (
                    Message.Status.INTERRUPTED if reply.content else Message.Status.FAILED
                )
                reply.error = (
                    "The database was unavailable, so this reply could not be saved. "
                    + fields["error"]
                ).strip()[:500]
                reply.context_report = fields["context_report"]
                reply.saved = False
                return reply, None
            logger.warning("database unavailable storing reply; retrying in %.2fs", delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 4.0)


async def _quietly(awaitable) -> None:
    try:
        await awaitable
    except Exception:
        logger.warning("ignored error while finishing a reply", exc_info=True)


def _after_turns(items) -> None:
    """Once replies are stored: mark their conversations active (the sidebar's order), learn
    each user's style from their new message, remember its clear personal statements (the
    light extractor), and start background memory work (summaries, extraction) where it is
    due. Off the replies' path: the users already have them. ``items``: (conversation, user
    message or None) pairs, the replies that ended together: their conversations are marked in
    one statement, the memory switch is read once for all of them, the summary checks are made
    in three queries for all of them."""
    ids = [c.pk for c, _ in items]
    try:
        services.conversations_touch(conversation_ids=ids)
    except Exception:
        logger.exception("could not mark conversations %s active", ids)
    try:
        search.tidy()  # the turns' new rows added index segments: merge some
    except DatabaseError:
        logger.warning("could not merge the search index's segments", exc_info=True)
    try:
        # One read of the users' profiles: the memory switch and the style learned from.
        profiles = profiles_get_many([c.user for c, _ in items])
        enabled = memory_enabled_many([c for c, _ in items], profiles=profiles)
        profiles_observe_messages(
            observations=[
                (c.user, m.content) for c, m in items if m is not None and not c.temporary
            ],
            profiles=profiles,
        )
    except Exception:
        logger.exception("after-turn memory work failed for conversations %s", ids)
        return
    for conversation, user_message in items:
        if user_message is None:
            continue
        try:
            if enabled.get(conversation.pk):
                memories_from_turn(conversation=conversation, message=user_message)
        except Exception:
            logger.exception("after-turn memory work failed for conversation %s", conversation.pk)
    try:
        conversations_after_turn(conversations=[c for c, _ in items], enabled=enabled)
    except Exception:
        logger.exception("after-turn memory work failed for conversations %s", ids)
