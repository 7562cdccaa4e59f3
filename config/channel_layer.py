"""The Redis channel layer: channels_redis's pub/sub layer, publishing concurrently.

channels_redis holds one asyncio lock per shard around every PUBLISH (the lock guards the
subscriber connection, which PUBLISH does not use), so a process sends one frame per Redis
round trip, each waiting for the event loop to come round. Under load that was far fewer
frames per second than the tabs produced, and other tabs' frames queued for seconds. Here
PUBLISH goes through the shard's connection pool without that lock, at most
PUBLISH_CONCURRENCY at a time. Each tab still publishes its frames one after another
(chat.fanout), so their order holds.
"""

from __future__ import annotations

import asyncio

from channels_redis import pubsub

PUBLISH_CONCURRENCY = 16


class _Shard(pubsub.RedisSingleShardConnection):
    def __init__(self, host, channel_layer):
        super().__init__(host, channel_layer)
        self._publishing = asyncio.Semaphore(PUBLISH_CONCURRENCY)

    async def publish(self, channel, message):
        async with self._publishing:
            self._ensure_redis()
            await self._redis.publish(channel, message)


class RedisPubSubChannelLayer(pubsub.RedisPubSubChannelLayer):
    def _get_layer(self):
        layer = super()._get_layer()
        if not getattr(layer, "_concurrent_publish", False):  # a new loop's layer: unused yet
            layer._shards = [_Shard(shard.host, layer) for shard in layer._shards]
            layer._concurrent_publish = True
        return layer
