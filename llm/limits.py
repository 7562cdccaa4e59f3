"""How many tokens a model server takes, learned from the server and cached.

A request larger than the server's context is refused (llama.cpp, vLLM: HTTP 400) or silently
cut (Ollama), and ``CONTEXT_BUDGET`` (16,000 by default) says nothing about a 4,096-token
server. So the context size is asked of the server, where it says it:

- vLLM: ``GET /v1/models`` lists each model's ``max_model_len`` (``llm.catalogue``);
- llama.cpp: ``GET /props`` (beside ``/v1``) has ``default_generation_settings.n_ctx``, a
  slot's context;
- Ollama: ``POST /api/show`` has ``num_ctx`` in the model's parameters when set; otherwise
  Ollama runs it at its default (``OLLAMA_DEFAULT_CONTEXT``), not the model's full length;
- otherwise ``MODEL_CONTEXT_TOKENS`` (0: not known, no limit but the conversation's budget).

The answer is cached per server and model (``MODEL_LIST_CACHE_SECONDS``; a server that could
not be reached is asked again after a minute). A server that counts tokens for us (llama.cpp's
``POST /tokenize``, vLLM's) is also asked, at the same probe, to count ``CALIBRATION_TEXT``:
its count over ours is the first ``token_scale``, known before the first request (Ollama has
no such endpoint: its replies' usage teaches the scale). A refusal for length teaches more
(``learn_overflow``): the server's own figures where it gives them (llama.cpp's ``n_ctx`` and
``n_prompt_tokens``), else a limit below the request that failed, so the same request is never
sent again; and ``token_scale`` keeps how many of the server's tokens one of our estimated
tokens is (its tokenizer is not tiktoken), so later requests are sized in its tokens.
"""

from __future__ import annotations

import logging
import re
from typing import NamedTuple

import httpx2
from django.conf import settings
from django.core.cache import cache

from contextwindow.tokens import count_tokens
from llm.catalogue import model_listing
from llm.clients import Endpoint

logger = logging.getLogger(__name__)

PROBE_TIMEOUT = 3.0
FAILURE_CACHE_SECONDS = 60
OLLAMA_DEFAULT_CONTEXT = 4096
OVERFLOW_SHARE = 0.9  # a refused request's estimate, times this, is the limit learned
MAX_SCALE = 3.0
_OVERFLOW = re.compile(
    r"exceed_context_size|context[ _](?:length|window|size)|maximum context|too many tokens|"
    r"prompt is too long|longer than the model",
    re.IGNORECASE,
)
_MAXIMUM = re.compile(r"maximum context length is (\d+)", re.IGNORECASE)
# What the probe asks the server to count: text like a chat's (prose, a little code, numbers,
# dates, a URL, punctuation, accented words and a currency sign), a few hundred tokens.
CALIBRATION_TEXT = """\
Hi! My sister Ana and I are planning five days in Lisbon in May. We'd like to stay \
somewhere walkable; the budget is about 1,200 euros (roughly $1,300), flights not included. \
I'm vegetarian, we prefer trains to planes, and Ana wants to see Sintra, the Belém tower \
and a fado show in Alfama. We land on 2026-05-14 at 09:45 - is that too early to check in?

Day 1: Alfama and the castle. Day 2: Belém, with pastéis de nata at the café by the \
monastery. Day 3: Sintra by train from Rossio (40 minutes, about €2.40 each way).

Here is a small script to split the costs:

```python
def split(costs: dict[str, float], people: int = 2) -> dict[str, float]:
    \"\"\"Each person's share, rounded to cents.\"\"\"
    return {item: round(price / people, 2) for item, price in costs.items()}

print(split({"hotel": 540.0, "trains": 38.5, "food": 210}))
```

To do: read the hotel's cancellation policy (48 h?), renew my passport by Friday, and book \
the tickets at https://example.org/tickets?day=3&seats=2 - "the earlier, the cheaper".
"""


def _key(kind: str, endpoint: Endpoint, model: str) -> str:
    return f"llm-{kind}:{endpoint.base_url}:{model}"


class ServerSize(NamedTuple):
    """What a server takes: its context in its own tokens (None when not known) and how many
    of its tokens one of our estimated tokens is (1.0 until learned)."""

    context: int | None
    scale: float

    def budget(self, budget: int) -> int:
        """``budget``, never more than the server takes."""
        return min(budget, self.context) if self.context else budget


def server_size(endpoint: Endpoint, model: str) -> ServerSize:
    """The server's context size and token scale for ``model``: one cache round trip, and on a
    miss the probe (``_ask_server``), which may learn the scale too."""
    if not endpoint.configured:
        return ServerSize(None, 1.0)
    keys = [_key(kind, endpoint, model) for kind in ("context", "learned", "scale")]
    try:
        found = cache.get_many(keys)  # one round trip a turn
    except Exception:  # the cache is away: the setting alone, the turn goes on
        logger.warning("the cache is unavailable for the server's context size", exc_info=True)
        found = {keys[0]: 0}
    cached, learned, scale = (found.get(key) for key in keys)
    if cached is None:
        cached, reached = _ask_server(endpoint, model)
        timeout = settings.MODEL_LIST_CACHE_SECONDS if reached else FAILURE_CACHE_SECONDS
        cache.set(keys[0], cached, timeout)
        scale = cache.get(keys[2])  # the probe's count, when the server could count
    known = [n for n in (cached or settings.MODEL_CONTEXT_TOKENS, learned) if n]
    return ServerSize(min(known) if known else None, scale or 1.0)


def context_tokens(endpoint: Endpoint, model: str) -> int | None:
    """The server's context size for ``model`` in its own tokens, or None when not known."""
    return server_size(endpoint, model).context


def token_scale(endpoint: Endpoint, model: str) -> float:
    """The server's tokens per estimated token, as seen (1.0 until the server counted more)."""
    if not endpoint.configured:
        return 1.0
    return cache.get(_key("scale", endpoint, model)) or 1.0


def chat_budget(budget: int, endpoint: Endpoint, model: str) -> int:
    """The conversation's budget, never more than the server takes."""
    return server_size(endpoint, model).budget(budget)


def learn_scale(endpoint: Endpoint, model: str, *, estimated: int, reported: int | None) -> None:
    """Keep the largest ratio of the server's prompt tokens to our estimate (bounded)."""
    if not endpoint.configured or not reported or estimated <= 0:
        return
    ratio = min(reported / estimated, MAX_SCALE)
    key = _key("scale", endpoint, model)
    if ratio > (cache.get(key) or 1.0):
        cache.set(key, round(ratio, 3), None)


def overflow(exc: BaseException) -> bool:
    """True when the server refused the request for its length."""
    status = getattr(exc, "status_code", None)
    if status not in (400, 413, 422, 500):
        return False
    body = getattr(exc, "body", None)
    return bool(_OVERFLOW.search(f"{body} {exc}"))


def learn_overflow(
    endpoint: Endpoint, model: str, exc: BaseException, *, estimated: int, answer_cap: int = 0
) -> int:
    """After a refusal for length of a prompt of ``estimated`` tokens (our count) asking for an
    answer of up to ``answer_cap``: the limit learned (cached) and the scale the server's
    figures show; returns the new limit: the server's own figure, else below what was sent."""
    error = _error_body(exc)
    n_ctx = _int(error.get("n_ctx"))
    match = _MAXIMUM.search(str(error.get("message") or exc))
    n_ctx = n_ctx or (int(match.group(1)) if match else None)
    learn_scale(endpoint, model, estimated=estimated, reported=_int(error.get("n_prompt_tokens")))
    sent = int(estimated * token_scale(endpoint, model)) + answer_cap
    limit = n_ctx if n_ctx else int(sent * OVERFLOW_SHARE)
    key = _key("learned", endpoint, model)
    earlier = cache.get(key)
    limit = max(min(limit, earlier or limit), 1)
    cache.set(key, limit, settings.MODEL_LIST_CACHE_SECONDS)
    logger.warning("%s refused %s tokens: limit now %s", endpoint.base_url, sent, limit)
    return limit


def _error_body(exc: BaseException) -> dict:
    body = getattr(exc, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return body["error"]
    return body if isinstance(body, dict) else {}


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


# -- asking the server -------------------------------------------------------------------------


def _ask_server(endpoint: Endpoint, model: str) -> tuple[int, bool]:
    """(the context size the server states, 0 if none; whether it could be asked at all).
    Where it states it as llama.cpp or vLLM does, it also counts CALIBRATION_TEXT."""
    try:
        listed = model_listing(endpoint).get(model)
        if not endpoint.base_url:  # OpenAI's API: no such endpoints
            return listed or 0, True
        root = re.sub(r"/v1/?$", "", endpoint.base_url.rstrip("/"))
        headers = {"Authorization": f"Bearer {endpoint.api_key}"}
        with httpx2.Client(timeout=PROBE_TIMEOUT, headers=headers) as client:
            if listed:  # vLLM's max_model_len; its /tokenize takes a completion's prompt
                body = {"model": model, "prompt": CALIBRATION_TEXT, "add_special_tokens": False}
                _calibrate(client, f"{root}/tokenize", body, endpoint, model)
                return listed, True
            n_ctx = _llama_cpp(client, root)
            if n_ctx:  # BOS and the like are not added unless asked (add_special)
                _calibrate(
                    client, f"{root}/tokenize", {"content": CALIBRATION_TEXT}, endpoint, model
                )
                return n_ctx, True
            return _ollama(client, root, model), True
    except (httpx2.HTTPError, ValueError) as exc:
        logger.info("the model server did not say its context size: %s", exc)
        return 0, False


def _calibrate(client: httpx2.Client, url: str, body: dict, endpoint: Endpoint, model: str) -> None:
    """The server's count of CALIBRATION_TEXT over ours (the count the context build makes),
    kept by ``learn_scale``. A server that cannot count (no such endpoint, an error) leaves the
    scale to its replies: the probe's answer stands without it."""
    try:
        response = client.post(url, json=body)
        data = response.json() if response.status_code == 200 else None
    except (httpx2.HTTPError, ValueError) as exc:
        logger.info("the model server did not count the calibration text: %s", exc)
        return
    tokens = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(tokens, list):
        return
    estimated = count_tokens(CALIBRATION_TEXT, model)
    learn_scale(endpoint, model, estimated=estimated, reported=len(tokens))


def _llama_cpp(client: httpx2.Client, root: str) -> int:
    response = client.get(f"{root}/props")
    if response.status_code != 200:
        return 0
    data = response.json()
    settings_ = data.get("default_generation_settings") if isinstance(data, dict) else None
    return _int((settings_ or {}).get("n_ctx")) or 0


def _ollama(client: httpx2.Client, root: str, model: str) -> int:
    response = client.post(f"{root}/api/show", json={"model": model})
    if response.status_code != 200:
        return 0
    data = response.json()
    if not isinstance(data, dict):
        return 0
    match = re.search(r"^\s*num_ctx\s+(\d+)", str(data.get("parameters") or ""), re.MULTILINE)
    if match:
        return int(match.group(1))
    info = data.get("model_info")
    if not isinstance(info, dict):
        info = {}
    lengths = [_int(v) for k, v in info.items() if k.endswith(".context_length")]
    full = next((n for n in lengths if n), 0)
    default = settings.MODEL_CONTEXT_TOKENS or OLLAMA_DEFAULT_CONTEXT
    return min(full, default) if full else 0
