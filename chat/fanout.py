"""Frames for the other server processes' tabs on a conversation, through the channel layer,
light enough that a busy Redis keeps up. One per conversation and process: its ``chat.live``
room's, whose channel is the process's one member of the conversation's group.

The tabs in the reply's own process get every chunk from the room. The other processes get
``reply_start``, a ``snapshot`` of the text so far at most every SNAPSHOT_INTERVAL seconds, and
``reply_end``: a dropped snapshot is repaired by the next one. Snapshots, the bulk of it, go
only when other rooms are known: rooms announce themselves (``chat.present``, on connect and
every PRESENCE_INTERVAL) and leave (``chat.left``). The few frames of a turn (the user's
message, ``reply_start``, ``reply_end``) always go, unless the layer is the in-memory one (a
single process) and its group holds no other room: then nobody could get them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from channels.layers import InMemoryChannelLayer

from chat import protocol

logger = logging.getLogger(__name__)

SNAPSHOT_INTERVAL = 0.5
PRESENCE_INTERVAL = 10.0
PRESENCE_TTL = 6 * PRESENCE_INTERVAL  # generous: a busy layer may delay announcements
OUTBOX_LIMIT = 500  # events waiting for the channel layer before the other tabs miss some
DRAIN_SECONDS = 2.0


def send_to_conversation(conversation_id: int, frame: protocol.ServerFrame) -> None:
    """From code outside a consumer (a view, a job worker, a database thread): ``frame`` to
    every tab on the conversation, in every process. Synchronous; never on the event loop."""
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    if layer is not None:
        group = protocol.group_name(conversation_id)
        async_to_sync(layer.group_send)(group, protocol.group_frame(frame, sender=""))


def send_to_users_other_tabs(
    user_id: int, conversation_id: int, frame: protocol.ServerFrame
) -> None:
    """Like ``send_to_conversation``: ``frame`` to the user's tabs on their other
    conversations (the tabs on ``conversation_id`` get that conversation's frames)."""
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    if layer is not None:
        event = protocol.group_user_frame(frame, conversation_id=conversation_id)
        async_to_sync(layer.group_send)(protocol.user_group(user_id), event)


def conversation_settings_changed(conversation) -> None:
    """The conversation's model, strategy, budget or project changed (a page's form): every tab of
    its user keeps the conversation it answers with, so each tab on it takes the new values
    for its next turn (``ChatConsumer.chat_conversation_settings``). Synchronous."""
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    if layer is not None:
        event = protocol.group_conversation_settings(conversation)
        async_to_sync(layer.group_send)(protocol.user_group(conversation.user_id), event)


class TabFanout:
    def __init__(self, channel_layer, group: str, channel_name: str):
        self.layer = channel_layer
        self.group = group
        self.channel = channel_name
        self.seen: dict[str, float] = {}  # other tabs' channels -> when last heard of
        self.texts: dict[int, list[str]] = {}  # reply id -> text so far
        self.htmls: dict[int, list[str]] = {}  # reply id -> its rendered final blocks
        self.tails: dict[int, str] = {}  # reply id -> its rendered last block
        self.snapshot_at: dict[int, float] = {}
        self.queued_snapshots: dict[int, dict] = {}  # reply id -> its snapshot not yet sent
        # (a channel, or None for the group; the event), sent in order
        self.outbox: asyncio.Queue = asyncio.Queue(maxsize=OUTBOX_LIMIT)
        self.tasks: list[asyncio.Task] = []

    async def start(self) -> None:
        await self.layer.group_add(self.group, self.channel)
        self.tasks = [asyncio.create_task(self._drain()), asyncio.create_task(self._announce())]

    async def stop(self) -> None:
        self._enqueue(protocol.group_left(sender=self.channel))
        with contextlib.suppress(TimeoutError):  # let the other tabs get the last frames
            await asyncio.wait_for(self.outbox.join(), DRAIN_SECONDS)
        for task in self.tasks:
            task.cancel()
        try:
            await self.layer.group_discard(self.group, self.channel)
        except Exception:
            logger.warning("channel layer unavailable at disconnect", exc_info=True)

    def alone(self) -> bool:
        """True when the group surely holds no other tab: the in-memory layer's groups are
        this process's, all of them (a frame sent anyway reaches only this consumer, which
        drops it: two sweeps of the layer's every group and a dispatch, per frame)."""
        if not isinstance(self.layer, InMemoryChannelLayer):
            return False
        return all(channel == self.channel for channel in self.layer.groups.get(self.group, ()))

    @property
    def others(self) -> bool:
        now = time.monotonic()
        return any(now - seen < PRESENCE_TTL for seen in self.seen.values())

    # -- events from the group -----------------------------------------------------------

    def heard(self, event: dict) -> bool:
        """Note presence events; True when ``event`` is one (the room stops there)."""
        sender: str = event.get("sender", "")  # presence events always name theirs
        if event["type"] == "chat.present" and sender != self.channel:
            if sender not in self.seen:
                # So the newcomer knows us at once.
                self._enqueue(protocol.group_present(sender=self.channel))
            self.seen[sender] = time.monotonic()
            return True
        if event["type"] == "chat.left":
            self.seen.pop(sender, None)
            return True
        return event["type"] == "chat.present"

    # -- frames to the other tabs --------------------------------------------------------

    def forward(self, frame: protocol.ServerFrame) -> None:
        if frame["type"] == "chunk":
            parts = self.texts.setdefault(frame["id"], [])
            parts.append(frame["text"])
            htmls = self.htmls.setdefault(frame["id"], [])
            if frame["html"]:
                htmls.append(frame["html"])
            self.tails[frame["id"]] = frame["tail"]
            now = time.monotonic()
            if self.others and now - self.snapshot_at.get(frame["id"], 0.0) >= SNAPSHOT_INTERVAL:
                self.snapshot_at[frame["id"]] = now
                snapshot = protocol.snapshot(
                    reply_id=frame["id"],
                    text="".join(parts),
                    html="".join(htmls) + frame["tail"],
                    seq=frame["seq"],
                )
                queued = self.queued_snapshots.get(frame["id"])
                if queued is not None:
                    queued["frame"] = snapshot  # still waiting: send the newer text instead
                else:
                    self.queued_snapshots[frame["id"]] = self._send(snapshot)
            return
        if frame["type"] == "reply_start" or frame["type"] == "reply_end":
            self.texts.pop(frame["id"], None)
            self.htmls.pop(frame["id"], None)
            self.tails.pop(frame["id"], None)
            self.snapshot_at.pop(frame["id"], None)
        # A handful of frames per turn: sent even when no other tab is known yet, so a tab
        # whose announcement was late or lost still learns of every message and reply.
        self._send(frame)

    def send_event(self, event: dict) -> None:
        """A channel-layer event (``chat.stop``, ``chat.join``) for the group, in order."""
        self._enqueue(event)

    def send_direct(self, channel: str, frame: protocol.ServerFrame) -> None:
        """``frame`` to one other room (a ``resume`` it asked for), in order with the rest."""
        self._enqueue(protocol.group_frame(frame, sender=self.channel), to=channel)

    def met(self, channel: str) -> None:
        """Another room is there (it asked to resume): snapshots go from now on."""
        self.seen[channel] = time.monotonic()

    def _send(self, frame: protocol.ServerFrame) -> dict:
        return self._enqueue(protocol.group_frame(frame, sender=self.channel))

    def _enqueue(self, event: dict, to: str | None = None) -> dict:
        try:
            self.outbox.put_nowait((to, event))
        except asyncio.QueueFull:
            logger.warning("the channel layer is not keeping up; other tabs miss a frame")
        return event

    async def _drain(self) -> None:
        """Send in order, off the reply's path: a Redis round trip per frame would slow it."""
        while True:
            to, event = await self.outbox.get()
            frame = event.get("frame")
            if frame is not None and frame["type"] == "snapshot":
                self.queued_snapshots.pop(frame["id"], None)
            try:
                if to is not None:
                    await self.layer.send(to, event)
                elif not self.alone():
                    await self.layer.group_send(self.group, event)
            except Exception:
                logger.warning("channel layer unavailable; other tabs miss a frame", exc_info=True)
            finally:
                self.outbox.task_done()

    async def _announce(self) -> None:
        """Say we are here now and then, and rejoin the group: a restarted Redis forgot it."""
        while True:
            self._enqueue(protocol.group_present(sender=self.channel))
            await asyncio.sleep(PRESENCE_INTERVAL)
            try:
                await self.layer.group_add(self.group, self.channel)
            except Exception:
                logger.warning("channel layer unavailable; will retry", exc_info=True)
