"""Client factories: every request to a model server is made by a client built here."""

from __future__ import annotations

import asyncio
import weakref

import httpx2
import openai
from django.conf import settings

CONNECT_TIMEOUT = 10.0


def _options() -> dict:
    return {
        "api_key": settings.OPENAI_API_KEY,
        "base_url": settings.OPENAI_BASE_URL or None,
        "timeout": httpx2.Timeout(settings.OPENAI_TIMEOUT, connect=CONNECT_TIMEOUT),
        "max_retries": settings.OPENAI_MAX_RETRIES,
    }


def sync_client() -> openai.OpenAI:
    """For background jobs (summaries, embeddings): a new client, closed with the job."""
    return openai.OpenAI(**_options())


# One async client per event loop: httpx connection pools must not cross loops.
_async_clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def async_client() -> openai.AsyncOpenAI:
    """For streamed replies: one client per event loop, rebuilt when the settings change."""
    loop = asyncio.get_running_loop()
    options = _options()
    key = (options["api_key"], options["base_url"], settings.OPENAI_TIMEOUT, options["max_retries"])
    cached = _async_clients.get(loop)
    if cached is None or cached[0] != key:
        cached = (key, openai.AsyncOpenAI(**options))
        _async_clients[loop] = cached
    return cached[1]
