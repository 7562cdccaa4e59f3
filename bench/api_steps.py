"""Benchmark: where a streamed ``/v1/chat/completions`` request's time goes before its first
token, step by step, in one process (issue 38). The real ASGI application (``config.asgi``,
``DEBUG`` off, a temporary SQLite database) is called directly with an HTTP scope, against
the fake upstream (``bench/upstream.py``, its own process: 40 words, 5 ms apart), so the
figures hold no client, socket or server loop. Each step's wall time is its start and end
after the request's first byte; the sync steps also give their thread's CPU time.

"new" is a one-message request; "continued" sends the whole history of a /v1 conversation
(20 turns) plus a new message. Runs from a checkout's root, so two trees compare:

    cd DIR && .venv/bin/python bench/api_steps.py [--requests 30]
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import statistics
import sys
import time
from collections import defaultdict

PASSWORD = "bench-password-1"  # noqa: S105 (a throwaway user of a temporary database)
STEPS: dict[str, list[tuple[float, float, float]]] = defaultdict(list)  # name: (start, end, cpu)
T0 = [0.0]


def timed_sync(name, fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            end = time.perf_counter()
            STEPS[name].append((start - T0[0], end - T0[0], time.thread_time() - cpu))

    return wrapper


def timed_async(name, fn):
    @functools.wraps(fn)
    async def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return await fn(*args, **kwargs)
        finally:
            STEPS[name].append((start - T0[0], time.perf_counter() - T0[0], 0.0))

    return wrapper


def setup_django(upstream_url: str) -> None:
    sys.path.insert(0, os.getcwd())
    from bench.scratch import scratch_django

    scratch_django(
        DEBUG="false",
        SECURE_SSL_REDIRECT="false",
        SECURE_HSTS_SECONDS="0",
        OPENAI_API_KEY="bench-key",
        OPENAI_BASE_URL=upstream_url,
        OPENAI_MAX_RETRIES="0",
        MESSAGES_PER_MINUTE="10000",
    )


def instrument() -> None:
    """Timers around each step /v1 takes that a tab's turn does not, and the shared set-up."""
    import api.conversations as conversations
    import api.views as views
    import chat.live as live
    import chat.turn.drive as drive

    views.key_owner = timed_sync("key lookup", views.key_owner)
    conversations.conversation_matching = timed_sync(
        "history match", conversations.conversation_matching
    )
    conversations.conversation_create = timed_sync(
        "new conversation row", conversations.conversation_create
    )
    conversations.message_create_many = timed_sync(
        "history rows", conversations.message_create_many
    )
    drive.prepare_turn = timed_sync("turn set-up (as a tab's)", drive.prepare_turn)
    live.enter = timed_async("room entered", live.enter)


async def request(app, body: bytes, secret: str) -> dict[str, float]:
    """One request through the ASGI app; the times of its response's start, first body and
    first content delta, after its first byte."""
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/chat/completions",
        "raw_path": b"/v1/chat/completions",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"localhost"),
            (b"authorization", f"Bearer {secret}".encode()),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 5000),
        "server": ("localhost", 80),
    }
    sent = [False]
    done = asyncio.Event()
    marks: dict[str, float] = {}
    chunks: list[bytes] = []

    async def receive():
        if not sent[0]:
            sent[0] = True
            return {"type": "http.request", "body": body, "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message):
        now = time.perf_counter() - T0[0]
        if message["type"] == "http.response.start":
            marks["response start"] = now
            assert message["status"] == 200, message
        elif message["type"] == "http.response.body":
            data = message.get("body", b"")
            chunks.append(data)
            marks.setdefault("first body", now)
            if b'"content": "' in data or b'"content":"' in data:
                text = data.replace(b" ", b"")
                if b'"content":""' not in text:
                    marks.setdefault("first token", now)
            if not message.get("more_body"):
                done.set()

    T0[0] = time.perf_counter()
    cpu = time.process_time()
    await app(scope, receive, send)
    marks["cpu to end"] = time.process_time() - cpu
    marks["text"] = b"".join(chunks).decode()
    return marks


def reply_text(sse: str) -> str:
    parts = []
    for line in sse.splitlines():
        if line.startswith("data: {"):
            choices = json.loads(line[6:]).get("choices") or []
            if choices:
                parts.append(choices[0]["delta"].get("content") or "")
    return "".join(parts)


async def measure(secret: str, requests: int) -> dict[str, dict[str, list[float]]]:
    from chat import live
    from config.asgi import application

    results: dict[str, dict[str, list[float]]] = {"new": defaultdict(list), "continued": {}}
    results["continued"] = defaultdict(list)
    history: list[dict] = []
    for n in range(requests):
        for kind in ("new", "continued") if n % 2 == 0 else ("continued", "new"):
            if kind == "new":
                messages = [{"role": "user", "content": f"New {n}"}]
            else:
                history.append({"role": "user", "content": f"Continued {n}"})
                messages = history
            body = json.dumps({"model": "gpt-4o", "messages": messages, "stream": True}).encode()
            STEPS.clear()
            marks = await request(application, body, secret)
            if kind == "continued":
                history.append({"role": "assistant", "content": reply_text(marks["text"])})
            await live.settle()
            await asyncio.sleep(0.3)
            if n < 3:  # warm-up
                continue
            for name, value in marks.items():
                if name != "text":
                    results[kind][name].append(value)
            for name, spans in STEPS.items():
                start, end, cpu = spans[0]
                results[kind][f"{name}: start"].append(start)
                results[kind][f"{name}: end"].append(end)
                results[kind][f"{name}: CPU"].append(cpu)
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=30)
    args = parser.parse_args(argv)
    sys.path.insert(0, os.getcwd())
    from bench.harness import Upstream

    with Upstream(interval=0.005, words=40) as upstream:
        setup_django(upstream.base_url)
        from django.contrib.auth import get_user_model

        from profiles.keys import key_create

        user = get_user_model().objects.create_user("bench", password=PASSWORD)
        secret = key_create(user=user, name="bench").secret
        instrument()
        results = asyncio.run(measure(secret, args.requests + 3))
    print(f"## /v1 first token in process, steps (ms after the request, p50), {os.getcwd()}\n")
    names = sorted({name for kind in results.values() for name in kind})
    print("| step | new | continued |\n|---|---:|---:|")
    order = sorted(names, key=lambda name: statistics.median(results["continued"].get(name, [0])))
    for name in order:
        row = [name]
        for kind in ("new", "continued"):
            values = results[kind].get(name)
            row.append(f"{statistics.median(values) * 1000:.2f}" if values else "-")
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
