"""Deterministic chat text for the benchmarks: alternating user and assistant messages.

Messages are built from a pool of generated sentences (questions, explanations, Markdown list
items, short code blocks, numbers) whose token counts are known, so each message lands near a
target length drawn per message: users 20-120 tokens, assistants 40-300. The same ``seed``
gives the same messages on every machine and every run.
"""

from __future__ import annotations

import random
from collections.abc import Callable

TOPICS = (
    "retrieval augmented generation",
    "the context window",
    "vector embeddings",
    "fine-tuning",
    "prompt caching",
    "a sourdough starter",
    "the Django ORM",
    "websockets",
    "PostgreSQL indexes",
    "rate limiting",
    "unit tests",
    "a train trip from Lyon to Milan",
    "tomato blight",
    "compound interest",
    "the French subjunctive",
    "garbage collection in Python",
    "TLS certificates",
    "a marathon training plan",
    "Kubernetes readiness probes",
    "photosynthesis",
)
THINGS = (
    "the cache",
    "my laptop",
    "the staging server",
    "our API",
    "the second chapter",
    "the dataset",
    "this recipe",
    "the migration",
    "the dashboard",
    "the model",
    "a background job",
    "the invoice",
    "the garden",
    "the benchmark",
)
VERBS = (
    "breaks",
    "slows down",
    "returns nothing",
    "times out",
    "works fine",
    "uses too much memory",
    "gives a different answer",
    "keeps retrying",
    "crashes",
    "looks wrong",
)
ADJECTIVES = (
    "simple",
    "reliable",
    "surprisingly subtle",
    "cheap",
    "fast enough",
    "well documented",
    "fragile",
    "common",
    "easy to get wrong",
    "worth measuring",
)
ERRORS = (
    "a 429 Too Many Requests",
    "KeyError: 'content'",
    "a timeout after 30 seconds",
    "IntegrityError: UNIQUE constraint failed",
    "an empty response",
    "ConnectionResetError",
    "a 502 from the proxy",
)
CODE = (
    "for item in items:\n    total += item.cost",
    "SELECT id, created FROM chat_message WHERE conversation_id = %s ORDER BY id DESC LIMIT 50;",
    "curl -s http://127.0.0.1:8000/health | jq .status",
    "memory.add('user', text)\nreply = client.chat.completions.create(messages=memory.messages)",
    "const ws = new WebSocket(url);\nws.onmessage = (e) => render(JSON.parse(e.data));",
    "git bisect start HEAD v1.2.0",
)
OPENERS = ("Hi!", "Thanks.", "Quick question.", "Hmm.", "OK,", "Sorry,", "Also,", "Right.")
REPLY_OPENERS = (
    "Sure!",
    "Good question.",
    "Short answer: yes, with a caveat.",
    "Here is how I would approach it.",
    "That depends on a few things.",
    "You're close.",
)

USER_TEMPLATES = (
    "{opener} Can you explain how {topic} works when {thing} {verb}?",
    "I tried {topic} yesterday but got {error}. Any idea why?",
    "What if {thing} {verb} right after I change {topic}?",
    "Is {topic} {adjective}, or am I missing something?",
    "{opener} what would you change first about {thing}?",
    "It took {n} ms for {m} requests, is that normal for {topic}?",
    "My colleague says {topic} is {adjective}; I'm not convinced.",
    "Could you compare {topic} with {topic2} in two or three sentences?",
    "Here's what I ran:\n```\n{code}\n```\nand {thing} {verb}.",
    "Does the order matter if {thing} {verb} only on {weekday}s?",
)
ASSISTANT_TEMPLATES = (
    "{reply_opener} {Topic} is {adjective}: the key idea is that {thing} only changes when it "
    "has to.",
    "When {thing} {verb}, the usual cause is {error}, which means the limit was reached.",
    "- Check {thing} first; it {verb} in about {p}% of the cases I've seen.",
    "- Measure before and after: {n} ms over {m} runs is a reasonable baseline.",
    "- Keep {topic} separate from {topic2}, it makes failures easier to read.",
    "In practice {topic} is {adjective} as long as you keep {thing} small.",
    "A minimal example:\n```python\n{code}\n```",
    "Compared with {topic2}, {topic} trades memory for speed, roughly {p}% in your numbers.",
    "If {thing} still {verb}, look at the logs around {hour}:{minute:02d}; that is when the "
    "retries started.",
    "To sum up: {topic} is {adjective}, {topic2} is optional, and {thing} needs a test.",
    "One caveat: {error} can also come from {thing}, not only from {topic}.",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

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
