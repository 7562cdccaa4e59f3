"""Benchmark: a turn's writes as the ORM makes them and as plain statements, in one process.

    .venv/bin/python bench/turn_writes.py            # SQLite in a temporary file
    .venv/bin/python bench/turn_writes.py --rounds 7 --per-round 400

The turn inserts two messages (``chat.services.message_create``) and stores the finished reply
(``chat.services.reply_finish``). Both now go through ``web.compiled.plain_insert`` and
``plain_update``; before, through ``Model.save()`` and ``save(update_fields=...)``. Host speed
here moves by up to 2x from one run to the next, so the two ways run in the same process,
alternating block by block on the same conversation, and the report gives each round's
median CPU time per call (the thread's own, ``time.thread_time``) and the median of the rounds'
ratios. The statements are the same (the full-text triggers fire either way): the difference
is what Django does around them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def setup(path: str) -> None:
    os.environ["DATABASE_URL"] = "sqlite:///" + path
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings_bench")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-round", type=int, default=300, help="calls per way and round")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="turn-writes-") as tmp:
        setup(str(Path(tmp) / "db.sqlite3"))
        run(args)


def run(args) -> None:
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from bench.corpus import chat_messages
    from chat import services
    from chat.models import Message
    from contextwindow.tokens import count_tokens
    from web.compiled import plain_insert, plain_update

    user = get_user_model().objects.create_user("bench", password="bench-password-1")  # noqa: S106
    conversation = services.conversation_create(user=user)
    texts = [t for _, t in chat_messages(200, lambda s: count_tokens(s, "gpt-4o-mini"))]
    report = {"total_tokens": 1200, "blocks": [{"name": "history", "tokens": 900}] * 8}

    def new(i: int) -> Message:
        return Message(
            conversation=conversation,
            role="user",
            content=texts[i % len(texts)],
            token_count=80,
            client_id=f"c{time.perf_counter_ns()}",
        )

    def finish_values(i: int) -> dict:
        return {
            "content": texts[(i + 1) % len(texts)],
            "status": Message.Status.COMPLETE,
            "token_count": 120,
            "prompt_tokens": 900,
            "completion_tokens": 120,
            "duration": 2.0,
            "lease_expires_at": None,
            "context_report": report,
        }

    def orm_insert(i):
        message = new(i)
        message.save()
        return message

    def orm_finish(message, i):
        for name, value in finish_values(i).items():
            setattr(message, name, value)
        message.save(update_fields=list(finish_values(i)))

    def plain_finish(message, i):
        plain_update(Message, finish_values(i), where={"pk": message.pk})

    ways = {
        "ORM": (orm_insert, orm_finish),
        "plain": (lambda i: plain_insert(new(i)), plain_finish),
    }
    results: dict[str, dict[str, list[float]]] = {
        name: {"insert": [], "finish": []} for name in ways
    }
    for insert, finish in ways.values():  # warm-up
        for i in range(20):
            with transaction.atomic():
                finish(insert(i), i)
    for round_ in range(args.rounds):
        order = list(ways) if round_ % 2 == 0 else list(ways)[::-1]
        for name in order:
            insert, finish = ways[name]
            inserts, finishes = [], []
            for i in range(args.per_round):
                with transaction.atomic():
                    c0 = time.thread_time()
                    message = insert(i)
                    c1 = time.thread_time()
                    finish(message, i)
                    c2 = time.thread_time()
                inserts.append(c1 - c0)
                finishes.append(c2 - c1)
            results[name]["insert"].append(statistics.median(inserts) * 1e6)
            results[name]["finish"].append(statistics.median(finishes) * 1e6)
        print(f"round {round_ + 1}/{args.rounds} done", file=sys.stderr)

    print(
        "| write | way | µs per call, each round's median | median "
        "| plain / ORM (median of rounds) |"
    )
    print("|---|---|---|---:|---:|")
    for write in ("insert", "finish"):
        ratios = [
            p / o for p, o in zip(results["plain"][write], results["ORM"][write], strict=True)
        ]
        for name in ways:
            values = results[name][write]
            shown = " / ".join(f"{v:.0f}" for v in values)
            ratio = f"{statistics.median(ratios):.2f}x" if name == "plain" else ""
            print(f"| {write} | {name} | {shown} | {statistics.median(values):.0f} | {ratio} |")
    print(f"\n1-minute load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
