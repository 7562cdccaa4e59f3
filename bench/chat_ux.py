"""Benchmark: the chat page's load time and a turn's first-token latency, this checkout beside
an earlier one, in one run (the machine's load falls on both alike).

Each checkout gets its own temporary SQLite database, static files and daphne (``DEBUG`` off),
seeded as ``bench/chat_page.py`` seeds it (a 50-message conversation of Markdown replies with
lists, tables and code) plus an empty conversation for the turns. Both talk to one fake
upstream (``bench/upstream.py``: 40 words, one per event, 5 ms apart). The measurements
alternate between the two servers, the order swapped every round:

* server: the conversation page's HTML over HTTP with the session cookie (``--requests``);
* browser: headless chromium loading the page in a fresh context (``--loads``): responseEnd,
  DOMContentLoaded, load, and ready (the first frame painted after DOMContentLoaded, so
  layout left for later counts too); and the main thread's script, layout and style time
  until load (CDP ``Performance.getMetrics``), steadier than the marks on a busy machine;
* first token: a websocket ``send`` frame to the first ``chunk`` frame (``--turns``), then the
  turn's ``reply_end``; turns are 0.3 s apart, so the after-turn work of one is done.

    mkdir /tmp/before && git archive e41e958 | tar -x -C /tmp/before  # before chat-ux's merge
    .venv/bin/python bench/chat_ux.py --before /tmp/before [--after DIR] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.chat_page import BROWSER_ARGS, CHROMIUM, SEED, load_once  # noqa: E402
from bench.harness import AppServer, Upstream, bench_env, django_run, sqlite_url  # noqa: E402
from tests.support.live_server import manage  # noqa: E402
from tests.support.ws_client import ChatSocket  # noqa: E402

FRESH = """
fresh = conversation_create(user=user, title="Turns")
result["fresh_id"] = fresh.pk
"""

# --reports: each reply with a stored "What the model saw" report, as real replies have (the
# seed's replies have none). A typical turn: the blocks, three memories, ten earlier messages.
REPORTS = """
from chat.models import Message
memories = [{"kind": "fact", "id": n, "text": f"Remembered fact {n} about prices and tax rates",
             "score": 0.8, "why": "shares words with the message", "date": "2026-11-30",
             "source": "how do I sum prices with tax?", "message_ids": []} for n in range(3)]
report = {"schema_version": 2, "total_tokens": 1834, "limit": 7000, "budget": 8000,
          "reserve": 1000, "model": "gpt-4o-mini", "strategy": "token_limit",
          "tokens_estimated": False, "memory_enabled": True, "system_prompt_version": 3,
          "blocks": [{"name": n, "tokens": t, "detail": ""} for n, t in (
              ("system", 120), ("preferences", 40), ("memory", 90), ("history", 1500),
              ("message", 84))],
          "preferences": {"text": "Answer briefly. Use metric units.", "sources": ["a", "b"]},
          "memories": memories, "memories_left_out": memories[:1],
          "messages": list(range(10)), "messages_left_out": {"count": 2, "reason": "budget"}}
Message.objects.filter(conversation=conversation, role="assistant").update(context_report=report)
"""


class Side:
    """One checkout, served."""

    def __init__(self, label: str, root: Path, upstream_url: str, reports: bool = False):
        self.label, self.root = label, root
        work = Path(tempfile.mkdtemp(prefix=f"bench-ux-{label}-"))
        self.env = bench_env(
            database_url=sqlite_url(work),
            upstream_url=upstream_url,
            STATIC_ROOT=str(work / "static"),
            SECURE_SSL_REDIRECT="false",
            SESSION_COOKIE_SECURE="false",
            CSRF_COOKIE_SECURE="false",
            SECURE_HSTS_SECONDS="0",
            OPENAI_MAX_RETRIES="0",
            MESSAGES_PER_MINUTE="1000",  # the turns come faster than a person's
        )
        manage("migrate", "--noinput", env=self.env, root=root)
        manage("collectstatic", "--noinput", "-v0", env=self.env, root=root)
        self.seeded = django_run(
            SEED + (REPORTS if reports else "") + FRESH, env=self.env, root=root
        )
        self.server = AppServer(self.env, log_path=work / "server.log", root=root).start()
        self.page_ms: list[float] = []
        self.marks: dict[str, list[float]] = {
            name: [] for name in ("response", "dom", "load", "ready", "script", "layout", "style")
        }
        self.ttft_ms: list[float] = []
        self.turn_ms: list[float] = []
        self.html_bytes = self.page_bytes = 0

    def request_page(self) -> float:
        url = self.server.url + self.seeded["url"]
        request = urllib.request.Request(url, headers={"Cookie": f"sessionid={self.cookie}"})
        began = time.perf_counter()
        with urllib.request.urlopen(request) as response:
            self.html_bytes = len(response.read())
        return (time.perf_counter() - began) * 1000

    @property
    def cookie(self) -> str:
        return self.seeded["cookie"]

    async def turn(self, socket: ChatSocket, n: int) -> tuple[float, float]:
        began = time.perf_counter()
        await socket.send({"type": "send", "text": f"Question {n}: what should I pack?"})
        first = None
        while True:
            frame = await socket.receive(30)
            if frame["type"] == "chunk" and first is None:
                first = time.perf_counter()
            if frame["type"] == "reply_end":
                return (first - began) * 1000, (time.perf_counter() - began) * 1000
            if frame["type"] == "error":
                raise RuntimeError(f"{self.label}: {frame}")


def rounds(n: int, sides: list[Side]):
    """``n`` rounds, each visiting every side, the order swapped every round."""
    for i in range(n):
        yield i, sides if i % 2 == 0 else sides[::-1]


async def measure_turns(sides: list[Side], turns: int) -> None:
    sockets = {}
    for side in sides:
        sockets[side.label] = await ChatSocket(
            side.server.url, side.cookie, side.seeded["fresh_id"]
        ).connect()
    try:
        for i, order in rounds(turns + 1, sides):
            for side in order:
                first, whole = await side.turn(sockets[side.label], i)
                if i:  # the first turn warms the model client and the caches
                    side.ttft_ms.append(first)
                    side.turn_ms.append(whole)
                await asyncio.sleep(0.3)
    finally:
        for socket in sockets.values():
            await socket.close()


def measure(sides: list[Side], requests: int, loads: int, turns: int) -> None:
    from playwright.sync_api import sync_playwright

    for i, order in rounds(requests + 5, sides):
        for side in order:
            ms = side.request_page()
            if i >= 5:  # warm-up
                side.page_ms.append(ms)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        for i, order in rounds(loads + 1, sides):
            for side in order:
                timing = load_once(browser, side.server.url, side.seeded)
                if i:
                    for name in side.marks:
                        side.marks[name].append(timing[name])
                    side.page_bytes = timing["bytes"]
        browser.close()
    asyncio.run(measure_turns(sides, turns))


def table(before: Side, after: Side) -> str:
    rows = [
        f"| measure (median ms) | before ({before.label}) | after ({after.label})"
        " | after / before |",
        "|---|---:|---:|---:|",
    ]

    def line(label, old, new):
        a, b = statistics.median(old), statistics.median(new)
        rows.append(f"| {label} | {a:.1f} | {b:.1f} | {b / a:.2f}x |")

    line("server: conversation page HTML", before.page_ms, after.page_ms)
    marks = (
        ("response", "response end"),
        ("dom", "DOMContentLoaded"),
        ("load", "load"),
        ("ready", "ready (first frame after DOMContentLoaded)"),
    )
    for name, label in marks:
        line(f"browser: {label}", before.marks[name], after.marks[name])
    # The browser's own part, load by load: what the server and the network took is left out.
    line(
        "browser: response end → ready",
        [r - s for r, s in zip(before.marks["ready"], before.marks["response"], strict=True)],
        [r - s for r, s in zip(after.marks["ready"], after.marks["response"], strict=True)],
    )
    for name in ("script", "layout", "style"):
        line(
            f"browser main thread: {name} (CDP, until load)", before.marks[name], after.marks[name]
        )
    line("first token (send → first chunk)", before.ttft_ms, after.ttft_ms)
    line("whole turn (send → reply_end, 40 words)", before.turn_ms, after.turn_ms)
    rows.append("")
    rows.append(
        f"HTML {before.html_bytes / 1024:.1f} → {after.html_bytes / 1024:.1f} KiB; page with its "
        f"resources {before.page_bytes / 1024:.1f} → {after.page_bytes / 1024:.1f} KiB (encoded); "
        f"{len(after.page_ms)} requests, {len(after.marks['load'])} loads, "
        f"{len(after.ttft_ms)} turns each."
    )
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout to compare with")
    parser.add_argument("--after", type=Path, default=ROOT, help="default: this checkout")
    parser.add_argument("--before-label", default="before")
    parser.add_argument("--after-label", default="after")
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--loads", type=int, default=15)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--reports", action="store_true", help="give each seeded reply a stored context report"
    )
    args = parser.parse_args(argv)
    upstream = Upstream(interval=0.005, words=40).start()
    sides: list[Side] = []
    try:
        sides.append(
            Side(args.before_label, args.before.resolve(), upstream.base_url, args.reports)
        )
        sides.append(Side(args.after_label, args.after.resolve(), upstream.base_url, args.reports))
        measure(sides, args.requests, args.loads, args.turns)
    finally:
        for side in sides:
            side.server.stop()
        upstream.stop()
    before, after = sides
    print(table(before, after))
    if args.json:
        keep = ("page_ms", "marks", "ttft_ms", "turn_ms", "html_bytes", "page_bytes")
        data = {s.label: {k: getattr(s, k) for k in keep} for s in sides}
        args.json.write_text(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
