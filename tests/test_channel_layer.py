"""config.channel_layer on a real Redis (127.0.0.1:6379 unless REDIS_URL says otherwise, on
both test passes): concurrent publishes all arrive; one sender's frames keep their order."""

import asyncio
import os
import uuid

import pytest

from config.channel_layer import PUBLISH_CONCURRENCY, RedisPubSubChannelLayer

REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"


@pytest.fixture
async def layer():
    layer = RedisPubSubChannelLayer(hosts=[REDIS_URL], prefix=f"test-{uuid.uuid4().hex[:8]}")
    yield layer
    await layer.flush()


async def receive_all(layer, channel, count):
    return [(await asyncio.wait_for(layer.receive(channel), 5))["n"] for _ in range(count)]


async def test_concurrent_group_sends_all_arrive(layer):
    channel = await layer.new_channel()
    await layer.group_add("tabs", channel)
    count = PUBLISH_CONCURRENCY * 4
    await asyncio.gather(*(layer.group_send("tabs", {"type": "t", "n": n}) for n in range(count)))
    assert sorted(await receive_all(layer, channel, count)) == list(range(count))


async def test_one_senders_frames_keep_their_order(layer):
    channel = await layer.new_channel()
    await layer.group_add("tabs", channel)
    for n in range(50):
        await layer.group_send("tabs", {"type": "t", "n": n})
    assert await receive_all(layer, channel, 50) == list(range(50))


async def test_publishes_do_not_wait_for_each_other(layer):
    """channels_redis's own shard publishes one at a time behind a lock; ours overlap."""
    await layer.group_send("warm-up", {"type": "t", "n": 0})  # the connection pool exists
    shard = layer._get_layer()._shards[0]
    in_flight, peak = 0, 0
    publish = shard._redis.publish

    async def slow_publish(*args):
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.05)
        try:
            return await publish(*args)
        finally:
            in_flight -= 1

    shard._redis.publish = slow_publish
    await asyncio.gather(*(layer.group_send("tabs", {"type": "t", "n": n}) for n in range(8)))
    assert peak == 8
