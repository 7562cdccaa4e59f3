"""Benchmark: the first token through ``/v1/chat/completions`` (streamed) against the web
chat's websocket, on one server in one run (the machine's load falls on both alike).

One daphne (``DEBUG`` off, SQLite), one fake upstream (``bench/upstream.py``: 40 words, one
per event, 5 ms apart), one user with a key. Turns alternate, the order swapped every round:

* websocket new: a ``send`` frame on an open tab of a new conversation to its first ``chunk``;
* websocket continued: the same on one tab whose conversation grows a turn a round;
* /v1 new: a one-message request (a new conversation made by the request) to its first
  content delta, over a kept-alive connection;
* /v1 continued: the whole history of an earlier /v1 conversation (matched to continue it)
  plus a new message, to its first content delta.

Each turn waits for its reply's end and 0.3 s more, so the after-turn work of one is done.
The target (issue 38): /v1 adds no more to the first token than the websocket path does.

    .venv/bin/python bench/api_ttft.py [--rounds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from bench.harness import AppServer, Upstream, bench_env, django_run, sqlite_url  # noqa: E402
from tests.support.live_server import create_user, manage  # noqa: E402
from tests.support.ws_client import ChatSocket, login_cookie, new_conversation  # noqa: E402

PASSWORD = "bench-password-1"  # noqa: S105 (a throwaway user of a temporary database)
MAKE_KEY = """
from django.contrib.auth import get_user_model
from profiles.keys import key_create
result = key_create(user=get_user_model().objects.get(username="bench"), name="bench").secret
"""


async def ws_turn(tab: ChatSocket, n: int) -> float:
    started = time.perf_counter()
    await tab.send({"type": "send", "text": f"Question {n} over the socket"})
    first = None
    while True:
        frame = await tab.receive(30)
        if frame["type"] == "chunk" and first is None:
            first = time.perf_counter() - started
        if frame["type"] == "reply_end":
            return first


async def ws_new_turn(base: str, session: str, n: int) -> float:
    conversation = await asyncio.to_thread(new_conversation, base, session)
    async with ChatSocket(base, session, conversation) as tab:
        return await ws_turn(tab, n)


async def v1_turn(http: httpx.AsyncClient, messages: list[dict]) -> tuple[float, str]:
    body = {"model": "gpt-4o", "messages": messages, "stream": True}
    started, first, text = time.perf_counter(), None, []
    async with http.stream("POST", "/v1/chat/completions", json=body) as response:
        assert response.status_code == 200, await response.aread()
        async for line in response.aiter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            delta = json.loads(line[6:])["choices"]
            content = delta[0]["delta"].get("content") if delta else None
            if content and first is None:
                first = time.perf_counter() - started
            text.append(content or "")
    return first, "".join(text)


async def measure(base: str, session: str, secret: str, rounds: int) -> dict[str, list[float]]:
    times = {"websocket new": [], "v1 new": [], "websocket continued": [], "v1 continued": []}
    headers = {"Authorization": f"Bearer {secret}"}
    conversation = await asyncio.to_thread(new_conversation, base, session)
    async with (
        httpx.AsyncClient(base_url=base, headers=headers, timeout=60) as http,
        ChatSocket(base, session, conversation) as tab,
    ):
        history: list[dict] = []
        for n in range(rounds):
            order = list(times)
            if n % 2:
                order.reverse()
            for kind in order:
                if kind == "websocket new":
                    times[kind].append(await ws_new_turn(base, session, n))
                elif kind == "websocket continued":
                    times[kind].append(await ws_turn(tab, n))
                elif kind == "v1 new":
                    first, _ = await v1_turn(http, [{"role": "user", "content": f"New {n}"}])
                    times[kind].append(first)
                else:
                    history.append({"role": "user", "content": f"Continued {n}"})
                    first, text = await v1_turn(http, history)
                    history.append({"role": "assistant", "content": text})
                    times[kind].append(first)
                await asyncio.sleep(0.3)
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, Upstream(interval=0.005, words=40) as upstream:
        env = bench_env(
            database_url=sqlite_url(Path(tmp)),
            upstream_url=upstream.base_url,
            STATIC_ROOT=str(Path(tmp) / "static"),
            SECURE_SSL_REDIRECT="false",
            SESSION_COOKIE_SECURE="false",
            CSRF_COOKIE_SECURE="false",
            SECURE_HSTS_SECONDS="0",
            OPENAI_MAX_RETRIES="0",
            MESSAGES_PER_MINUTE="1000",  # the turns come faster than a person's
        )
        manage("migrate", "--noinput", env=env)
        manage("collectstatic", "--noinput", "-v0", env=env)
        create_user(env, "bench", PASSWORD)
        secret = django_run(MAKE_KEY, env=env)
        with AppServer(env) as server:
            session = login_cookie(server.url, "bench", PASSWORD)
            asyncio.run(measure(server.url, session, secret, 2))  # warm-up
            times = asyncio.run(measure(server.url, session, secret, args.rounds))
    print(f"## /v1 against the websocket: first token, {args.rounds} rounds\n")
    print("| path | p50 ms | p90 ms | mean ms |\n|---|---|---|---|")
    for kind, values in times.items():
        values = sorted(v * 1000 for v in values)
        p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
        print(
            f"| {kind} | {statistics.median(values):.1f} | {p90:.1f} | "
            f"{statistics.fmean(values):.1f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
