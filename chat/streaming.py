"""Relay a reply's text deltas in batches: the first at once, then at most one frame per
interval, so a fast model cannot flood the socket and a slow one is not held back."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

BATCH_INTERVAL = 0.03  # seconds


class ChunkBatcher:
    def __init__(self, send: Callable[[str], Awaitable[None]], interval: float = BATCH_INTERVAL):
        self._send = send
        self.interval = interval
        self._buffer: list[str] = []
        self._last = float("-inf")
        self._lock = asyncio.Lock()
        self._timer: asyncio.TimerHandle | None = None
        self._pending: set[asyncio.Task] = set()

    async def add(self, text: str) -> None:
        if not text:
            return
        self._buffer.append(text)
        loop = asyncio.get_running_loop()
        wait = self._last + self.interval - loop.time()
        if wait <= 0:
            await self.flush()
        elif self._timer is None:
            # Text arrived too soon after the last frame: send it when the interval is up,
            # even if the model pauses now.
            self._timer = loop.call_later(wait, self._flush_later)

    def _flush_later(self) -> None:
        self._timer = None
        task = asyncio.ensure_future(self.flush())
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)

    async def flush(self) -> None:
        async with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if not self._buffer:
                return
            text = "".join(self._buffer)
            self._buffer.clear()
            self._last = asyncio.get_running_loop().time()
            await self._send(text)

    async def close(self) -> None:
        """Send what is left and stop the timer."""
        await self.flush()
        for task in list(self._pending):
            await task
