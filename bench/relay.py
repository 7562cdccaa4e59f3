"""The bare relay: the least a Channels app can do to stream a model's reply to a websocket.

``bench/stream.py`` serves this beside the app, under the same ASGI server, the same client and
the same upstream, and reports the app's figures as ratios to it. It is the floor the app is
measured against, so it does only what relaying needs:

* a Channels ``AsyncJsonWebsocketConsumer`` (the in-memory channel layer, as the app's
  embedded default: each consumer has a channel, as every Channels consumer does);
* on a ``send`` frame: one streamed chat-completions request with the ``openai.AsyncOpenAI``
  client (one per event loop), its server-sent events read as JSON the way the app's provider
  reads them (``llm.providers.OpenAIProvider``: no pydantic object per token, the body read to
  its end after ``[DONE]`` so that the connection is reused);
* the text relayed in batches with the app's policy (the first delta at once, then at most one
  frame every 30 ms), framed as the app's protocol does (``reply_start``, ``chunk``,
  ``reply_end``), so ``bench.harness.ChatSocket`` times both alike.

No sign-in, no database, no context, no storing, no other tabs. Kept under ``bench/``: it is
no part of the app. Served as ``bench.relay:application``; the model's address and key come
from ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY`` as for the app.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os

import django
from django.conf import settings

if not settings.configured:
    settings.configure(
        CHANNEL_LAYERS={"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}},
        INSTALLED_APPS=["channels"],
        USE_TZ=True,
    )
    django.setup()

import httpx2
import openai
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.routing import ProtocolTypeRouter, URLRouter
from django.urls import re_path

BATCH_INTERVAL = 0.03  # seconds: chat.streaming.BATCH_INTERVAL
DRAIN_SECONDS = 0.2  # llm.providers.DRAIN_SECONDS
MODEL = os.environ.get("OPENAI_MODEL", "gpt-4o")
_ids = itertools.count(1)
_clients: dict[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = {}


def client() -> openai.AsyncOpenAI:
    loop = asyncio.get_running_loop()
    if loop not in _clients:
        _clients[loop] = openai.AsyncOpenAI(
            api_key=os.environ.get("OPENAI_API_KEY", "bench-key"),
            base_url=os.environ.get("OPENAI_BASE_URL") or None,
            timeout=httpx2.Timeout(60.0, connect=10.0),
            max_retries=2,
        )
    return _clients[loop]


async def drain(lines) -> None:
    """The body's end after [DONE], as the app's provider reads it (``llm.providers._drain``):
    the connection goes back to the client's pool."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in lines:
                pass


class RelayConsumer(AsyncJsonWebsocketConsumer):
    task: asyncio.Task | None = None

    async def connect(self):
        await self.accept()
        await self.send_json({"type": "ready", "streaming": None, "offline": False})

    async def receive_json(self, content, **kwargs):
        if content.get("type") == "send" and (self.task is None or self.task.done()):
            self.task = asyncio.create_task(self.relay(content["text"]))

    async def disconnect(self, code):
        if self.task is not None:
            self.task.cancel()

    async def relay(self, text: str) -> None:
        reply_id = next(_ids)
        request = client().chat.completions.with_streaming_response.create(
            model=MODEL,
            messages=[],
            extra_body={"messages": [{"role": "user", "content": text}]},
            stream=True,
            stream_options={"include_usage": True},
        )
        loop = asyncio.get_running_loop()
        buffer: list[str] = []
        last = float("-inf")
        timer: asyncio.TimerHandle | None = None
        pending: set[asyncio.Task] = set()
        status = "complete"

        async def flush() -> None:
            nonlocal last, timer
            if timer is not None:
                timer.cancel()
                timer = None
            if buffer:
                chunk = {"type": "chunk", "id": reply_id, "text": "".join(buffer)}
                buffer.clear()
                last = loop.time()
                await self.send_json(chunk)

        def flush_later() -> None:
            nonlocal timer
            timer = None
            task = asyncio.ensure_future(flush())
            pending.add(task)
            task.add_done_callback(pending.discard)

        try:
            async with request as response:
                await self.send_json({"type": "reply_start", "id": reply_id, "reply_to": 0})
                lines = response.iter_lines()
                async for line in lines:
                    if not line.startswith("data:"):
                        continue
                    data = line[5:].strip()
                    if data == "[DONE]":
                        await drain(lines)
                        break
                    for choice in json.loads(data).get("choices") or ():
                        delta = (choice.get("delta") or {}).get("content")
                        if delta:
                            buffer.append(delta)
                            if loop.time() - last >= BATCH_INTERVAL:
                                await flush()
                            elif timer is None:
                                timer = loop.call_at(last + BATCH_INTERVAL, flush_later)
        except Exception:
            status = "failed"
        for task in list(pending):
            await task
        await flush()
        await self.send_json({"type": "reply_end", "id": reply_id, "status": status, "error": ""})


application = ProtocolTypeRouter(
    {
        "websocket": URLRouter(
            [re_path(r"^ws/chat/(?P<conversation_id>\d+)/$", RelayConsumer.as_asgi())]
        )
    }
)
