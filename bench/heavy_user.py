"""Benchmark: what a turn's reads cost for a user with a long history, in process.

    .venv/bin/python bench/heavy_user.py                            # this checkout
    .venv/bin/python bench/heavy_user.py --before DIR --rounds 4    # DIR's checkout beside it
    .venv/bin/python bench/heavy_user.py --database-url postgres://postgres@127.0.0.1:5432/NAME

Two reads whose cost grew with the history, each in a child process per checkout and round on
a scratch database: the context build of a conversation of ``--messages`` short messages that
no summary bounds (a temporary chat, memory off, or one not yet summarised: the window is
filled from the whole history), and the pinned facts a turn reads (``memory.recall
.pinned_facts``) for a user with ``--facts`` active facts, one in a thousand pinned. It
prints the median CPU time of each per checkout, per round and over the rounds; ``--before``
alternates the two checkouts round by round, so the machine's load falls on both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scratch import scratch_database  # noqa: E402

CHILD = r"""
import json, os, statistics, sys, time
sys.path.insert(0, os.getcwd())
os.environ["DATABASE_URL"] = sys.argv[1]
os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings_bench"
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0, interactive=False)
from django.contrib.auth import get_user_model
from chat import services
from memory import context
from memory.models import Fact
from memory.recall import pinned_facts

messages, facts = int(sys.argv[2]), int(sys.argv[3])
user = get_user_model().objects.create_user("heavy", password="bench-password-1")
conversation = services.conversation_create(user=user)
services.message_create_many(conversation=conversation, messages=[
    services.NewMessage("user" if i % 2 == 0 else "assistant", f"message {i} about the garden")
    for i in range(messages)
])
Fact.objects.bulk_create(
    Fact(user=user, text=f"fact {i} about the garden", dedupe_key=f"k{i}",
         pinned=i % 1000 == 0, importance=(i % 5) / 5)
    for i in range(facts)
)


# Median CPU time of this thread, and median wall time: on PostgreSQL it holds the server's.
def medians(fn, times, warm=5):
    cpu, wall = [], []
    for i in range(warm + times):
        start, started = time.thread_time(), time.perf_counter()
        fn(i)
        if i >= warm:
            cpu.append(time.thread_time() - start)
            wall.append(time.perf_counter() - started)
    return statistics.median(cpu), statistics.median(wall)


def build_once(i):
    context.build(conversation=conversation, user_text=f"and the roses {i}?")


build, build_wall = medians(build_once, 30)
pinned, pinned_wall = medians(lambda i: pinned_facts(user=user), 300)
print(json.dumps({
    "build_ms": 1000 * build, "build_wall_ms": 1000 * build_wall,
    "pinned_us": 1e6 * pinned, "pinned_wall_us": 1e6 * pinned_wall,
}))
"""


def run_once(checkout: Path, args, round_: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="heavy-user-") as tmp:
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        env.pop("REDIS_URL", None)
        url, drop = scratch_database(args.database_url, f"heavy{round_}", Path(tmp))
        try:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, url, str(args.messages), str(args.facts)],
                cwd=checkout,
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
        finally:
            drop()
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="another checkout to run beside this one")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--messages", type=int, default=5000)
    parser.add_argument("--facts", type=int, default=20000)
    parser.add_argument("--database-url", help="postgres://user@host:port/NAME (scratch copies)")
    args = parser.parse_args()
    sides = [("this checkout", ROOT)]
    if args.before is not None:
        sides.insert(0, ("before", args.before.resolve()))
    results: dict[str, list[dict]] = {label: [] for label, _ in sides}
    for round_ in range(args.rounds):
        for label, checkout in sides if round_ % 2 == 0 else sides[::-1]:
            results[label].append(run_once(checkout, args, round_))
            print(f"round {round_ + 1} {label}: {results[label][-1]}", file=sys.stderr)
    print(
        f"| checkout | build, {args.messages:,} messages, no summary: CPU ms per round "
        f"| median CPU / wall ms | pinned facts of {args.facts:,}: CPU µs per round "
        "| median CPU / wall µs |"
    )
    print("|---|---|---:|---|---:|")
    for label, _ in sides:
        runs = results[label]

        def median(key, runs=runs):
            return statistics.median(r[key] for r in runs)

        builds = " / ".join(f"{r['build_ms']:.1f}" for r in runs)
        pins = " / ".join(f"{r['pinned_us']:.0f}" for r in runs)
        print(
            f"| {label} | {builds} | {median('build_ms'):.2f} / {median('build_wall_ms'):.2f} "
            f"| {pins} | {median('pinned_us'):.0f} / {median('pinned_wall_us'):.0f} |"
        )
    print(f"\n1-minute load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
