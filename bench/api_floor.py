"""Benchmark: the floor under ``bench/api_ttft.py`` (issue 38): what the transport alone costs a
first token, HTTP with server-sent events against a websocket frame, with no app in it.

A bare ASGI application (this module's ``application``, served by daphne as the app is) answers
at once: a ``POST`` with the response's start, a role chunk and a content chunk (OpenAI's
shape), a websocket ``send`` frame with a ``chunk`` frame. The clients are ``bench/api_ttft.py``'s:
httpx streaming over a kept-alive connection, reading lines and parsing each ``data:`` event,
and the ``websockets`` library on one open socket. "/v1 new" sends one message, "/v1 continued"
a 40-message history, as ``api_ttft`` does by its last rounds. Alternating, the order reversed
every round. The difference between the two transports here is what ``api_ttft`` would show
for an app that did the same work on both paths.

    .venv/bin/python bench/api_floor.py [--rounds 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ROLE = b'data: {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}\n\n'
TOKEN = b'data: {"choices": [{"index": 0, "delta": {"content": "Hello"}}]}\n\n'


async def application(scope, receive, send):
    """Answers at once: HTTP with two events then [DONE], a websocket frame with a chunk."""
    if scope["type"] == "http":
        more = True
        while more:
            message = await receive()
            more = message.get("more_body", False)
        json.loads(message.get("body") or b"{}")  # the app parses its body too
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": ROLE, "more_body": True})
        await send({"type": "http.response.body", "body": TOKEN, "more_body": True})
        await send({"type": "http.response.body", "body": b"data: [DONE]\n\n"})
    elif scope["type"] == "websocket":
        while True:
            message = await receive()
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.accept"})
            elif message["type"] == "websocket.receive":
                frame = json.loads(message["text"])
                chunk = {"type": "chunk", "id": 1, "text": f"Hello {frame['text'][:5]}"}
                await send({"type": "websocket.send", "text": json.dumps(chunk)})
            else:
                return


async def measure(port: int, rounds: int) -> dict[str, list[float]]:
    import httpx
    from websockets.asyncio.client import connect

    times: dict[str, list[float]] = {"websocket": [], "v1 new": [], "v1 continued": []}
    history = []
    for n in range(20):
        history += [
            {"role": "user", "content": f"Continued {n}"},
            {"role": "assistant", "content": "A reply of some forty words. " * 8},
        ]
    base = f"http://127.0.0.1:{port}"
    async with (
        httpx.AsyncClient(base_url=base, timeout=30) as http,
        connect(f"ws://127.0.0.1:{port}/ws/") as socket,
    ):

        async def v1(messages) -> float:
            started = time.perf_counter()
            body = {"model": "m", "messages": messages, "stream": True}
            async with http.stream("POST", "/v1/chat/completions", json=body) as response:
                first = None
                async for line in response.aiter_lines():
                    if not line.startswith("data: ") or line == "data: [DONE]":
                        continue
                    delta = json.loads(line[6:])["choices"][0]["delta"]
                    if delta.get("content") and first is None:
                        first = time.perf_counter() - started
            assert first is not None
            return first

        async def ws(n: int) -> float:
            started = time.perf_counter()
            await socket.send(json.dumps({"type": "send", "text": f"Question {n}"}))
            json.loads(await socket.recv())
            return time.perf_counter() - started

        for n in range(rounds + 10):
            order = list(times) if n % 2 == 0 else list(reversed(times))
            for kind in order:
                if kind == "websocket":
                    value = await ws(n)
                elif kind == "v1 new":
                    value = await v1([{"role": "user", "content": f"New {n}"}])
                else:
                    value = await v1([*history, {"role": "user", "content": f"Next {n}"}])
                if n >= 10:  # warm-up
                    times[kind].append(value)
                await asyncio.sleep(0.01)
    return times


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from tests.support.live_server import free_port, spawn, stop_process, wait_for_port

    port = free_port()
    app = "bench.api_floor:application"
    server = spawn(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), app],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, server, 30, "daphne")
        times = asyncio.run(measure(port, args.rounds))
    finally:
        stop_process(server)
    print(f"## The transport's floor: first token, {args.rounds} rounds, no app\n")
    print("| path | p50 ms | p90 ms | mean ms |\n|---|---:|---:|---:|")
    for kind, values in times.items():
        values = sorted(v * 1000 for v in values)
        p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
        print(
            f"| {kind} | {statistics.median(values):.2f} | {p90:.2f} | "
            f"{statistics.fmean(values):.2f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
