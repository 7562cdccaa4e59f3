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

from llm.clients import chat_endpoint

logger = logging.getLogger(__name__)

LIST_TIMEOUT = 3.0
FAILURE_CACHE_SECONDS = 60


def server_models() -> list[str]:
    """The ids the chat server lists, sorted; [] with no server or when it cannot say."""
    endpoint = chat_endpoint()
    if not endpoint.configured:
        return []
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
        models = sorted({model.id for model in client.models.list() if model.id})
        cache.set(key, models, settings.MODEL_LIST_CACHE_SECONDS)
    except openai.OpenAIError as exc:
        logger.info("the model server did not list its models: %s", exc)
        models = []
        cache.set(key, models, FAILURE_CACHE_SECONDS)
    return models


def model_choices(current: str = "") -> list[tuple[str, str]]:
    """Form choices: the configured default first (stored as ""), then the server's models,
    and the conversation's own model even when the server no longer lists it."""
    default = settings.OPENAI_MODEL
    choices = [("", f"{default} (default)")]
    names = [m for m in server_models() if m != default]
    if current and current != default and current not in names:
        names.append(current)
    return choices + [(name, name) for name in names]
