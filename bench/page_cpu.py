"""Benchmark: the main thread's CPU time of a chat page load, by kind of work, for several
checkouts served side by side in one run (as ``bench/chat_ux.py`` serves them, ``--reports``
seed). From a chromium trace of each load, until the first frame after DOMContentLoaded:
each event's thread time (``tdur``), not its wall time, so another process's load on the
machine inflates it far less than the marks of ``chat_ux.py``; medians over ``--loads``.

    .venv/bin/python bench/page_cpu.py e41e958=/tmp/before main=/tmp/main after=.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.chat_page import BROWSER_ARGS, CHROMIUM, READY  # noqa: E402
from bench.chat_ux import Side  # noqa: E402
from bench.harness import Upstream  # noqa: E402

KINDS = ("Layout", "UpdateLayoutTree", "PrePaint", "Paint", "ParseHTML", "EvaluateScript")
SCRIPT = ("EvaluateScript", "FunctionCall", "EventDispatch", "TimerFire", "FireIdleCallback")


def analyse(path: str) -> dict[str, float]:
    """Thread ms by kind on the page's main thread (the one that parsed its HTML)."""
    events = json.loads(Path(path).read_text())["traceEvents"]
    parsing = (e for e in events if e.get("name") == "ParseHTML")
    threads = collections.Counter((e["pid"], e["tid"]) for e in parsing)
    pid, tid = threads.most_common(1)[0][0]
    main = [e for e in events if (e["pid"], e["tid"]) == (pid, tid) and e.get("ph") == "X"]
    out: dict[str, float] = collections.Counter()
    for e in main:
        ms = e.get("tdur", e.get("dur", 0)) / 1000
        if e["name"] in KINDS:
            out[e["name"]] += ms
        if e["name"] in ("RunTask", "ThreadControllerImpl::RunTask"):
            out["all tasks"] += ms
        if e["name"] == "Layout":
            data = e.get("args", {}).get("beginData", {})
            most = max(out["layout objects (most)"], data.get("totalObjects", 0))
            out["layout objects (most)"] = most
    # Scripts, outermost only (a script's own calls and the layouts it forces nest in it).
    end = -1
    for e in sorted((e for e in main if e["name"] in SCRIPT), key=lambda e: e["ts"]):
        if e["ts"] >= end:
            out["scripts (incl. forced layout)"] += e.get("tdur", e.get("dur", 0)) / 1000
            end = e["ts"] + e.get("dur", 0)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sides", nargs="+", help="label=checkout, the first is the baseline")
    parser.add_argument("--loads", type=int, default=12)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    upstream = Upstream(interval=0.005, words=40).start()
    sides: list[Side] = []
    try:
        for spec in args.sides:
            label, root = spec.split("=", 1)
            sides.append(Side(label, Path(root).resolve(), upstream.base_url, reports=True))
        results: dict[str, list[dict]] = {side.label: [] for side in sides}
        work = Path(tempfile.mkdtemp(prefix="bench-page-cpu-"))
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
            for i in range(args.loads + 1):
                for side in sides if i % 2 == 0 else sides[::-1]:
                    context = browser.new_context(viewport={"width": 1366, "height": 900})
                    host = side.server.url.split("//", 1)[1].split(":")[0]
                    context.add_cookies(
                        [{"name": "sessionid", "value": side.cookie, "domain": host, "path": "/"}]
                    )
                    context.add_init_script(READY)
                    page = context.new_page()
                    path = str(work / f"{i}-{side.label}.json")
                    categories = ["devtools.timeline", "disabled-by-default-devtools.timeline"]
                    browser.start_tracing(page=page, path=path, categories=categories)
                    page.goto(side.server.url + side.seeded["url"], wait_until="load")
                    page.evaluate("window.__ready")
                    browser.stop_tracing()
                    context.close()
                    if i:  # the first load warms the server's caches
                        results[side.label].append(analyse(path))
                    os.unlink(path)
            browser.close()
    finally:
        for side in sides:
            side.server.stop()
        upstream.stop()
    names = sorted({k for r in results.values() for load in r for k in load})
    base = sides[0].label
    print("| main thread, thread ms (median) | " + " | ".join(s.label for s in sides) + " |")
    print("|---|" + "---:|" * len(sides))
    for name in names:
        cells = []
        first = statistics.median(load.get(name, 0) for load in results[base])
        for side in sides:
            value = statistics.median(load.get(name, 0) for load in results[side.label])
            ratio = f" ({value / first:.2f}x)" if first and side.label != base else ""
            cells.append(f"{value:.0f}{ratio}" if "objects" in name else f"{value:.1f}{ratio}")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"\n{args.loads} loads each (after 1), alternating.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
