"""Benchmark: the CPU of /v1's trip before the turn (the key, the model, the conversation
matched from the history sent), in process on a temporary SQLite database: a user with a
40-turn /v1 conversation and 40 newer ones of one exchange each, all ending in the same reply
(a model's stock answer, as the fake upstream's). ``--profile`` adds a pyinstrument profile.
Run from a checkout's root to compare trees (issue 38):

    cd DIR && .venv/bin/python bench/api_pretrip.py
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time

PASSWORD = "bench-password-1"  # noqa: S105 (a throwaway user of a temporary database)
REPLY = "the same stock reply " * 20


def setup_django() -> None:
    sys.path.insert(0, os.getcwd())
    from bench.scratch import scratch_django

    scratch_django(
        DEBUG="true", OPENAI_API_KEY="bench-key", OPENAI_BASE_URL="http://127.0.0.1:9/v1"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=60)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    setup_django()
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from api import views, wire
    from chat.services import NewMessage, conversation_create, message_create_many
    from profiles.keys import key_create

    user = get_user_model().objects.create_user("bench", password=PASSWORD)
    secret = key_create(user=user, name="bench").secret
    continued = conversation_create(user=user)
    history = []
    for n in range(20):
        history += [wire.Turn("user", f"Continued {n}"), wire.Turn("assistant", REPLY)]
    message_create_many(
        conversation=continued, messages=[NewMessage(t.role, t.text) for t in history]
    )
    for n in range(40):
        other = conversation_create(user=user)
        turns = [NewMessage("user", f"New {n}"), NewMessage("assistant", REPLY)]
        message_create_many(conversation=other, messages=turns)

    fields = {f.name for f in dataclasses.fields(wire.ChatRequest)}
    defaults = {"stream": True, "temporary": False, "include_usage": False, "project": None}
    request = wire.ChatRequest(
        model=settings.OPENAI_MODEL,
        text="next",
        history=history,
        **{name: value for name, value in defaults.items() if name in fields},
    )
    times, matched = [], 0
    for _ in range(args.calls):
        started = time.process_time()
        _, conversation, created = views._turn_for(secret, request)
        times.append((time.process_time() - started) * 1000)
        matched += conversation.pk == continued.pk
        if created:
            conversation.delete()
    kept = times[10:]
    print(
        f"continued (40 turns): matched {matched}/{args.calls}; CPU ms p50"
        f" {statistics.median(kept):.2f}, mean {statistics.fmean(kept):.2f}"
    )
    if args.profile:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0002)
        profiler.start()
        for _ in range(50):
            views._turn_for(secret, request)
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
