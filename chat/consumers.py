"""The chat websocket: validates frames, checks ownership, hands turns to chat.turn."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.db import DatabaseError
from django.utils.html import escape

from chat import limits, services
from chat.fanout import TabFanout
from chat.models import Conversation, Message
from chat.services import ChatError
from chat.turn import (
    ReplyTask,
    in_db_thread,
    prepare_continue,
    prepare_retry,
    prepare_turn,
    reply_end_frame,
)
from llm import model_configured

logger = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
CLIENT_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def group_name(conversation_id: int) -> str:
    return f"conversation-{conversation_id}"


class FrameError(ChatError):
    def __init__(self, message: str, code: str = "bad_frame"):
        super().__init__(message, code=code)


def parse_send(frame: dict) -> tuple[str, str]:
    text, client_id = frame.get("text"), frame.get("client_id", "")
    if not isinstance(text, str):
        raise FrameError("A message must be text.")
    if not isinstance(client_id, str) or (client_id and not CLIENT_ID.match(client_id)):
        raise FrameError("client_id must be 1-64 letters, digits, '-' or '_'.")
    if not text.strip():
        raise FrameError("The message is empty.", code="empty")
    limit = settings.MEMORYCHAT_MAX_MESSAGE_CHARS
    if len(text) > limit:
        raise FrameError(
            f"The message is too long ({len(text):,} characters; the limit is {limit:,}).",
            code="too_long",
        )
    return text, client_id


class ChatConsumer(AsyncJsonWebsocketConsumer):
    conversation: Conversation | None = None
    reply_task: ReplyTask | None = None
    fanout: TabFanout | None = None

    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        conversation_id = self.scope["url_route"]["kwargs"]["conversation_id"]
        self.conversation = (
            await Conversation.objects.select_related("user")
            .filter(pk=conversation_id, user=user)
            .afirst()
        )
        if self.conversation is None:
            await self.close(code=CLOSE_FORBIDDEN)
            return
        self.group = group_name(self.conversation.pk)
        self.fanout = TabFanout(self.channel_layer, self.group, self.channel_name)
        await self.fanout.start()
        await self.accept()
        streaming = await in_db_thread(self._streaming_reply_id)()
        await self.send_json(
            {"type": "ready", "streaming": streaming, "offline": not model_configured()}
        )

    def _streaming_reply_id(self) -> int | None:
        services.replies_interrupt_stale(conversation=self.conversation)
        return (
            Message.objects.filter(conversation=self.conversation, status=Message.Status.STREAMING)
            .values_list("pk", flat=True)
            .first()
        )

    async def disconnect(self, code):
        if self.fanout is None:
            return
        if self.reply_task is not None and self.reply_task.task is not None:
            self.reply_task.cancel("The page was closed before the reply finished.")
            # The partial reply (and the memory work after it) is stored before we go; shielded
            # so that a server tearing this consumer down cannot cut that short.
            await asyncio.shield(self.reply_task.task)
        await self.fanout.stop()

    # -- frames from the browser ----------------------------------------------------------

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        if text_data is None:
            await self.send_error(FrameError("Frames must be JSON text."))
            return
        try:
            frame = json.loads(text_data)
        except ValueError:
            await self.send_error(FrameError("That frame is not valid JSON."))
            return
        await self.receive_json(frame)

    async def receive_json(self, content, **kwargs):
        client_id = content.get("client_id", "") if isinstance(content, dict) else ""
        try:
            if not isinstance(content, dict):
                raise FrameError("A frame must be a JSON object.")
            handler = {
                "send": self.handle_send,
                "stop": self.handle_stop,
                "retry": self.handle_retry,
                "continue": self.handle_continue,
                "sync": self.handle_sync,
            }.get(content.get("type"))
            if handler is None:
                raise FrameError(f"Unknown frame type {content.get('type')!r}.")
            await handler(content)
        except ChatError as exc:
            await self.send_error(exc, client_id=client_id if isinstance(client_id, str) else "")
        except DatabaseError:
            logger.exception("database error handling a frame")
            unavailable = ChatError(
                "The service cannot store messages right now (database unavailable). Nothing "
                "was saved; your message is still here, try again in a moment.",
                code="unavailable",
            )
            await self.send_error(
                unavailable, client_id=client_id if isinstance(client_id, str) else ""
            )

    async def handle_send(self, frame: dict) -> None:
        text, client_id = parse_send(frame)
        untitled = not self.conversation.title
        started = time.monotonic()
        # The limit's counter may live in Redis: counted in the same thread trip as the turn,
        # never with a blocking call on the event loop.
        prepared = await in_db_thread(self._admit_and_prepare)(text, client_id)
        if prepared.start.replayed:
            await self.replay(prepared.start)
            return
        await self.publish(self.user_message_frame(prepared.start.user_message))
        if untitled and self.conversation.title:  # the first message gave it its title
            await self.publish({"type": "title", "title": self.conversation.title})
        self.start_reply(prepared, started=started)

    def _admit_and_prepare(self, text: str, client_id: str):
        verdict = limits.hit(
            f"messages:{self.scope['user'].pk}",
            limit=settings.MEMORYCHAT_MESSAGES_PER_MINUTE,
            window=60,
        )
        if not verdict.allowed:
            raise ChatError(
                f"You are sending messages too fast (limit "
                f"{settings.MEMORYCHAT_MESSAGES_PER_MINUTE} a minute). Your message is still "
                f"here: try again in {verdict.retry_after} s.",
                code="rate_limited",
            )
        return prepare_turn(conversation=self.conversation, text=text, client_id=client_id)

    async def handle_retry(self, frame: dict) -> None:
        message_id = frame.get("message_id")
        if not isinstance(message_id, int) or isinstance(message_id, bool):
            raise FrameError("retry needs a message_id (an integer).")
        started = time.monotonic()
        prepared = await in_db_thread(prepare_retry)(
            conversation=self.conversation, message_id=message_id
        )
        self.start_reply(prepared, new_message=False, started=started)

    async def handle_continue(self, frame: dict) -> None:
        """Ask for the rest of a reply the length limit cut, appended to the same reply."""
        reply_id = frame.get("message_id")
        if not isinstance(reply_id, int) or isinstance(reply_id, bool):
            raise FrameError("continue needs a message_id (the reply's, an integer).")
        started = time.monotonic()
        prepared = await in_db_thread(prepare_continue)(
            conversation=self.conversation, reply_id=reply_id
        )
        self.start_reply(prepared, new_message=False, started=started)

    async def handle_sync(self, frame: dict) -> None:
        """A tab that heard nothing of a reply for a while asks where it stands (its frames
        may have been lost on a busy or restarting channel layer)."""
        reply_id = frame.get("reply_id")
        if not isinstance(reply_id, int) or isinstance(reply_id, bool):
            raise FrameError("sync needs a reply_id (an integer).")
        reply = await in_db_thread(self._reply_state)(reply_id)
        if reply is None:
            raise FrameError("That reply is not in this conversation.", code="not_found")
        if reply.status == Message.Status.STREAMING:
            await self.send_json({"type": "snapshot", "id": reply.pk, "text": reply.content})
        else:
            await self.send_json(reply_end_frame(reply))

    def _reply_state(self, reply_id: int) -> Message | None:
        services.replies_interrupt_stale(conversation=self.conversation)
        return Message.objects.filter(
            conversation=self.conversation, pk=reply_id, role=Message.Role.ASSISTANT
        ).first()

    async def handle_stop(self, frame: dict) -> None:
        if self.reply_task is not None and not self.reply_task.task.done():
            self.reply_task.cancel("Stopped before the reply finished.")
        else:  # the reply may be streaming from another tab or process
            await self.channel_layer.group_send(self.group, {"type": "chat.stop"})

    def start_reply(self, prepared, *, new_message: bool = True, started: float) -> None:
        self.reply_task = ReplyTask(
            conversation=self.conversation,
            prepared=prepared,
            publish=self.publish,
            new_message=new_message,
            started=started,
        )
        self.reply_task.start()

    async def replay(self, start) -> None:
        """A resend of a stored message: show this tab what exists, store nothing."""
        await self.send_json(self.user_message_frame(start.user_message))
        reply = start.reply
        if reply is not None and reply.status != Message.Status.STREAMING:
            await self.send_json(reply_end_frame(reply))

    # -- frames to the browser ------------------------------------------------------------

    @staticmethod
    def user_message_frame(message: Message) -> dict:
        return {
            "type": "user_message",
            "id": message.pk,
            "client_id": message.client_id,
            "html": escape(message.content),
        }

    async def publish(self, frame: dict) -> None:
        """To this tab directly (it never waits on the channel layer); to the other tabs on
        the conversation, if any, through chat.fanout."""
        try:
            await self.send_json(frame)
        except Exception:  # the socket closed under us; the reply is still stored
            logger.debug("could not send a frame to a closed socket", exc_info=True)
        self.fanout.forward(frame)

    async def send_error(self, exc: ChatError, client_id: str = "") -> None:
        await self.send_json(
            {"type": "error", "code": exc.code, "message": exc.message, "client_id": client_id}
        )

    # -- group events ---------------------------------------------------------------------

    async def dispatch(self, message):
        # Group events touch no database: skip the close_old_connections() thread hop Channels
        # makes before every handler.
        if message["type"].startswith("chat."):
            if self.fanout is not None and self.fanout.heard(message):
                return
            if message["type"] == "chat.frame":
                await self.chat_frame(message)
            elif message["type"] == "chat.stop":
                await self.chat_stop(message)
            return
        await super().dispatch(message)

    async def chat_frame(self, event):
        if event.get("sender") != self.channel_name:  # this tab already has it
            await self.send_json(event["frame"])

    async def chat_stop(self, event):
        if self.reply_task is not None and self.reply_task.task is not None:
            self.reply_task.cancel("Stopped before the reply finished.")
