"""Benchmark: the CPU of ``bench/stream.py``'s turns in the app's database threads, in process.

    .venv/bin/python bench/turn_cpu.py                             # this checkout
    .venv/bin/python bench/turn_cpu.py --before DIR --rounds 4     # DIR's checkout beside it

At 50 chats the app's CPU per relayed chunk beyond the bare relay's is mostly per turn, in
the database threads (bench/README.md, issue 36): the set-up (``chat.turn.set_up_turn``: the
per-minute count, the message and the reply's placeholder stored, the context built, the
first two frames' articles), the reply's store with its ``reply_end`` frame
(``chat.turn.reply._finish``) and the after-turn work (``chat.turn.after.after_turns``, here one
turn a batch; the server batches the replies that end together). This script runs the stream
bench's turns through those three steps: ``--users`` users (20) with one titled conversation
each, ``--turns`` turns (6) each, its question and its 100-word reply, on a scratch SQLite
database, a warm-up user first. It prints per checkout and round the median CPU time
(``time.thread_time``) of each step a turn, and of some parts (``PARTS``) per call, and the
median of the rounds. ``--before`` runs another checkout in alternate rounds (each round in a
child process of its own), so the host's load falls on both alike: compare the ratio.
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
# Parts timed per call, by the module attribute their callers look them up through.
PARTS = (
    "chat.services.turn_begin",
    "memory.context.build",
    "memory.search.search",
    "chat.protocol.user_message",
    "chat.protocol.reply_start",
    "chat.services.reply_finish",
    "chat.protocol.reply_end",
)

CHILD = r"""
import importlib, json, os, statistics, sys, time
from collections import defaultdict
sys.path.insert(0, os.getcwd())
users, turns, parts = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(",")
os.environ.update(
    DATABASE_URL="sqlite:///" + sys.argv[1], DEBUG="false", SECRET_KEY="bench-" * 10,
    ALLOWED_HOSTS="127.0.0.1", LOG_LEVEL="WARNING", CREATE_DEMO_USER="false",
    # The stream bench's app: a model endpoint configured (never called here), its raised
    # per-minute limit (the check stays on the path).
    OPENAI_API_KEY="bench-key", OPENAI_BASE_URL="http://127.0.0.1:9/v1",
    MEMORYCHAT_MESSAGES_PER_MINUTE="100000", DJANGO_SETTINGS_MODULE="config.settings",
)
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0, interactive=False)
from django.contrib.auth import get_user_model
from bench.stream import question
from bench.upstream import reply_text
from chat import services, turn
from chat.models import Message
from chat.turn.after import after_turns
from chat.turn.reply import _finish

spent = defaultdict(list)  # part -> CPU seconds per call, measured turns only
measuring = False


def timed(name):
    module_name, _, attribute = name.rpartition(".")
    module = importlib.import_module(module_name)
    inner = getattr(module, attribute)

    def wrapper(*args, **kwargs):
        began = time.thread_time()
        try:
            return inner(*args, **kwargs)
        finally:
            if measuring:
                spent[name].append(time.thread_time() - began)

    setattr(module, attribute, wrapper)


for name in parts:
    timed(name)
reply = reply_text(100)
seats = []
for i in range(users + 1):
    user = get_user_model()(username=f"bench{i:05d}")
    user.set_unusable_password()
    user.save()
    seats.append((user, services.conversation_create(user=user, title="bench 1")))
asked = 0
steps = defaultdict(list)


def one_turn(user, conversation, measured):
    global asked, measuring
    asked += 1
    measuring = measured
    c0 = time.thread_time()
    set_up = turn.set_up_turn(
        user=user, conversation=conversation, text=question(user.pk, asked), client_id=f"c{asked}"
    )
    c1 = time.thread_time()
    built = set_up.prepared.built
    _finish(
        reply=set_up.prepared.start.reply, content=reply, status=Message.Status.COMPLETE,
        prompt_tokens=200, completion_tokens=100, time_to_first_token=0.01, duration=2.0,
        model=conversation.effective_model, context_report=built.report,
        system_prompt_version=built.report["system_prompt_version"],
    )
    c2 = time.thread_time()
    after_turns([(conversation, set_up.prepared.start.user_message)])
    c3 = time.thread_time()
    measuring = False
    if measured:
        steps["set-up"].append(c1 - c0)
        steps["store + reply_end"].append(c2 - c1)
        steps["after-turn"].append(c3 - c2)


for _ in range(3):
    one_turn(*seats[0], measured=False)
for _ in range(turns):
    for user, conversation in seats[1:]:
        one_turn(user, conversation, measured=True)
out = {name: 1e6 * statistics.median(values) for name, values in steps.items()}
out["turn"] = sum(out.values())
out.update({name: 1e6 * statistics.median(spent[name]) for name in parts if spent[name]})
print(json.dumps(out))
"""


def run_once(checkout: Path, args) -> dict:
    with tempfile.TemporaryDirectory(prefix="turn-cpu-") as tmp:
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        for name in ("DATABASE_URL", "REDIS_URL", "DEBUG"):
            env.pop(name, None)
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                CHILD,
                str(Path(tmp) / "db.sqlite3"),
                str(args.users),
                str(args.turns),
                ",".join(PARTS),
            ],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="another checkout to run beside this one")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--turns", type=int, default=6, help="per user")
    args = parser.parse_args()
    sides = [("this checkout", ROOT)]
    if args.before:
        sides.insert(0, ("before", args.before.resolve()))
    results: dict[str, list[dict]] = {label: [] for label, _ in sides}
    print(f"load average (1/5/15 min) at the start: {load()}", file=sys.stderr)
    for round_ in range(args.rounds):
        order = sides if round_ % 2 == 0 else sides[::-1]
        for label, checkout in order:
            results[label].append(run_once(checkout, args))
            print(f"round {round_ + 1} {label} done, load {load()}", file=sys.stderr)
    keys = list(results[sides[-1][0]][0])
    print(f"\nCPU µs, medians over turns (parts: per call); load at the end {load()}\n")
    header = ["step or part"]
    for label, _ in sides:
        header += [f"{label}, round {r + 1}" for r in range(args.rounds)] + [f"{label}, median"]
    if args.before:
        header.append("after / before")
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    for key in keys:
        cells = [key]
        medians = []
        for label, _ in sides:
            values = [r.get(key) for r in results[label]]
            present = [v for v in values if v is not None]
            cells += [f"{v:,.0f}" if v is not None else "—" for v in values]
            medians.append(statistics.median(present) if present else None)
            cells.append(f"**{medians[-1]:,.0f}**" if medians[-1] is not None else "—")
        if args.before:
            ratio = medians[1] / medians[0] if medians[0] and medians[1] else None
            cells.append(f"{ratio:.2f}x" if ratio else "—")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
