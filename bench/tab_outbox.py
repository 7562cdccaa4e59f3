"""Benchmark: what the per-tab outbox (``chat.live.Tab``) costs a frame, in one event loop.

A room's frame goes to each tab's queue, and the tab's own task sends it (issue 36 asks
whether that hop is worth its complexity: it keeps a slow socket from holding the reply
back). Here N tabs get F frames each, two ways alternating for ``--rounds``:

* ``outbox``: ``Tab.deliver`` for every tab, as ``Room.publish`` does, then wait until all
  are sent;
* ``direct``: ``await send(frame)`` for every tab in turn, as a room without outboxes would.

``send`` is a socket stand-in: it serialises the frame to JSON (as Channels' ``send_json``
does) and yields to the loop once. Reported: CPU µs per frame and tab, and the time from a
frame's publication to its send at the last tab (median).

    .venv/bin/python bench/tab_outbox.py --tabs 1,10,50
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
    import django

    django.setup()


FRAME = {"type": "chunk", "id": 1, "seq": 0, "text": "word " * 5, "html": "<p>" + "word " * 60}


async def one_way(way: str, tabs: int, frames: int) -> tuple[float, list[float]]:
    from chat.live import Tab

    sent_at: list[float] = []

    async def send(frame) -> None:
        json.dumps(frame)
        sent_at.append(time.perf_counter())
        await asyncio.sleep(0)

    outboxes = [Tab(send) for _ in range(tabs)]
    for tab in outboxes:
        tab.open()
    lags = []
    cpu0 = time.process_time()
    for seq in range(frames):
        frame = {**FRAME, "seq": seq}
        sent_at.clear()
        published = time.perf_counter()
        if way == "outbox":
            for tab in outboxes:
                tab.deliver(frame)
            await asyncio.gather(*(tab.sent() for tab in outboxes))
        else:
            for _ in outboxes:
                await send(frame)
        lags.append((sent_at[-1] - published) * 1e6)
    cpu = time.process_time() - cpu0
    for tab in outboxes:
        tab.close()
    return cpu / (frames * tabs) * 1e6, lags


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tabs", default="1,10,50")
    parser.add_argument("--frames", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    setup_django()
    print("| tabs | way | CPU µs per frame and tab | publish → last tab's send, median µs |")
    print("|---:|---|---:|---:|")
    for tabs in (int(n) for n in args.tabs.split(",")):
        cpu: dict[str, list[float]] = {"outbox": [], "direct": []}
        lag: dict[str, list[float]] = {"outbox": [], "direct": []}
        for round_ in range(args.rounds):
            for way in ("outbox", "direct") if round_ % 2 == 0 else ("direct", "outbox"):
                per_frame, lags = asyncio.run(one_way(way, tabs, args.frames))
                cpu[way].append(per_frame)
                lag[way].append(statistics.median(lags))
        for way in ("direct", "outbox"):
            print(
                f"| {tabs} | {way} | {statistics.median(cpu[way]):.1f}"
                f" | {statistics.median(lag[way]):.1f} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
