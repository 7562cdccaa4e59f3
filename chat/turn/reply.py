"""One reply, streamed on the event loop: send the model's request, relay batched chunks,
store once, then the after-turn work.

Runs as an asyncio task of the conversation's room in this process (``chat.live``), not of
the tab that sent the message: it ends whatever the tabs do. ``publish`` sends a frame to
every tab on the conversation. Cancelling the task (Stop, from any tab) keeps the partial
reply as interrupted; an upstream error keeps it too (failed when there is none). Every
request is capped at the conversation's reply reserve; a reply the cap cut is stored as
truncated, and Continue (``chat.turn.setup.prepare_continue``) asks the model for the rest
of it, appended to the same reply.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError

from chat import protocol, services
from chat.models import Message
from chat.rendering import StreamRenderer
from chat.streaming import ChunkBatcher
from chat.turn.gate import after_turn, in_db_thread
from chat.turn.setup import PreparedTurn
from llm.errors import UpstreamError
from llm.providers import Usage, get_provider
from memory import context

logger = logging.getLogger(__name__)

Publish = Callable[[protocol.ServerFrame], Awaitable[None]]  # to every tab on the conversation
# A streaming reply's frames go at most this often, each with the Markdown rendered so far;
# if one render costs more than 1/RENDER_COST_FACTOR of the interval, the interval grows.
RENDER_INTERVAL = 0.1
RENDER_COST_FACTOR = 10


def open_stream(conversation, built: context.BuiltContext) -> asyncio.Task:
    """Send the model's request for ``built`` now; the task gives the reply's stream."""
    report = built.report
    max_tokens = report.get("reserve") or settings.MEMORYCHAT_REPLY_RESERVE
    request = asyncio.ensure_future(
        get_provider().stream(
            built.messages,
            model=conversation.effective_model,
            report=report,
            max_tokens=max_tokens,
            server_fields=built.server_fields,
        )
    )
    # A request cancelled or refused before anyone awaited it is not an unhandled error.
    request.add_done_callback(lambda task: task.cancelled() or task.exception())
    return request


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
    ):
        self.conversation = conversation
        built, reply = prepared.built, prepared.start.reply
        # Only a resend lacks them, and a resend streams nothing (``chat.turn.drive``).
        assert built is not None and reply is not None, "a resend has no reply to stream"
        self.built = built
        self.started = started if started is not None else time.monotonic()
        self.new_message = new_message  # False on a retry: the style already learned from it
        self.user_message = prepared.start.user_message
        self.reply = reply
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

    def resume_frame(self) -> protocol.ResumeFrame:
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
            # The request goes out while the tabs are told a reply comes.
            request = open_stream(self.conversation, built)
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
            assert task is not None  # a coroutine cancelled runs in a task
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
            end_frame = protocol.reply_end(reply, built=True)
        await _quietly(self.publish(end_frame))
        await after_turn(self.conversation, self.user_message if self.new_message else None)
        return reply


def _finish(**fields) -> tuple[Message, protocol.ReplyEndFrame]:
    """Store the reply and build its reply_end frame (Markdown, the context report's HTML) in
    the same thread trip: that rendering is CPU the event loop need not do. The conversation's
    activity is updated after the turn, in one statement for the replies that ended together."""
    reply = services.reply_finish(**fields, touch=False)
    return reply, protocol.reply_end(reply, built=True)  # the report is the turn's own


async def _store_with_retries(**fields) -> tuple[Message, protocol.ReplyEndFrame | None]:
    """Store the finished reply; while the database is locked or unreachable, keep trying
    until it lands (the text is in memory: a long staff import or a restart must not lose it).
    Any other database error is said in the page at once. Returns the reply and its reply_end
    frame (None when it could not be stored: built by the caller)."""
    delay = 0.25
    while True:
        try:
            return await in_db_thread(_finish)(**fields)
        except DatabaseError as error:
            if not isinstance(error, OperationalError | InterfaceError):
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
            delay = min(delay * 2, 5.0)


async def _quietly(awaitable) -> None:
    try:
        await awaitable
    except Exception:
        logger.warning("ignored error while finishing a reply", exc_info=True)
