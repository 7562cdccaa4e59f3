"""A conversation's live side in one server process: its open tabs here, the reply streaming
here (if any), and its one link to the other processes (the conversation's channel-layer
group, through ``chat.fanout``).

A reply belongs to the conversation, not to the tab that asked for it: it is started in the
conversation's ``Room`` and runs to its end (or its cap, or Stop) whatever the tabs do. Its
frames go to every tab of the room directly, each through the tab's own outbox (a slow
socket never holds the reply back), and to the other processes' rooms through the group. A
tab that opens the conversation while the reply streams gets a ``resume`` (the text so far,
as the chunks built it, and their count) and then the chunks after it: from this process's
room at once; from another process's, in answer to ``chat.join``. A room lives while it has
tabs or a reply; ``settle`` waits for the replies (tests, shutdown).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections import deque
from collections.abc import Awaitable, Callable

from channels.layers import get_channel_layer

from chat import protocol
from chat.fanout import TabFanout
from chat.models import STOPPED_BY_USER

logger = logging.getLogger(__name__)

Send = Callable[[protocol.ServerFrame], Awaitable[None]]
# Frames a tab may have waiting before its chunks are replaced by one resume (a stalled socket).
TAB_BACKLOG = 200


class Tab:
    """One websocket's outbox, sent in order by its own task. Frames queue from the moment
    the tab enters its room; ``open`` puts the socket's first frame (``ready``) in front of
    them and starts sending."""

    def __init__(self, send: Send):
        self.send = send
        self.queue: deque[protocol.ServerFrame] = deque()
        self.wake = asyncio.Event()
        self.idle = asyncio.Event()  # nothing waiting to be sent
        self.task: asyncio.Task | None = None
        self.room: Room | None = None

    def open(self, first: protocol.ServerFrame | None = None) -> None:
        if first is not None:
            self.queue.appendleft(first)
        self.task = asyncio.create_task(self._pump(), name="tab-outbox")
        self.wake.set()

    def deliver(self, frame: protocol.ServerFrame) -> None:
        if len(self.queue) >= TAB_BACKLOG and frame["type"] == "chunk" and self.room is not None:
            # Behind by a whole backlog: the queued chunks are replaced by the text so far.
            resume = self.room.resume_frame()
            if resume is not None:
                kept = [f for f in self.queue if f["type"] != "chunk"]
                self.queue = deque(kept)
                frame = resume
        self.queue.append(frame)
        self.idle.clear()
        self.wake.set()

    async def _pump(self) -> None:
        while True:
            await self.wake.wait()
            self.wake.clear()
            while self.queue:
                frame = self.queue.popleft()
                try:
                    await self.send(frame)
                except Exception:  # the socket closed under us; the reply goes on
                    logger.debug("could not send a frame to a closed socket", exc_info=True)
            self.idle.set()

    async def sent(self) -> None:
        """Once every frame delivered so far has been sent."""
        await self.idle.wait()

    def close(self) -> None:
        if self.task is not None:
            self.task.cancel()


class Room:
    def __init__(self, conversation_id: int):
        self.conversation_id = conversation_id
        self.layer = get_channel_layer()
        self.group = protocol.group_name(conversation_id)
        self.tabs: set[Tab] = set()
        self.reply = None  # the chat.turn.ReplyTask streaming here, until its reply is stored
        self.running: set[asyncio.Task] = set()  # reply tasks, their after-turn work included
        self.channel = ""
        self.fanout: TabFanout | None = None
        self.listener: asyncio.Task | None = None
        self.opened = asyncio.ensure_future(self._open())

    async def _open(self) -> None:
        self.channel = await self.layer.new_channel()
        self.fanout = TabFanout(self.layer, self.group, self.channel)
        await self.fanout.start()
        self.listener = asyncio.create_task(self._listen(), name=f"room-{self.conversation_id}")

    def _open_fanout(self) -> TabFanout:
        """The room's fanout, there once the room is open (``enter`` waits for that)."""
        if self.fanout is None:
            raise RuntimeError(f"the room of conversation {self.conversation_id} is not open")
        return self.fanout

    async def _close(self) -> None:
        await self.opened
        if self.listener is not None:
            self.listener.cancel()
        await self._open_fanout().stop()

    # -- tabs ------------------------------------------------------------------------------

    def add(self, tab: Tab) -> None:
        tab.room = self
        self.tabs.add(tab)
        resume = self.resume_frame()
        if resume is not None:
            tab.deliver(resume)

    def ask_resume(self) -> None:
        """A tab here shows a reply streaming in another process: ask that process for it."""
        if self.reply is None:
            self._open_fanout().send_event(protocol.group_join(sender=self.channel))

    def resume_frame(self) -> protocol.ResumeFrame | None:
        reply = self.reply
        return reply.resume_frame() if reply is not None and reply.streaming else None

    async def leave(self, tab: Tab) -> None:
        tab.close()
        self.tabs.discard(tab)
        await self._close_if_unused()

    async def _close_if_unused(self) -> None:
        if self.tabs or self.running:
            return
        rooms = _rooms_here()
        if rooms.get(self.conversation_id) is self:
            del rooms[self.conversation_id]
        await self._close()

    # -- the reply ---------------------------------------------------------------------------

    def start_reply(self, reply_task) -> asyncio.Task:
        """Run ``reply_task`` (a chat.turn.ReplyTask publishing through ``publish``) here,
        whatever becomes of the tab that asked for it."""
        self.reply = reply_task
        task = reply_task.start()
        self.running.add(task)
        task.add_done_callback(self._reply_done)
        return task

    def _reply_done(self, task: asyncio.Task) -> None:
        self.running.discard(task)
        if self.reply is not None and self.reply.task is task:
            self.reply = None
        if not self.running and not self.tabs:
            closing = asyncio.ensure_future(self._close_if_unused())
            _closing.add(closing)
            closing.add_done_callback(_closing.discard)

    def stop(self, reason: str) -> None:
        """Stop from a tab here: the reply, here or wherever it streams."""
        if not self.stop_here(reason):
            self._open_fanout().send_event(protocol.group_stop())

    def stop_here(self, reason: str) -> bool:
        reply = self.reply
        if reply is None or not reply.streaming:
            return False
        reply.cancel(reason)
        return True

    async def publish(self, frame: protocol.ServerFrame) -> None:
        """A frame to every tab on the conversation: here at once (no await between a chunk's
        render and its delivery, so a resume taken at any moment matches the chunks sent),
        in the other processes through the group."""
        for tab in self.tabs:
            tab.deliver(frame)
        self._open_fanout().forward(frame)

    # -- events from the group -------------------------------------------------------------

    async def _listen(self) -> None:
        while True:
            try:
                event = await self.layer.receive(self.channel)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("channel layer unavailable; will retry", exc_info=True)
                await asyncio.sleep(1.0)
                continue
            try:
                self._heard(event)
            except Exception:
                logger.exception("could not handle a channel-layer event")

    def _heard(self, event: dict) -> None:
        if self._open_fanout().heard(event):
            return
        kind = event.get("type")
        if kind == "chat.frame" and event.get("sender") != self.channel:
            for tab in self.tabs:
                tab.deliver(event["frame"])
        elif kind == "chat.stop":
            self.stop_here(STOPPED_BY_USER)
        elif kind == "chat.join" and event.get("sender") != self.channel:
            resume = self.resume_frame()
            if resume is not None:
                self._open_fanout().met(event["sender"])  # snapshots follow the resume
                self._open_fanout().send_direct(event["sender"], resume)


# -- the rooms of this process (of this event loop: tests run one per test) ---------------------

_rooms: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_closing: set[asyncio.Task] = set()


def _rooms_here() -> dict[int, Room]:
    loop = asyncio.get_running_loop()
    rooms = _rooms.get(loop)
    if rooms is None:
        rooms = _rooms[loop] = {}
    return rooms


async def enter(conversation_id: int, tab: Tab) -> Room:
    """The conversation's room in this process (joined to its group), with ``tab`` in it."""
    rooms = _rooms_here()
    room = rooms.get(conversation_id)
    if room is None:
        room = rooms[conversation_id] = Room(conversation_id)
    room.add(tab)  # before any await: no frame between this and the room's others is lost
    try:
        await room.opened
    except BaseException:
        await room.leave(tab)
        raise
    return room


def room_of(conversation_id: int) -> Room | None:
    return _rooms_here().get(conversation_id)


async def settle() -> None:
    """Wait for every reply of this process to end, its after-turn work included, and for
    the rooms left empty to close."""
    while True:
        running = [t for room in _rooms_here().values() for t in room.running]
        if not running and not _closing:
            return
        with contextlib.suppress(Exception):
            await asyncio.gather(*running, *_closing, return_exceptions=True)
        await asyncio.sleep(0)
