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
        fanout.forward(protocol.chunk(reply_id=7, text="partial", tail="<p>partial</p>"))
        fanout.forward({"type": "reply_end", "id": 7, "status": "complete", "html": "done"})
        frames = [await next_frame(layer, watcher) for _ in range(2)]
        assert [f["type"] for f in frames] == ["reply_start", "reply_end"]
    finally:
        await fanout.stop()
        await layer.group_discard(group, watcher)
