"""Benchmark: a continued ``/v1`` request's match (``api.conversations.conversation_matching``)
in process, its CPU and wall time, three ways alternating in one run (issue 38):

* compared: the turns compared with the candidates' threads, as before the digest (the
  digest's query left out);
* digest: the conversation found by its thread's digest, one query;
* digest missed: the digest's query finds nothing (the thread changed since), then compared.

One user with ``--conversations`` conversations of ``--turns`` turns each (the one matched
among them), and another user with as many messages, in a temporary SQLite database unless
``DATABASE_URL`` names one (its tables are made by the test runner's way: a fresh database).

    .venv/bin/python bench/api_match.py [--turns 20] [--conversations 200] [--rounds 400]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.scratch import scratch_django  # noqa: E402


def setup_django() -> None:
    scratch_django(DEBUG="false")


def populate(turns: int, conversations: int):
    from django.contrib.auth import get_user_model

    from api.conversations import conversation_remember
    from api.wire import Turn
    from chat.services import NewMessage, conversation_create, message_create_many

    User = get_user_model()
    user = User.objects.create_user("bench")
    other = User.objects.create_user("other")

    def thread(tag: str) -> list[Turn]:
        return [
            Turn("user" if n % 2 == 0 else "assistant", f"{tag} turn {n}: " + "words " * 30)
            for n in range(turns)
        ]

    for owner in (other, user):
        for c in range(conversations):
            turns_of = thread(f"{owner.username} {c}")
            conversation = conversation_create(user=owner)
            stored = message_create_many(
                conversation=conversation,
                messages=[NewMessage(t.role, t.text) for t in turns_of],
            )
            conversation_remember(
                conversation=conversation,
                history=turns_of[:-2],
                question=turns_of[-2].text,
                reply=stored[-1],
            )
    return user, turns_of, conversation


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=400)
    args = parser.parse_args(argv)
    setup_django()
    import api.conversations as conversations

    user, history, expected = populate(args.turns, args.conversations)
    by_digest = conversations._by_digest

    def compared(**kwargs):
        return None

    def missed(**kwargs):
        return by_digest(**{**kwargs, "digest": "0" * 64})

    ways = {"compared": compared, "digest": by_digest, "digest missed": missed}
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    for n in range(args.rounds + 20):
        names = list(ways) if n % 2 == 0 else list(reversed(ways))
        for name in names:
            conversations._by_digest = ways[name]
            wall, cpu = time.perf_counter(), time.thread_time()
            found = conversations.conversation_matching(user=user, history=history, temporary=False)
            cpu, wall = time.thread_time() - cpu, time.perf_counter() - wall
            assert found == expected, name
            if n >= 20:  # warm-up
                times[name].append((cpu, wall))
    conversations._by_digest = by_digest
    print(
        f"## /v1 match in process: {args.turns} turns, {args.conversations} conversations a "
        f"user, {args.rounds} rounds, load {os.getloadavg()[0]:.1f}\n"
    )
    print("| way | CPU p50 ms | wall p50 ms | wall p90 ms |\n|---|---:|---:|---:|")
    for name, pairs in times.items():
        cpus = sorted(c for c, _ in pairs)
        walls = sorted(w for _, w in pairs)
        p90 = walls[int(len(walls) * 0.9)]
        print(
            f"| {name} | {statistics.median(cpus) * 1000:.3f} | "
            f"{statistics.median(walls) * 1000:.3f} | {p90 * 1000:.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
