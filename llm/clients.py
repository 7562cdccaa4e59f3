"""Client factories: every request to a model server is made by a client built here.

Three endpoints, each with its own settings that default to the chat's: the chat
(``OPENAI_*``), summaries (``SUMMARY_*``) and embeddings (``EMBEDDING_*``). A summary server or
an embeddings server beside the chat server needs no proxy.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass

import httpx2
import openai
from django.conf import settings

CONNECT_TIMEOUT = 10.0


@dataclass(frozen=True)
class Endpoint:
    api_key: str
    base_url: str

    @property
    def configured(self) -> bool:
        return bool(self.api_key)


def chat_endpoint() -> Endpoint:
    return Endpoint(settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL)


def summary_endpoint() -> Endpoint:
    return Endpoint(
        settings.SUMMARY_API_KEY or settings.OPENAI_API_KEY,
        settings.SUMMARY_BASE_URL or settings.OPENAI_BASE_URL,
    )


def embedding_endpoint() -> Endpoint:
    return Endpoint(
        settings.EMBEDDING_API_KEY or settings.OPENAI_API_KEY,
        settings.EMBEDDING_BASE_URL or settings.OPENAI_BASE_URL,
    )


def summary_model(conversation_model: str) -> str:
    """The model summaries are asked of: SUMMARY_MODEL, else the conversation's."""
    return settings.SUMMARY_MODEL or conversation_model


def _options(endpoint: Endpoint, timeout: float | None = None) -> dict:
    return {
        "api_key": endpoint.api_key,
        "base_url": endpoint.base_url or None,
        "timeout": httpx2.Timeout(timeout or settings.OPENAI_TIMEOUT, connect=CONNECT_TIMEOUT),
        "max_retries": settings.OPENAI_MAX_RETRIES,
    }


def sync_client(endpoint: Endpoint | None = None, *, timeout: float | None = None) -> openai.OpenAI:
    """For background jobs and other blocking calls: a new client for ``endpoint`` (the chat
    server's by default), with ``timeout`` (the chat's, OPENAI_TIMEOUT, by default)."""
    return openai.OpenAI(**_options(endpoint or chat_endpoint(), timeout))


def summary_client() -> openai.OpenAI:
    """Summary and extraction requests: BACKGROUND_TIMEOUT, not the chat's timeout, since a
    slow local server takes minutes for a structured answer that nobody is waiting on."""
    return sync_client(summary_endpoint(), timeout=settings.BACKGROUND_TIMEOUT)


def embedding_client(*, background: bool = False) -> openai.OpenAI:
    """A turn's query waits the chat's timeout; the backfill (``background``) waits
    BACKGROUND_TIMEOUT, since a slow local server takes minutes for a batch of long texts."""
    timeout = settings.BACKGROUND_TIMEOUT if background else None
    return sync_client(embedding_endpoint(), timeout=timeout)


# One async client per event loop: httpx connection pools must not cross loops.
_async_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def async_client() -> openai.AsyncOpenAI:
    """For streamed replies: one client per event loop, rebuilt when the settings change."""
    loop = asyncio.get_running_loop()
    options = _options(chat_endpoint())
    key = (options["api_key"], options["base_url"], settings.OPENAI_TIMEOUT, options["max_retries"])
    cached = _async_clients.get(loop)
    if cached is None or cached[0] != key:
        cached = (key, openai.AsyncOpenAI(**options))
        _async_clients[loop] = cached
    return cached[1]


def max_tokens_field(cap: int) -> dict:
    """The request field that caps an answer's length (OPENAI_MAX_TOKENS_FIELD)."""
    return {settings.OPENAI_MAX_TOKENS_FIELD: cap}
