"""Benchmark: how long the chat page takes to load, served as in production.

One conversation of 50 messages (the page's first batch: Markdown replies with lists, tables
and code blocks, so highlighting and the message template are exercised), daphne with
``DEBUG=false`` on SQLite in a temporary directory, static files collected. Reported:

* server: the conversation page's HTML, requested with the session cookie over HTTP
  (median and p95 of ``--requests`` requests after a warm-up), and its size;
* browser: headless chromium (Debian's) loading the page, ``--loads`` times in fresh
  contexts: the Navigation Timing marks responseEnd, DOMContentLoaded and load, and "ready"
  (the first frame painted after DOMContentLoaded; median and p95), and the bytes of all
  resources.

    .venv/bin/python bench/chat_page.py            # about a minute
    .venv/bin/python bench/chat_page.py --json out.json
    .venv/bin/python bench/chat_page.py --conversations 2000   # a long sidebar (issue 38)

Run it from another checkout (``git archive`` of an earlier commit) to compare.
"""

from __future__ import annotations

import argparse
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

from bench.harness import AppServer, bench_env, django_run, percentile, sqlite_url  # noqa: E402
from tests.support.live_server import manage  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
SEED = """
from django.contrib.auth import get_user_model
from django.test import Client
from chat.services import conversation_create, message_create
user = get_user_model().objects.create_user("bench", password=None)
conversation = conversation_create(user=user, title="A long conversation")
for i in range(25):
    message_create(conversation=conversation, role="user",
                   content=f"Question {i}: how do I sum prices with tax?\\n  (indented note)")
    message_create(conversation=conversation, role="assistant", content=(
        f"Answer {i}: here is **one way**.\\n\\n- add the prices\\n- multiply by the rate\\n\\n"
        "| item | price |\\n|---|---:|\\n| tea | 2.50 |\\n\\n"
        "```python\\ndef total(prices, rate=1.2):\\n    # with tax\\n"
        "    return sum(p * rate for p in prices)\\n```\\n\\nThat is all."))
# --conversations: more in the sidebar (as after an import, issue 38): a few pinned, a tenth in
# a project, one an hour back from now (so every date group and many months are listed).
from datetime import timedelta
from django.utils import timezone
from chat.models import Conversation
from projects.services import project_create
project = project_create(user=user, name="Imported work")
now = timezone.now()
Conversation.objects.bulk_create([
    Conversation(user=user, title=f"Imported conversation {n}",
                 created_at=now - timedelta(hours=n + 1), updated_at=now - timedelta(hours=n + 1),
                 pinned_at=now - timedelta(minutes=n) if n < PINNED else None,
                 project=project if n % 10 == 5 else None)
    for n in range(EXTRA)
])
client = Client()
client.force_login(user)
result = {"cookie": client.cookies["sessionid"].value, "url": conversation.get_absolute_url()}
"""


def serve(requests: int, loads: int, conversations: int = 0) -> dict:
    work = Path(tempfile.mkdtemp(prefix="bench-page-"))
    env = bench_env(
        database_url=sqlite_url(work),
        STATIC_ROOT=str(work / "static"),
        SECURE_SSL_REDIRECT="false",
        SESSION_COOKIE_SECURE="false",
        CSRF_COOKIE_SECURE="false",
        SECURE_HSTS_SECONDS="0",
    )
    manage("migrate", "--noinput", env=env)
    manage("collectstatic", "--noinput", "-v0", env=env)
    seed = SEED.replace("EXTRA", str(conversations)).replace("PINNED", "3")
    seeded = django_run(seed, env=env)
    server = AppServer(env).start()
    try:
        url = server.url + seeded["url"]
        headers = {"Cookie": f"sessionid={seeded['cookie']}"}
        server_ms, size = [], 0
        for i in range(requests + 5):
            began = time.perf_counter()
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers)) as r:
                body = r.read()
            if i >= 5:  # warm-up
                server_ms.append((time.perf_counter() - began) * 1000)
            size = len(body)
        browser = load_in_browser(server.url, seeded, loads)
    finally:
        server.stop()
    return {"server_ms": server_ms, "html_bytes": size, **browser}


BROWSER_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
# "ready": the end of the first frame painted after DOMContentLoaded (a task queued from that
# frame's requestAnimationFrame runs after its style, layout and paint), so layout work that
# scripts leave for later is counted too.
READY = (
    "window.__ready = new Promise((resolve) => document.addEventListener('DOMContentLoaded',"
    " () => requestAnimationFrame(() => { const c = new MessageChannel();"
    " c.port1.onmessage = () => resolve(performance.now()); c.port2.postMessage(0); })));"
)
TIMING = (
    "(async () => { const n = performance.getEntriesByType('navigation')[0];"
    " const r = performance.getEntriesByType('resource'); const ready = await window.__ready;"
    " return {response: n.responseEnd, dom: n.domContentLoadedEventEnd,"
    " load: n.loadEventEnd, ready, bytes: n.encodedBodySize +"
    " r.reduce((a, e) => a + e.encodedBodySize, 0)}; })()"
)


def load_once(browser, base: str, seeded: dict) -> dict:
    """One load of the conversation page in a fresh context: its Navigation Timing marks (ms)
    and the encoded bytes of the page and its resources."""
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    host = base.split("//", 1)[1].split(":")[0]
    context.add_cookies(
        [{"name": "sessionid", "value": seeded["cookie"], "domain": host, "path": "/"}]
    )
    context.add_init_script(READY)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    page.goto(base + seeded["url"], wait_until="load")
    timing = page.evaluate(TIMING)
    # The main thread's own work (seconds in CDP), less swayed by a busy machine than marks.
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    for name, key in (("ScriptDuration", "script"), ("LayoutDuration", "layout")):
        timing[key] = metrics[name] * 1000
    timing["style"] = metrics["RecalcStyleDuration"] * 1000
    context.close()
    return timing


def load_in_browser(base: str, seeded: dict, loads: int) -> dict:
    from playwright.sync_api import sync_playwright

    marks = {
        "response": [],
        "dom": [],
        "load": [],
        "ready": [],
        "script": [],
        "layout": [],
        "style": [],
    }
    transferred = 0
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        for i in range(loads + 1):
            timing = load_once(browser, base, seeded)
            if i:  # the first load warms the server's caches
                for name in marks:
                    marks[name].append(timing[name])
                transferred = timing["bytes"]
        browser.close()
    return {"browser_ms": marks, "page_bytes": transferred}


def summary(result: dict) -> str:
    def line(label, values):
        return f"| {label} | {statistics.median(values):.1f} | {percentile(values, 95):.1f} |"

    rows = [
        "| measure | median ms | p95 ms |",
        "|---|---:|---:|",
        line("server: conversation page HTML", result["server_ms"]),
        line("browser: response end", result["browser_ms"]["response"]),
        line("browser: DOMContentLoaded", result["browser_ms"]["dom"]),
        line("browser: load", result["browser_ms"]["load"]),
        line("browser: ready (first frame after DOMContentLoaded)", result["browser_ms"]["ready"]),
    ]
    rows.append("")
    rows.append(
        f"HTML {result['html_bytes'] / 1024:.1f} KiB; page with its resources "
        f"{result['page_bytes'] / 1024:.1f} KiB (encoded)."
    )
    return "\n".join(rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--loads", type=int, default=15)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--conversations",
        type=int,
        default=0,
        help="more conversations in the sidebar (3 pinned, a tenth in a project)",
    )
    args = parser.parse_args(argv)
    result = serve(args.requests, args.loads, args.conversations)
    print(summary(result))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
