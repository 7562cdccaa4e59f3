"""Reply streams: a real OpenAI-compatible server, or the offline provider.

``get_provider()`` returns the OpenAI-compatible provider when ``OPENAI_API_KEY`` is set, else
the offline provider. Both stream text deltas through the same ``ReplyStream`` interface and
raise ``UpstreamError`` with a message fit for the page.

Retries: the openai client retries 429 and 5xx (and connection errors) itself, with backoff,
before the response starts — i.e. before the first token. Once tokens flow nothing is retried:
the partial reply is kept and the user can retry.

Every request is shaped for the server (``llm.messages``) and capped (``max_tokens``, the
conversation's reply reserve): a real server has no other limit than its context, and one
uncapped reply ran for minutes. ``server_fields`` go into the body as they are (llama.cpp's
``id_slot``, ``llm.pinning``). ``ReplyStream.finish_reason`` says why the reply ended;
``"length"`` is a reply cut by that cap, which the page offers to continue.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from django.conf import settings

from llm import OFFLINE_MODEL, limits
from llm.clients import async_client, chat_endpoint, max_tokens_field
from llm.errors import UpstreamError, describe_error
from llm.messages import shape_messages
from llm.offline import compose_offline_reply, split_for_streaming

logger = logging.getLogger(__name__)

OFFLINE_WORD_DELAY = 0.012  # seconds between pieces, so the offline reply visibly streams
DRAIN_SECONDS = 0.2  # at most, for the stream's end after [DONE]: the reply is complete already


@dataclass
class Usage:
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None  # prompt tokens the server reused from its cache


def cached_tokens(event: dict) -> int | None:
    """The prompt tokens a server says it reused: OpenAI's usage.prompt_tokens_details
    .cached_tokens, or llama.cpp's timings.cache_n (its own field, beside usage)."""
    details = (event.get("usage") or {}).get("prompt_tokens_details") or {}
    timings = event.get("timings") or {}
    for value in (details.get("cached_tokens"), timings.get("cache_n")):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


@dataclass
class ReplyStream:
    """Text deltas of one reply. Iterate it; ``usage`` is filled when the stream ends."""

    model: str
    offline: bool = False
    chunks: AsyncGenerator[str, None] | None = None
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None  # "stop", "length", ... once the stream ends
    _closer: Callable[[], Awaitable[object]] | None = None

    @property
    def cut_by_length(self) -> bool:
        return self.finish_reason == "length"

    def __aiter__(self) -> AsyncIterator[str]:
        assert self.chunks is not None
        return self.chunks

    async def aclose(self) -> None:
        """Cancel the upstream request (Stop, a closed tab)."""
        if self.chunks is not None:
            await self.chunks.aclose()
        if self._closer is not None:
            await self._closer()


class OpenAIProvider:
    """Streams through the openai client (configuration, retries, timeouts, errors) but reads
    the server-sent events itself: building a pydantic object per token was a third of the
    server's CPU under load, and the JSON is all a reply needs."""

    offline = False

    async def stream(
        self,
        messages: Sequence[dict],
        *,
        model: str,
        report=None,
        max_tokens: int | None = None,
        server_fields: dict | None = None,
    ) -> ReplyStream:
        body: dict = {"messages": shape_messages(messages), **(server_fields or {})}
        if max_tokens:
            body.update(max_tokens_field(max_tokens))
        request = async_client().chat.completions.with_streaming_response.create(
            model=model,
            # The client type-walks and copies ``messages`` on the event loop (~2 ms for a
            # dozen, more for a long window); ours are plain role/content strings already, so
            # they go into the JSON body as they are, through extra_body.
            messages=[],
            extra_body=body,
            stream=True,
            stream_options={"include_usage": True},
        )
        try:
            response = await request.__aenter__()  # raises on 4xx/5xx, after the retries
        except Exception as exc:
            if limits.overflow(exc) and report and report.get("total_tokens"):
                # The next turn is built under the limit learned: never this request again.
                limits.learn_overflow(
                    chat_endpoint(),
                    model,
                    exc,
                    estimated=report["total_tokens"],
                    answer_cap=max_tokens or 0,
                )
            raise describe_error(exc) from exc
        reply = ReplyStream(model=model, _closer=response.close)
        reply.chunks = self._deltas(response, reply, report)
        return reply

    async def _deltas(self, response, reply: ReplyStream, report=None) -> AsyncGenerator[str, None]:
        finished = done = False
        lines = response.iter_lines()
        try:
            async for line in lines:
                if not line.startswith("data:"):
                    continue  # blank separators, comments, "event:" lines
                data = line[5:].strip()
                if data == "[DONE]":
                    done = True
                    break
                event = json.loads(data)
                if event.get("error"):
                    # Its words are for staff (the detail), not for the page.
                    raise UpstreamError("The model failed mid-reply.", detail=data[:2000])
                usage = event.get("usage")
                if usage:
                    reply.usage.prompt_tokens = usage.get("prompt_tokens")
                    reply.usage.completion_tokens = usage.get("completion_tokens")
                cached = cached_tokens(event)
                if cached is not None:
                    reply.usage.cached_tokens = cached
                    if report is not None:  # the turn's report: what the prefix cache saved
                        report["cached_tokens"] = cached
                for choice in event.get("choices") or ():
                    if choice.get("finish_reason"):
                        finished = True
                        reply.finish_reason = choice["finish_reason"]
                    text = (choice.get("delta") or {}).get("content")
                    if text:
                        yield text
        except (GeneratorExit, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise describe_error(exc) from exc
        finally:
            if done:
                await _drain(lines)
            await response.close()
        if not finished:
            raise UpstreamError("The model's stream ended before the reply finished.", kind="cut")


async def _drain(lines) -> None:
    """Read the body's end after ``[DONE]`` (the chunked encoding's last chunk, usually in the
    same packet), so that the connection goes back to the pool: closed unread, it is dropped,
    and every reply paid a new connection (and, to a real server, a TLS handshake)."""
    with contextlib.suppress(Exception):
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in lines:
                pass


class OfflineProvider:
    """Answers with no model: a reply assembled from what the memory holds, clearly labelled."""

    offline = True

    async def stream(
        self,
        messages: Sequence[dict],
        *,
        model: str,
        report=None,
        max_tokens: int | None = None,
        server_fields: dict | None = None,
    ) -> ReplyStream:
        user_text = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        text = compose_offline_reply(user_text, report)
        reply = ReplyStream(model=OFFLINE_MODEL, offline=True)
        reply.chunks = self._pieces(text)
        return reply

    async def _pieces(self, text: str) -> AsyncGenerator[str, None]:
        for piece in split_for_streaming(text):
            await asyncio.sleep(OFFLINE_WORD_DELAY)
            yield piece


def get_provider() -> OpenAIProvider | OfflineProvider:
    return OpenAIProvider() if settings.OPENAI_API_KEY else OfflineProvider()
