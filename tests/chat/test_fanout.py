"""chat.fanout: what other tabs get through the channel layer (the layer of the settings:
in-memory, or Redis on the second test pass)."""

import asyncio

from channels.layers import get_channel_layer

from chat import protocol
from chat.fanout import TabFanout


async def next_frame(layer, channel):
    while True:
        event = await asyncio.wait_for(layer.receive(channel), 5)
        if event["type"] == "chat.frame":
            return event["frame"]


async def test_a_tab_not_yet_announced_still_gets_the_turn_but_no_snapshots():
    layer = get_channel_layer()
    group = "conversation-fanout-test"
    sender_channel = await layer.new_channel()
    watcher = await layer.new_channel()
    await layer.group_add(group, watcher)
    fanout = TabFanout(layer, group, sender_channel)
    await fanout.start()
    try:
        assert not fanout.others  # the watcher's announcement has not arrived
        fanout.forward({"type": "reply_start", "id": 7, "reply_to": 6})
        fanout.forward(protocol.chunk(reply_id=7, seq=1, text="partial", tail="<p>partial</p>"))
        fanout.forward({"type": "reply_end", "id": 7, "status": "complete", "html": "done"})
        frames = [await next_frame(layer, watcher) for _ in range(2)]
        assert [f["type"] for f in frames] == ["reply_start", "reply_end"]
    finally:
        await fanout.stop()
        await layer.group_discard(group, watcher)


async def test_a_tab_alone_in_one_process_sends_nothing_through_the_layer(monkeypatch):
    """With the in-memory layer (one process: its groups are every tab there is), a tab with
    no other tab on its conversation sends the layer nothing; once another tab joins, it gets
    the turn's frames again. On Redis every frame goes (other processes are not known)."""
    from channels.layers import InMemoryChannelLayer

    layer = get_channel_layer()
    group = "conversation-fanout-alone"
    sender_channel = await layer.new_channel()
    sent = []
    send = layer.group_send

    async def counted(group_name, event):
        sent.append(event)
        await send(group_name, event)

    monkeypatch.setattr(layer, "group_send", counted)
    fanout = TabFanout(layer, group, sender_channel)
    await fanout.start()
    watcher = await layer.new_channel()
    try:
        fanout.forward({"type": "reply_start", "id": 8, "reply_to": 7})
        fanout.forward({"type": "reply_end", "id": 8, "status": "complete", "html": "done"})
        await asyncio.wait_for(fanout.outbox.join(), 5)
        in_memory = isinstance(layer, InMemoryChannelLayer)
        assert fanout.alone() == in_memory
        assert len(sent) == (0 if in_memory else 3)  # with the first announcement

        await layer.group_add(group, watcher)
        assert not fanout.alone()
        fanout.forward({"type": "reply_start", "id": 9, "reply_to": 7})
        while (await next_frame(layer, watcher))["id"] != 9:
            pass  # Redis: the group's frames that were on their way
    finally:
        await fanout.stop()
        await layer.group_discard(group, watcher)
