"""Deterministic chat text for the benchmarks: alternating user and assistant messages.

Messages are built from a pool of generated sentences (questions, explanations, Markdown list
items, short code blocks, numbers) whose token counts are known, so each message lands near a
target length drawn per message: users 20-120 tokens, assistants 40-300. The same ``seed``
gives the same messages on every machine and every run.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from bench.data import load_json

_TABLES = load_json("corpus.json")  # word lists and templates: bench/data/corpus.json
TOPICS = _TABLES["topics"]
THINGS = _TABLES["things"]
VERBS = _TABLES["verbs"]
ADJECTIVES = _TABLES["adjectives"]
ERRORS = _TABLES["errors"]
CODE = _TABLES["code"]
OPENERS = _TABLES["openers"]
REPLY_OPENERS = _TABLES["reply_openers"]
WEEKDAYS = _TABLES["weekdays"]
USER_TEMPLATES = _TABLES["user_templates"]
ASSISTANT_TEMPLATES = _TABLES["assistant_templates"]

USER_TOKENS = (20, 120)
ASSISTANT_TOKENS = (40, 300)


def _fill(template: str, rng: random.Random) -> str:
    topic = rng.choice(TOPICS)
    return template.format(
        opener=rng.choice(OPENERS),
        reply_opener=rng.choice(REPLY_OPENERS),
        topic=topic,
        Topic=topic[0].upper() + topic[1:],
        topic2=rng.choice([t for t in TOPICS if t != topic]),
        thing=rng.choice(THINGS),
        verb=rng.choice(VERBS),
        adjective=rng.choice(ADJECTIVES),
        error=rng.choice(ERRORS),
        code=rng.choice(CODE),
        weekday=rng.choice(WEEKDAYS),
        n=rng.randint(3, 4000),
        m=rng.randint(10, 100_000),
        p=rng.randint(1, 99),
        hour=rng.randint(0, 23),
        minute=rng.randint(0, 59),
    )


def _pool(templates: tuple[str, ...], size: int, rng: random.Random, count) -> list:
    sentences = [_fill(rng.choice(templates), rng) for _ in range(size)]
    return [(s, count(s)) for s in sentences]


def chat_messages(
    n: int, count_tokens: Callable[[str], int], *, seed: int = 20240601
) -> list[tuple[str, str]]:
    """``n`` (role, content) pairs, user first, alternating with assistant.

    ``count_tokens`` sizes the sentence pool (it is called a few thousand times, not per
    message); message lengths are then within a few tokens of their drawn target.
    """
    rng = random.Random(seed)
    user_pool = _pool(USER_TEMPLATES, 1500, rng, count_tokens)
    assistant_pool = _pool(ASSISTANT_TEMPLATES, 3000, rng, count_tokens)
    messages: list[tuple[str, str]] = []
    for i in range(n):
        if i % 2 == 0:
            role, pool, (low, high) = "user", user_pool, USER_TOKENS
        else:
            role, pool, (low, high) = "assistant", assistant_pool, ASSISTANT_TOKENS
        target = rng.randint(low, high)
        parts: list[str] = []
        size = 0
        while size < target:
            sentence, tokens = rng.choice(pool)
            if parts and size + tokens > high:
                break
            parts.append(sentence)
            size += tokens + 1
        sep = "\n" if role == "assistant" else " "
        messages.append((role, sep.join(parts)))
    return messages
