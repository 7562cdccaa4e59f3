"""Which of a llama.cpp server's slots a request goes to: its ``id_slot`` field.

A llama.cpp server keeps one prompt cache per slot (``--parallel N``) and gives a request an
idle slot: the one sharing the longest prefix with it, else the least recently used. A summary
or a title request could land on the slot that held the conversation, and the next turn
re-read its whole prompt. So, when the chat
and the background requests (summaries, extraction, titles) share a server of two slots or
more:

- background requests go to the last ``BACKGROUND_MODEL_CONCURRENCY`` slots (never all of
  them), one for each background lease (``llm.slots``);
- a conversation's turns go to one of the others, chosen by its id: the same slot every turn.
  Two conversations on the same slot wait for each other (llama.cpp defers a request for a
  busy slot) where they could have used an idle one; on a local server that is the price of
  a prefix that stays cached.

The slot count is llama.cpp's ``total_slots`` in ``GET /props`` (beside ``/v1``), cached as
the context size is (``llm.limits``). A server that does not state it (OpenAI, vLLM, Ollama)
gets no ``id_slot`` field: OpenAI's API refuses a field it does not know.
"""

from __future__ import annotations

import logging
import re

import httpx2
from django.conf import settings
from django.core.cache import cache

from llm.clients import Endpoint, chat_endpoint, summary_endpoint

logger = logging.getLogger(__name__)

PROBE_TIMEOUT = 3.0
FAILURE_CACHE_SECONDS = 60


def chat_fields(conversation_id: int) -> dict:
    """The request fields that keep a conversation's turns on one slot ({} when none apply)."""
    chat, background = _split()
    return {"id_slot": conversation_id % chat} if background else {}


def background_fields(lease: int) -> dict:
    """The request fields that send background lease ``lease`` (``llm.slots``) to a slot of
    its own, never a conversation's ({} when none apply)."""
    chat, background = _split()
    return {"id_slot": chat + lease % background} if background else {}


def _split() -> tuple[int, int]:
    """(slots for conversations, slots for background work) on the chat's server; (n, 0) when
    background requests go elsewhere or the server has one slot or does not say."""
    endpoint = chat_endpoint()
    if summary_endpoint().base_url != endpoint.base_url:
        return 0, 0  # a summary server of its own: nothing to keep apart
    total = slot_count(endpoint)
    if total < 2:
        return total, 0
    background = min(settings.BACKGROUND_MODEL_CONCURRENCY, total - 1)
    return total - background, background


def is_llama_cpp(endpoint: Endpoint) -> bool:
    """A server that states its slots is llama.cpp's (it also enforces a JSON schema's
    maxLength and maxItems with a grammar: ``memory.summariser.BOUNDED_SCHEMA``)."""
    return slot_count(endpoint) > 0


def slot_count(endpoint: Endpoint) -> int:
    """How many slots ``endpoint``'s server states (llama.cpp's ``total_slots``), 0 if none."""
    if not endpoint.configured or not endpoint.base_url:  # OpenAI's API has no /props
        return 0
    key = f"llm-slots:{endpoint.base_url}"
    try:
        cached = cache.get(key)
    except Exception:  # the cache is away: no pinning this time, the request goes on
        logger.warning("the cache is unavailable for the server's slot count", exc_info=True)
        return 0
    if cached is None:
        cached, reached = _ask_server(endpoint)
        timeout = settings.MODEL_LIST_CACHE_SECONDS if reached else FAILURE_CACHE_SECONDS
        try:
            cache.set(key, cached, timeout)
        except Exception:  # the cache went away since the read: asked again next time
            logger.warning("the server's slot count could not be cached", exc_info=True)
    return cached


def _ask_server(endpoint: Endpoint) -> tuple[int, bool]:
    """(the slot count in ``/props``, 0 if none; whether the server could be asked at all)."""
    root = re.sub(r"/v1/?$", "", endpoint.base_url.rstrip("/"))
    headers = {"Authorization": f"Bearer {endpoint.api_key}"}
    try:
        with httpx2.Client(timeout=PROBE_TIMEOUT, headers=headers) as client:
            response = client.get(f"{root}/props")
        data = response.json() if response.status_code == 200 else {}
    except httpx2.HTTPError as exc:
        logger.info("the model server did not say its slots: %s", exc)
        return 0, False
    except ValueError:  # not JSON: not llama.cpp
        return 0, True
    total = data.get("total_slots") if isinstance(data, dict) else None
    if isinstance(total, int) and not isinstance(total, bool) and total > 0:
        return total, True
    return 0, True
