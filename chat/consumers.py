"""The chat websocket: checks ownership, parses frames (chat.protocol), hands turns to
chat.turn, whose replies run in the conversation's room (chat.live), not in this tab."""

from __future__ import annotations

import asyncio
import logging

from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.db import DatabaseError
from django.db.models import Count

from chat import branches, job_watch, limits, live, protocol, services
from chat.models import STOPPED_BY_USER, Conversation, Message
from chat.rendering import render_markdown
from chat.services import ChatError
from chat.turn import in_db_thread, take_turn, take_turn_again
from llm import model_configured
from memory.models import MemoryEvent
from memory.services import memory_event_undo

logger = logging.getLogger(__name__)

CLOSE_UNAUTHENTICATED = 4401
CLOSE_FORBIDDEN = 4403
CLOSE_TOO_MANY_SOCKETS = 4429
SOCKET_LEASE_SECONDS = 60


class ChatConsumer(AsyncJsonWebsocketConsumer):
    conversation: Conversation | None = None
    room: live.Room | None = None
    tab: live.Tab | None = None
    slots: limits.SocketSlots | None = None
    renewing: asyncio.Task | None = None
    session_group: str | None = None
    user_group: str | None = None

    async def connect(self):
        # A refusal is an accepted socket closed with our code: closed before the handshake,
        # the browser would only see a dropped connection (1006) and retry for ever.
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.refuse(CLOSE_UNAUTHENTICATED)
            return
        slots = limits.SocketSlots(
            user.pk,
            self.channel_name,
            limit=settings.MEMORYCHAT_MAX_SOCKETS_PER_USER,
            lease=SOCKET_LEASE_SECONDS,
        )
        if not await in_db_thread(slots.claim)():
            await self.refuse(CLOSE_TOO_MANY_SOCKETS)
            return
        self.slots = slots
        self.renewing = asyncio.create_task(self._renew_slot(slots))
        conversation_id = self.scope["url_route"]["kwargs"]["conversation_id"]
        self.conversation = (
            await Conversation.objects.select_related("user")
            .filter(pk=conversation_id, user=user)
            .afirst()
        )
        if self.conversation is None:
            await self._release_slot()
            await self.refuse(CLOSE_FORBIDDEN)
            return
        # Frames of the conversation queue for this tab from here on (sent once it is ready).
        self.tab = live.Tab(self.send_json)
        self.room = await live.enter(self.conversation.pk, self.tab)
        # Memory notices of the user's other conversations reach this tab too.
        self.user_group = protocol.user_group(user.pk)
        await self.channel_layer.group_add(self.user_group, self.channel_name)
        session_key = getattr(self.scope.get("session"), "session_key", None)
        if session_key:  # signing out in another tab closes this socket
            self.session_group = protocol.session_group(session_key)
            await self.channel_layer.group_add(self.session_group, self.channel_name)
        await self.accept()
        streaming = await in_db_thread(self._streaming_reply_id)()
        self.tab.open(protocol.ready(streaming=streaming, offline=not model_configured()))
        if streaming is not None:  # streaming here, the room sent a resume; else ask for one
            self.room.ask_resume()

    def _streaming_reply_id(self) -> int | None:
        services.replies_interrupt_stale(conversation=self.conversation)
        return (
            Message.objects.filter(conversation=self.conversation, status=Message.Status.STREAMING)
            .values_list("pk", flat=True)
            .first()
        )

    async def _renew_slot(self, slots: limits.SocketSlots) -> None:
        while True:
            await asyncio.sleep(SOCKET_LEASE_SECONDS / 3)
            try:
                await in_db_thread(slots.renew)()
            except Exception:  # the cache is away for a moment: the next renewal retries
                logger.warning("could not renew a websocket slot", exc_info=True)

    async def _release_slot(self) -> None:
        if self.renewing is not None:
            self.renewing.cancel()
            self.renewing = None
        if self.slots is not None:
            try:
                await in_db_thread(self.slots.release)()
            except Exception:  # it expires by itself
                logger.warning("could not release a websocket slot", exc_info=True)
            self.slots = None

    async def refuse(self, code: int) -> None:
        await self.accept()
        await self.close(code=code)

    async def disconnect(self, code):
        await self._release_slot()
        for group in (self.session_group, self.user_group):
            if group is None:
                continue
            try:
                await self.channel_layer.group_discard(group, self.channel_name)
            except Exception:
                logger.warning("channel layer unavailable at disconnect", exc_info=True)
        # A reply streaming goes on without this tab (chat.live).
        if self.room is not None and self.tab is not None:  # the tab is made first
            await self.room.leave(self.tab)

    def _joined(self) -> tuple[Conversation, live.Room, live.Tab]:
        """The conversation, its room and this tab: ``connect`` sets them before it accepts
        the socket (a refused one has none, and its frames get a server_error)."""
        if self.conversation is None or self.room is None or self.tab is None:
            raise RuntimeError("a frame on a socket that is not on a conversation")
        return self.conversation, self.room, self.tab

    # -- frames from the browser ----------------------------------------------------------

    async def receive(self, text_data=None, bytes_data=None, **kwargs):
        # Not the JSON consumer's own decoding: bad JSON gets an error frame, not an exception.
        try:
            content = protocol.decode(text_data)
        except protocol.FrameError as exc:
            await self.send_error(exc)
            return
        await self.receive_json(content)

    async def receive_json(self, content, **kwargs):
        client_id = protocol.error_client_id(content)
        try:
            match protocol.parse(content):
                case protocol.Send() as frame:
                    await self.handle_send(frame)
                case protocol.Stop():
                    await self.handle_stop()
                case protocol.Retry() as frame:
                    await self.handle_again("retry", message_id=frame.message_id)
                case protocol.Continue() as frame:  # the rest of a reply the length cap cut
                    await self.handle_again("continue", reply_id=frame.message_id)
                case protocol.Regenerate() as frame:
                    await self.handle_again("regenerate", message_id=frame.message_id)
                case protocol.Edit() as frame:
                    await self.handle_again("edit", message_id=frame.message_id, text=frame.text)
                case protocol.SwitchBranch() as frame:
                    await self.handle_switch_branch(frame)
                case protocol.Sync() as frame:
                    await self.handle_sync(frame)
                case protocol.MemoryUndo() as frame:
                    await in_db_thread(self._undo_memory_event)(frame.event_id)
        except ChatError as exc:
            await self.send_error(exc, client_id=client_id)
        except DatabaseError:
            logger.exception("database error handling a frame")
            unavailable = ChatError(
                "The service cannot store messages right now (database unavailable). Nothing "
                "was saved; your message is still here, try again in a moment.",
                code="unavailable",
            )
            await self.send_error(unavailable, client_id=client_id)
        except Exception:
            # Whatever a frame does, the socket stays open and the page is told.
            logger.exception("unexpected error handling a frame")
            failed = ChatError(
                "Something went wrong with that request; nothing was changed. Try again.",
                code="server_error",
            )
            await self.send_error(failed, client_id=client_id)

    async def handle_send(self, frame: protocol.Send) -> None:
        """The turn runs in the conversation's room (chat.turn.take_turn): closing this tab
        does not stop its reply."""
        conversation, room, _tab = self._joined()
        turn = await take_turn(
            user=self.scope["user"],
            conversation=conversation,
            text=frame.text,
            client_id=frame.client_id,
            room=room,
        )
        if turn.task is None:  # a resend of a stored message
            await self.replay(turn.start)

    async def handle_again(self, kind: str, **arguments) -> None:
        """Retry, Continue, regenerate (the reply's article is replaced, its earlier version
        kept) or edit the last message and answer it again."""
        conversation, room, _tab = self._joined()
        await take_turn_again(
            kind,
            user=self.scope["user"],
            conversation=conversation,
            room=room,
            **arguments,
        )

    async def handle_switch_branch(self, frame: protocol.SwitchBranch) -> None:
        """Show the branch a question starts ("1 / 2"): every tab swaps it in."""
        switched, frames = await in_db_thread(self._switch_branch)(frame.message_id)
        for each in frames:
            await self.publish(each)
        if switched.title_job is not None:  # the branch's title, made by the job worker
            job_watch.watch(switched.title_job)

    def _switch_branch(self, message_id: int):
        conversation, _room, _tab = self._joined()
        switched = branches.branch_switch(conversation=conversation, message_id=message_id)
        return switched, branches.switched_frames(conversation=conversation, switched=switched)

    async def handle_sync(self, frame: protocol.Sync) -> None:
        """A tab that heard nothing of a reply for a while asks where it stands (its frames
        may have been lost on a busy or restarting channel layer)."""
        reply = await in_db_thread(self._reply_state)(frame.reply_id)
        if reply is None:
            raise protocol.FrameError("That reply is not in this conversation.", code="not_found")
        _conversation, room, tab = self._joined()
        if reply.status == Message.Status.STREAMING:
            resume = room.resume_frame()
            if resume is not None and resume["id"] == reply.pk:  # it streams here
                tab.deliver(resume)
                return
            tab.deliver(
                protocol.snapshot(
                    reply_id=reply.pk, text=reply.content, html=render_markdown(reply.content)
                )
            )
        else:
            tab.deliver(protocol.reply_end(reply))

    def _undo_memory_event(self, event_id: int) -> None:
        """Undo a "Remembered: ..." notice of this conversation and this user (anyone else's
        is not found). Every tab gets the undone notice from the service, once committed."""
        event = MemoryEvent.objects.filter(
            pk=event_id, user=self.scope["user"], conversation=self.conversation
        ).first()
        if event is None:
            raise protocol.FrameError(
                "That memory notice is not in this conversation.", code="not_found"
            )
        memory_event_undo(event=event, actor=self.scope["user"])

    def _reply_state(self, reply_id: int) -> Message | None:
        services.replies_interrupt_stale(conversation=self.conversation)
        # annotate() over the class attribute's default: a false report (django-stubs#2818)
        return (
            Message.objects.filter(  # type: ignore[no-redef]
                conversation=self.conversation, pk=reply_id, role=Message.Role.ASSISTANT
            )
            .annotate(version_count=Count("versions"))
            .first()
        )

    async def handle_stop(self) -> None:
        _conversation, room, _tab = self._joined()
        room.stop(STOPPED_BY_USER)  # here, or in the process the reply streams in

    async def replay(self, start) -> None:
        """A resend of a stored message: show this tab what exists, store nothing."""
        _conversation, _room, tab = self._joined()
        tab.deliver(protocol.user_message(start.user_message))
        reply = start.reply
        if reply is not None and reply.status != Message.Status.STREAMING:
            tab.deliver(protocol.reply_end(reply))

    # -- frames to the browser ------------------------------------------------------------

    async def publish(self, frame: protocol.ServerFrame) -> None:
        """To every tab on the conversation, this one included (chat.live)."""
        _conversation, room, _tab = self._joined()
        await room.publish(frame)

    async def send_error(self, exc: ChatError, client_id: str = "") -> None:
        """To this tab only, in order with the conversation's frames."""
        frame = protocol.error(exc, client_id=client_id)
        if self.tab is not None and self.tab.task is not None:
            self.tab.deliver(frame)
        else:
            await self.send_json(frame)

    # -- group events ---------------------------------------------------------------------

    async def dispatch(self, message):
        # Group events touch no database: skip the close_old_connections() thread hop Channels
        # makes before every handler. The conversation's own events reach its room, not this
        # consumer (chat.live); the user's and the session's reach each tab.
        if message["type"].startswith("chat."):
            if message["type"] == "chat.user_frame":
                await self.chat_user_frame(message)
            elif message["type"] == "chat.signed_out":
                await self.chat_signed_out(message)
            elif message["type"] == "chat.conversation_settings":
                self.chat_conversation_settings(message)
            return
        if message["type"] == "websocket.receive":
            # Nor before a frame from the browser: its database work runs in our own threads
            # (chat.turn.in_db_thread), which close stale connections themselves; the hop
            # would wait on asgiref's one shared thread, behind every other tab's.
            await self.websocket_receive(message)
            return
        await super().dispatch(message)

    async def chat_user_frame(self, event):
        if self.conversation is not None and event.get("conversation_id") != self.conversation.pk:
            await self.send_json(event["frame"])

    def chat_conversation_settings(self, event):
        """New settings of this conversation (chat.fanout.conversation_settings_changed):
        the next turn is answered with them."""
        if self.conversation is not None and event.get("conversation_id") == self.conversation.pk:
            self.conversation.model = event["model"]
            self.conversation.strategy = event["strategy"]
            self.conversation.context_budget = event["context_budget"]
            # The project's scope and instructions (a changed id drops the cached project).
            self.conversation.project_id = event.get("project_id")

    async def chat_signed_out(self, event):
        await self.close(code=CLOSE_UNAUTHENTICATED)
