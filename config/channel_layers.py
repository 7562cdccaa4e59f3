"""A Redis channel layer that rides out a Redis restart.

channels_redis raises from ``receive`` when Redis goes away, and Channels then closes every
websocket of the process (1011). Here ``receive`` waits and tries again instead, so open pages
survive a Redis restart; ``send``/``group_send`` still raise, and the consumer treats those as
"the other tabs miss a frame" (see chat.consumers.ChatConsumer.publish).
"""

from __future__ import annotations

import asyncio
import logging

import redis.exceptions
from channels_redis.core import RedisChannelLayer

logger = logging.getLogger(__name__)

TRANSIENT = (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)


class ResilientRedisChannelLayer(RedisChannelLayer):
    async def receive(self, channel):
        delay = 0.1
        while True:
            try:
                return await super().receive(channel)
            except TRANSIENT:
                logger.warning("Redis unavailable; retrying receive in %.1fs", delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
