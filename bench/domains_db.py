"""Benchmark: what learning the level per subject adds to the after-turn work.

    .venv/bin/python bench/domains_db.py [--rounds 5] [--per-round 200]

SQLite in a temporary file (the project's settings for benchmarks). A user's messages from
the held set (``bench/data/domain_levels.json``) plus as many with no subject ("thanks!",
"ok, and tomorrow?"), learned one by one with ``profiles.expertise.domains_observe`` as
``profiles.services.profiles_observe_messages`` calls it after each turn (with the profile
the batch read for the style). Per round, the median wall time per call, for
a message with a subject (rows read and written under the profile's lock) and without (only
the reading, no query); the report gives the rounds' medians.
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

PLAIN = ["thanks!", "ok, and tomorrow?", "sounds good, go on", "can you say that shorter?"]


def setup(path: str) -> None:
    os.environ["DATABASE_URL"] = "sqlite:///" + path
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings_bench")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def run(args) -> None:
    from django.contrib.auth import get_user_model

    from bench.domains import HELD
    from profiles.expertise import domains_observe
    from profiles.selectors import profiles_get_many

    texts = [t for levels in HELD.values() for m in levels.values() for t in m]
    user = get_user_model().objects.create_user("bench-domains")
    with_subject, without = [], []
    for _ in range(args.rounds):
        timed = {True: [], False: []}
        for n in range(args.per_round):
            text = texts[n % len(texts)] if n % 2 == 0 else PLAIN[n % len(PLAIN)]
            # The after-turn batch has read the profile already (for the style): not timed.
            profile = profiles_get_many([user]).get(user.pk)
            start = time.perf_counter()
            domains_observe(user=user, texts=[text], profile=profile)
            timed[n % 2 == 0].append((time.perf_counter() - start) * 1e3)
        with_subject.append(statistics.median(timed[True]))
        without.append(statistics.median(timed[False]))
    print(
        f"domains_observe per turn, median of {args.rounds} rounds' medians: "
        f"{statistics.median(with_subject):.3f} ms with a subject "
        f"(rounds {', '.join(f'{v:.3f}' for v in with_subject)}), "
        f"{statistics.median(without):.3f} ms without"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--per-round", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="domains-db-") as tmp:
        setup(str(Path(tmp) / "db.sqlite3"))
        run(args)


if __name__ == "__main__":
    main()
