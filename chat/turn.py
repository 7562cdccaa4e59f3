"""One reply, streamed: build the context, call the model, relay batched chunks, store once.

Runs as an asyncio task owned by the consumer of the tab that sent the message. ``publish``
sends a frame to every tab on the conversation. Cancelling the task (Stop, a closed tab) keeps
the partial reply as interrupted; an upstream error keeps it too (failed when there is none).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import DatabaseError

from chat import protocol, services
from chat.models import Message
from chat.rendering import StreamRenderer
from chat.streaming import ChunkBatcher
from llm.errors import UpstreamError
from llm.providers import Usage, get_provider
from memory import context
from memory.services import conversation_after_turn
from profiles.services import profile_observe_message

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


@dataclass
class PreparedTurn:
    start: services.TurnStart
    built: context.BuiltContext | None  # None when the message was a resend (replayed)


def prepare_turn(*, conversation, text: str, client_id: str) -> PreparedTurn:
    """Store the message and the reply's placeholder, then assemble the context: one trip to
    the database thread before the model is called."""
    start = services.turn_begin(conversation=conversation, text=text, client_id=client_id)
    if start.replayed:
        return PreparedTurn(start, None)
    return PreparedTurn(start, _build(conversation, start.user_message))


def prepare_retry(*, conversation, message_id: int) -> PreparedTurn:
    start = services.turn_retry(conversation=conversation, user_message_id=message_id)
    return PreparedTurn(start, _build(conversation, start.user_message))


def prepare_regenerate(*, conversation, message_id: int) -> PreparedTurn:
    start = services.turn_regenerate(conversation=conversation, user_message_id=message_id)
    return PreparedTurn(start, _build(conversation, start.user_message))


def prepare_edit(*, conversation, message_id: int, text: str) -> PreparedTurn:
    start = services.turn_edit(conversation=conversation, user_message_id=message_id, text=text)
    return PreparedTurn(start, _build(conversation, start.user_message))


def _build(conversation, user_message: Message) -> context.BuiltContext:
    return context.build(
        conversation=conversation, user_text=user_message.content, user_message=user_message
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
    ):
        self.conversation = conversation
        self.built = prepared.built
        self.started = started if started is not None else time.monotonic()
        self.new_message = new_message  # False on a retry: the style already learned from it
        self.user_message = prepared.start.user_message
        self.reply = prepared.start.reply
        self.publish = publish
        self.stop_reason = ""
        self.streaming = True  # until the reply is stored; after that, nothing to stop
        self.task: asyncio.Task | None = None

    def start(self) -> asyncio.Task:
        self.task = asyncio.create_task(self.run(), name=f"reply-{self.reply.pk}")
        return self.task

    def cancel(self, reason: str) -> None:
        if self.streaming and self.task is not None and not self.task.done():
            self.stop_reason = reason
            self.task.cancel()

    async def run(self) -> Message:
        started = self.started  # when the user's message arrived: TTFT as the user sees it
        reply = self.reply
        parts: list[str] = []
        first_token: float | None = None
        status, error = Message.Status.COMPLETE, ""
        usage, model, report, prompt_version = Usage(), "", None, None
        stream = None

        renderer = StreamRenderer()

        async def send_chunk(text: str) -> None:
            # The Markdown so far, rendered as the stored reply will be (the same function and
            # sanitiser), at the cost of its last block; at most every RENDER_INTERVAL, and
            # less often if rendering grows costly, so it stays a small share of the stream.
            began = time.perf_counter()
            renderer.feed(text)
            html, tail = renderer.render()
            cost = time.perf_counter() - began
            batcher.interval = max(RENDER_INTERVAL, cost * RENDER_COST_FACTOR)
            await self.publish(protocol.chunk(reply_id=reply.pk, text=text, html=html, tail=tail))

        batcher = ChunkBatcher(send_chunk, interval=RENDER_INTERVAL)
        request = None
        try:
            built = self.built
            report, prompt_version = built.report, built.report["system_prompt_version"]
            model = self.conversation.effective_model
            # The request goes out while the tabs are told a reply is coming.
            request = asyncio.ensure_future(
                get_provider().stream(built.messages, model=model, report=report)
            )
            await self.publish(protocol.reply_start(reply))
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
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task.cancelling():
                task.uncancel()
            status = Message.Status.INTERRUPTED
            error = self.stop_reason or "The reply was stopped."
        except UpstreamError as exc:
            status = Message.Status.INTERRUPTED if parts else Message.Status.FAILED
            error = exc.message
        except Exception:
            logger.exception("reply %s failed", reply.pk)
            status = Message.Status.INTERRUPTED if parts else Message.Status.FAILED
            error = "Something went wrong while writing this reply."
        finally:
            if request is not None and not request.done():
                request.cancel()
            if stream is not None and status != Message.Status.COMPLETE:
                await _quietly(stream.aclose())
        await _quietly(batcher.close())
        reply = await _store_with_retries(
            reply=reply,
            content="".join(parts),
            status=status,
            error=error,
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
        await _quietly(self.publish(protocol.reply_end(reply)))
        await in_db_thread(_after_turn)(
            self.conversation, self.user_message if self.new_message else None
        )
        return reply


async def _store_with_retries(**fields) -> Message:
    """Store the finished reply; if the database is briefly unavailable, keep trying for a
    while (the text is in memory). If it never comes back, say so in the page."""
    delay = 0.25
    deadline = time.monotonic() + STORE_RETRY_SECONDS
    while True:
        try:
            return await in_db_thread(services.reply_finish)(**fields)
        except DatabaseError:
            if time.monotonic() + delay > deadline:
                logger.exception("could not store reply %s", fields["reply"].pk)
                reply = fields["reply"]
                reply.content = fields["content"]
                reply.status = Message.Status.FAILED if not reply.content else fields["status"]
                reply.error = (
                    "The database was unavailable, so this reply could not be saved. "
                    + fields["error"]
                ).strip()
                reply.context_report = fields["context_report"]
                return reply
            logger.warning("database unavailable storing reply; retrying in %.2fs", delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, 4.0)


async def _quietly(awaitable) -> None:
    try:
        await awaitable
    except Exception:
        logger.warning("ignored error while finishing a reply", exc_info=True)


def _after_turn(conversation, user_message: Message | None) -> None:
    """Once a reply is stored: learn the user's style from their new message, and start
    background memory work (summaries, extraction) when it is due. Off the reply's path:
    the user already has the reply."""
    try:
        if user_message is not None and not conversation.temporary:
            profile_observe_message(user=conversation.user, text=user_message.content)
        conversation_after_turn(conversation=conversation)
    except Exception:
        logger.exception("after-turn memory work failed for conversation %s", conversation.pk)
