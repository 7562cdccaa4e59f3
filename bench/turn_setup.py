"""Benchmark: the CPU a turn spends before its model request goes out, in process.

    .venv/bin/python bench/turn_setup.py                       # this checkout
    .venv/bin/python bench/turn_setup.py --before DIR --rounds 4   # DIR's checkout beside it

What a first token waits for in the app, beyond what a bare relay does: the work between the
``send`` frame and the request. From the fourth session to issue 36 that was
``chat.turn.prepare_context`` (the resend and busy checks, the context build with retrieval;
the message stored while the model works, ``chat.turn.store_turn``); before and since,
``chat.turn.prepare_turn`` (store, then build). The script runs whichever the checkout
has, in a child process per checkout and round, on a scratch SQLite database: a user with
earlier conversations (6 messages by default;
``--earlier 3000`` gives the search a full pool of candidates; ``--beam N`` a real user, BEAM
chat N's sessions, the last one's user turns as the new messages) and a
conversation that grows turn by turn (each reply stored and the after-turn work done, as the
app does), 50 turns of the deterministic corpus (``bench/corpus.py``), the first 10 not
counted. It prints, per checkout, the median over turns of the thread's CPU time and wall
time before the request, per round, and the median of the rounds.

``--project N`` (issue 37, scoped memory): N more messages in the conversations of a project
(the earlier ones stay outside any project), and the measured conversation is in the project:
its search reads the project's rows beside everything outside. A second conversation, outside
any project, takes every other turn and is reported beside it (``outside``). A checkout
without projects seeds the same messages outside any project: its "project" conversation is
today's cost for a user of that size. ``--before`` alternates the
two checkouts round by round, so the machine's load falls on both alike: compare the ratio.
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
BEAM_PATH = ROOT.parent / "shared/memdata/beam-dev.jsonl.gz"

CHILD = r"""
import json, os, statistics, sys, time
sys.path.insert(0, os.getcwd())
os.environ["DATABASE_URL"] = "sqlite:///" + sys.argv[1]
os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings_bench"
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0, interactive=False)
from django.contrib.auth import get_user_model
from bench.corpus import chat_messages
from chat import services, turn
from chat.models import Message
from contextwindow.tokens import count_tokens

user = get_user_model().objects.create_user("bench", password="bench-password-1")
earlier_count, beam_path, beam_chat = int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
project_count = int(sys.argv[5])
try:
    from projects.models import Project
except ImportError:  # a checkout before projects: the same messages, outside any project
    Project = None
project = Project.objects.create(user=user, name="Bench") if Project and project_count else None


def in_project(conversation):
    if project is not None:
        type(conversation).objects.filter(pk=conversation.pk).update(project=project)
        conversation.refresh_from_db()
    return conversation
if beam_path:
    # A real user: a BEAM chat's sessions but its last as the earlier conversations, the
    # user's turns of the last one as the new messages.
    import gzip
    with gzip.open(beam_path, "rt") as fh:
        for _ in range(beam_chat):
            fh.readline()
        sessions = json.loads(fh.readline())["sessions"]
    for session in sessions[:-1]:
        earlier = services.conversation_create(user=user)
        services.message_create_many(conversation=earlier, messages=[
            services.NewMessage(t["role"], t["text"]) for t in session["turns"]
        ])
    questions = [t["text"] for t in sessions[-1]["turns"] if t["role"] == "user"][:50]
else:
    seeded = earlier_count + project_count
    texts = chat_messages(120 + seeded, lambda s: count_tokens(s, "gpt-4o-mini"))
    # The user's earlier conversations, 50 messages each: what the search looks through
    # (the last project_count of them in the project, with --project).
    for start in range(0, seeded, 50):
        earlier = services.conversation_create(user=user)
        if start >= earlier_count:
            earlier = in_project(earlier)
        services.message_create_many(conversation=earlier, messages=[
            services.NewMessage(role, text)
            for role, text in texts[start : min(start + 50, seeded)]
        ])
    questions = [t for r, t in texts[seeded:] if r == "user"][:50]
conversation = services.conversation_create(user=user)
conversations = [conversation]
if project_count:
    conversations = [in_project(conversation), services.conversation_create(user=user)]
    questions = [q for q in questions for _ in range(2)][:100]
split = hasattr(turn, "prepare_context")
# The package (issue 36) or the module before it.
finish = turn.reply._finish if hasattr(turn, "reply") else turn._finish
after_turns = turn.after.after_turns if hasattr(turn, "after") else turn._after_turns
cpu, wall = [], []
cpu_outside = []
for i, text in enumerate(questions):
    conversation = conversations[i % len(conversations)]
    t0, c0 = time.perf_counter(), time.thread_time()
    if split:
        draft = turn.prepare_context(conversation=conversation, text=text, client_id=f"q{i}")
        c1, t1 = time.thread_time(), time.perf_counter()
        prepared = turn.store_turn(
            conversation=conversation, text=text, client_id=f"q{i}", built=draft.built
        )
    else:
        prepared = turn.prepare_turn(conversation=conversation, text=text, client_id=f"q{i}")
        c1, t1 = time.thread_time(), time.perf_counter()
    if i >= 10 * len(conversations):
        if i % len(conversations):
            cpu_outside.append(c1 - c0)
        else:
            cpu.append(c1 - c0)
            wall.append(t1 - t0)
    report = prepared.built.report
    finish(
        reply=prepared.start.reply, content=f"About {text[:40]}: noted.",
        status=Message.Status.COMPLETE, prompt_tokens=120, completion_tokens=6,
        model=conversation.effective_model, context_report=report,
        system_prompt_version=report["system_prompt_version"],
    )
    after_turns([(conversation, prepared.start.user_message)])
print(json.dumps({
    "split": split,
    "cpu_ms": 1000 * statistics.median(cpu),
    "wall_ms": 1000 * statistics.median(wall),
    "outside_cpu_ms": 1000 * statistics.median(cpu_outside) if cpu_outside else None,
    "scoped": project is not None,
}))
"""


def run_once(checkout: Path, args) -> dict:
    with tempfile.TemporaryDirectory(prefix="turn-setup-") as tmp:
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        env.pop("DATABASE_URL", None)
        env.pop("REDIS_URL", None)
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                CHILD,
                str(Path(tmp) / "db.sqlite3"),
                str(args.earlier),
                str(BEAM_PATH) if args.beam is not None else "",
                str(args.beam or 0),
                str(args.project),
            ],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", type=Path, help="another checkout to run beside this one")
    parser.add_argument("--before-label", default="before")
    parser.add_argument("--after-label", default="this checkout")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--earlier",
        type=int,
        default=6,
        help="messages in the user's earlier conversations (6; 3000 fills the search's pool)",
    )
    parser.add_argument(
        "--beam",
        type=int,
        metavar="CHAT",
        help="a real user instead: BEAM chat CHAT's sessions (../shared/memdata), the last one's "
        "user turns as the new messages",
    )
    parser.add_argument(
        "--project",
        type=int,
        default=0,
        metavar="N",
        help="N more messages in a project's conversations; the measured conversation in the "
        "project, another outside it beside (issue 37)",
    )
    args = parser.parse_args()
    sides = [(args.after_label, ROOT)]
    if args.before is not None:
        sides.insert(0, (args.before_label, args.before.resolve()))
    results: dict[str, list[dict]] = {label: [] for label, _ in sides}
    for round_ in range(args.rounds):
        order = sides if round_ % 2 == 0 else sides[::-1]
        for label, checkout in order:
            results[label].append(run_once(checkout, args))
            print(f"round {round_ + 1} {label}: {results[label][-1]}", file=sys.stderr)
    print("| checkout | before the request | CPU ms per round | median CPU ms | median wall ms |")
    print("|---|---|---|---:|---:|")
    if args.project:
        print(
            "(the measured conversation: in the project when the checkout has projects, "
            "else outside; `outside` is the other conversation, outside any project)"
        )
    medians = {}
    for label, _ in sides:
        runs = results[label]
        medians[label] = statistics.median(r["cpu_ms"] for r in runs)
        path = "prepare_context" if runs[0]["split"] else "prepare_turn (store + build)"
        per_round = " / ".join(f"{r['cpu_ms']:.1f}" for r in runs)
        wall = statistics.median(r["wall_ms"] for r in runs)
        print(f"| {label} | {path} | {per_round} | {medians[label]:.2f} | {wall:.2f} |")
        if args.project:
            outside = [r["outside_cpu_ms"] for r in runs if r.get("outside_cpu_ms") is not None]
            where = "in the project" if runs[0].get("scoped") else "outside (no projects)"
            print(f"|  | measured conversation: {where} | | | |")
            if outside:
                shown = " / ".join(f"{v:.1f}" for v in outside)
                print(
                    f"| {label}, outside | prepare_turn | {shown} | "
                    f"{statistics.median(outside):.2f} | |"
                )
    if args.before is not None:
        ratio = medians[args.after_label] / medians[args.before_label]
        print(f"\n{args.after_label} / {args.before_label}, median CPU: {ratio:.2f}x")
    print(f"\n1-minute load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
