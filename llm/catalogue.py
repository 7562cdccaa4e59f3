"""The models the chat server offers (``GET /v1/models``), for the conversation settings.

Cached (MODEL_LIST_CACHE_SECONDS) so a page render costs no request; a server that cannot
list its models (unreachable, no such endpoint) lists nothing for a minute and the settings
offer the configured default alone.
"""

from __future__ import annotations

import logging

import openai
from django.conf import settings
from django.core.cache import cache

from llm.clients import Endpoint, chat_endpoint

logger = logging.getLogger(__name__)

LIST_TIMEOUT = 3.0
FAILURE_CACHE_SECONDS = 60


def server_models() -> list[str]:
    """The ids the chat server lists, sorted; [] with no server or when it cannot say."""
    return sorted(model_listing())


def model_listing(endpoint: Endpoint | None = None) -> dict[str, int | None]:
    """What ``endpoint`` (the chat server's by default) lists: each model id with its
    context length where the server says it (vLLM's ``max_model_len``), else None."""
    endpoint = endpoint or chat_endpoint()
    if not endpoint.configured:
        return {}
    key = f"llm-models:{endpoint.base_url}"
    cached = cache.get(key)
    if cached is not None:
        return cached
    try:
        client = openai.OpenAI(
            api_key=endpoint.api_key,
            base_url=endpoint.base_url or None,
            timeout=LIST_TIMEOUT,
            max_retries=0,
        )
        models = {m.id: _context_length(m) for m in client.models.list() if m.id}
        cache.set(key, models, settings.MODEL_LIST_CACHE_SECONDS)
    except openai.OpenAIError as exc:
        logger.info("the model server did not list its models: %s", exc)
        models = {}
        cache.set(key, models, FAILURE_CACHE_SECONDS)
    return models


def _context_length(model) -> int | None:
    value = (getattr(model, "model_extra", None) or {}).get("max_model_len")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def model_choices(current: str = "") -> list[tuple[str, str]]:
    """Form choices: the configured default first (stored as ""), then the server's models,
    and the conversation's own model even when the server no longer lists it."""
    default = settings.OPENAI_MODEL
    choices = [("", f"{default} (default)")]
    names = [m for m in server_models() if m != default]
    if current and current != default and current not in names:
        names.append(current)
    return choices + [(name, name) for name in names]
