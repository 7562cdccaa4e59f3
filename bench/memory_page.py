"""Benchmark of the user's Memory page with 10,000 memories for one user.

Seeds a scratch SQLite file (or ``--database-url postgres://...``, a database the run may
migrate and fill) with one user's 6,000 facts, 2,000 decisions and 2,000 action items (through
``bulk_create``: the triggers fill the search index as in production) and times, through
Django's test ``Client`` signed in as that user, the Memory page (first page, a deep page,
filtered by kind, by category, searched) beside a baseline in the same run (the profile
page), median and p95 over interleaved repetitions. Target: p95 under 100 ms.

    .venv/bin/python bench/memory_page.py
    .venv/bin/python bench/memory_page.py --repeat 30
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
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

WORDS = ["garden", "invoice", "lisbon", "piano", "budget", "sprint", "dentist", "kayak"]
WORDS += ["novel", "server", "python", "sourdough"]


def setup(database_url: str) -> None:
    os.environ.update(DATABASE_URL=database_url, DJANGO_SETTINGS_MODULE="bench.settings_bench")
    import django

    django.setup()
    from django.conf import settings

    settings.DEBUG = False
    settings.ALLOWED_HOSTS = ["*"]


def seed(n: int):
    from django.contrib.auth import get_user_model

    from chat.services import conversation_create, message_create
    from memory.models import ActionItem, Decision, Fact

    user = get_user_model().objects.create_user("bench", password="bench-password-1")  # noqa: S106 — a scratch database
    conversation = conversation_create(user=user, title="Bench")
    said = message_create(conversation=conversation, role="user", content="hello")
    categories = [c for c, _ in Fact.Category.choices]

    def text(i: int) -> str:
        return f"memory {i} about {WORDS[i % len(WORDS)]} and {WORDS[(i * 7) % len(WORDS)]}"

    facts = [
        Fact(user=user, conversation=conversation, text=text(i), category=categories[i % 6],
             dedupe_key=f"f{i}")
        for i in range(n * 6 // 10)
    ]  # fmt: skip
    decisions = [
        Decision(user=user, conversation=conversation, what=text(i), dedupe_key=f"d{i}")
        for i in range(n * 2 // 10)
    ]
    actions = [
        ActionItem(user=user, conversation=conversation, what=text(i), dedupe_key=f"a{i}")
        for i in range(n * 2 // 10)
    ]
    for model, rows in ((Fact, facts), (Decision, decisions), (ActionItem, actions)):
        created = model.objects.bulk_create(rows, batch_size=2000)
        through = model.source_messages.through
        owner = f"{model._meta.model_name}_id"
        through.objects.bulk_create(
            [through(**{owner: row.pk, "message_id": said.pk}) for row in created],
            batch_size=2000,
        )
    return user


def measure(user, repeat: int) -> dict[str, list[float]]:
    from django.test import Client

    client = Client()
    client.force_login(user)
    cases = {
        "profile page (baseline)": "/profile/",
        "memory page": "/memory/",
        "memory page, page 200": "/memory/?page=200",
        "memory page, facts": "/memory/?kind=fact",
        "memory page, category": "/memory/?category=personal",
        "memory page, searched": "/memory/?q=lisbon+piano",
        "memory page, searched rare": "/memory/?q=kayak+sourdough",
    }
    times: dict[str, list[float]] = {name: [] for name in cases}
    for url in cases.values():  # warm-up
        assert client.get(url).status_code == 200, url
    names = list(cases)
    for r in range(repeat):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            began = time.perf_counter()
            response = client.get(cases[name])
            times[name].append((time.perf_counter() - began) * 1000)
            assert response.status_code == 200
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--database-url")
    args = parser.parse_args()
    scratch = None
    url = args.database_url
    if url is None:
        scratch = tempfile.mkdtemp(prefix="memory-page-bench-")
        url = f"sqlite:///{scratch}/bench.sqlite3"
    setup(url)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    user = seed(args.memories)
    from django.db import connection

    if connection.vendor == "postgresql":  # what autovacuum does after a bulk load
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")
    times = measure(user, args.repeat)
    print(f"{args.memories:,} memories for one user, {args.repeat} requests each")
    print(f"{'page':32} {'p50 ms':>8} {'p95 ms':>8}")
    for name, values in times.items():
        values.sort()
        p95 = values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]
        print(f"{name:32} {statistics.median(values):8.1f} {p95:8.1f}")


if __name__ == "__main__":
    main()
