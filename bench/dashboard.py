"""Benchmark of the staff memory dashboard at a realistic size.

Seeds a scratch database (a temporary SQLite file by default; ``--database-url postgres://...``
creates and drops a scratch PostgreSQL database) with 100,000 memories across 1,000 users
(60k facts, 20k decisions, 20k action items, each with its creation history record), 2,000
conversations and 20,000 messages, all with ``bulk_create`` (the full-text triggers fill the
search index as they would in production). Then it times the dashboard pages through Django's
test ``Client`` — the whole middleware stack, signed in as staff, rendered templates — with
median and p95 over repeated requests, the cases interleaved in a rotating order after a
warm-up. Target: every page within 100 ms.

    .venv/bin/python bench/dashboard.py                   # 100k memories, SQLite
    .venv/bin/python bench/dashboard.py --quick           # 20k memories, fewer repetitions
    .venv/bin/python bench/dashboard.py --database-url postgres://postgres@127.0.0.1:5432/x
    .venv/bin/python bench/dashboard.py --analyze         # run ANALYZE after seeding
    .venv/bin/python bench/dashboard.py --index "CREATE INDEX ..."  # try an extra index
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.data import load_json  # noqa: E402

TARGET_MS = 100.0
UNUSABLE = "!"  # an unusable password hash
_TEXTS = load_json("dashboard.json")  # bench/data/dashboard.json
WORDS = _TEXTS["words"]
SUBJECTS = _TEXTS["subjects"]
RARE_WORD = "zeppelin"  # in about 0.1% of memories: a selective search
# The indexes the dashboard asks for (see the final report of issue 6): the lists sort by
# recency, and a deep page walks this index instead of sorting every row.
PROPOSED_INDEXES = {
    "fact_updated": ("memory_fact", "updated_at DESC, id DESC"),
    "decision_updated": ("memory_decision", "updated_at DESC, id DESC"),
    "action_updated": ("memory_actionitem", "updated_at DESC, id DESC"),
}


def _pg_admin(url: str, statement: str) -> None:
    import psycopg

    admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(statement)


def setup_django(database_url: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=database_url,
        DEBUG="true",  # read as on for the development defaults; switched off below
        ALLOWED_HOSTS="testserver,localhost",
        CREATE_DEMO_USER="false",
        OPENAI_API_KEY="",
        OPENAI_EMBEDDING_MODEL="",
        LOG_LEVEL="WARNING",
    )
    import django
    from django.conf import settings

    django.setup()
    settings.DEBUG = False  # no debug cursor: queries are not formatted and kept while timed


def _sentence(rng: random.Random, n: int) -> str:
    words = rng.sample(WORDS, n)
    if rng.random() < 0.001:
        words[rng.randrange(n)] = RARE_WORD
    return " ".join(words).capitalize() + "."


def seed(*, users: int, memories: int, rng: random.Random) -> dict:
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from chat.models import Conversation, Message
    from memory.models import ActionItem, Decision, Fact

    User = get_user_model()
    now = timezone.now()

    def ago(days_max: float):
        return now - timedelta(days=rng.random() * days_max)

    staff = User.objects.create_user("bench-staff", is_staff=True)  # unusable password
    people = User.objects.bulk_create(
        User(username=f"user{i:04}", password=UNUSABLE, date_joined=ago(400)) for i in range(users)
    )
    conversations = Conversation.objects.bulk_create(
        Conversation(user=u, title=_sentence(rng, 4)[:60], created_at=ago(300), updated_at=ago(30))
        for u in people
        for _ in range(2)
    )
    by_user: dict[int, list[int]] = {}
    for c in conversations:
        by_user.setdefault(c.user_id, []).append(c.pk)
    Message.objects.bulk_create(
        (
            Message(
                conversation=c,
                role="user" if i % 2 == 0 else "assistant",
                content=_sentence(rng, 12),
                token_count=14,
                created_at=ago(300),
            )
            for c in conversations
            for i in range(10)
        ),
        batch_size=2000,
    )
    n_facts, n_decisions = memories * 6 // 10, memories * 2 // 10
    n_actions = memories - n_facts - n_decisions

    def owner(i: int):
        user = people[i % users]
        return user, rng.choice(by_user[user.pk])

    facts = []
    for i in range(n_facts):
        user, conversation_id = owner(i)
        updated = ago(365)
        facts.append(
            Fact(
                user=user,
                conversation_id=conversation_id,
                category=rng.choice(Fact.Category.values),
                subject=rng.choice(SUBJECTS),
                text=_sentence(rng, 9),
                importance=round(rng.random(), 2),
                pinned=rng.random() < 0.03,
                status=Fact.Status.SUPERSEDED if rng.random() < 0.15 else Fact.Status.ACTIVE,
                dedupe_key=f"f{i}",
                created_at=updated - timedelta(days=rng.random() * 30),
                updated_at=updated,
            )
        )
    decisions, actions = [], []
    for i in range(n_decisions):
        user, conversation_id = owner(i)
        updated = ago(365)
        decisions.append(
            Decision(
                user=user,
                conversation_id=conversation_id,
                what=_sentence(rng, 7),
                rationale=_sentence(rng, 6),
                status=rng.choice(Decision.Status.values),
                dedupe_key=f"d{i}",
                created_at=updated,
                updated_at=updated,
            )
        )
    for i in range(n_actions):
        user, conversation_id = owner(i)
        updated = ago(365)
        actions.append(
            ActionItem(
                user=user,
                conversation_id=conversation_id,
                what=_sentence(rng, 7),
                owner=rng.choice(["", "Alice", "Bob", "Sam"]),
                due_date=(now + timedelta(days=rng.randint(-60, 90))).date()
                if rng.random() < 0.7
                else None,
                status=rng.choice(ActionItem.Status.values),
                dedupe_key=f"a{i}",
                created_at=updated,
                updated_at=updated,
            )
        )
    for model, rows in ((Fact, facts), (Decision, decisions), (ActionItem, actions)):
        created = model.objects.bulk_create(rows, batch_size=2000)
        for row in created:
            row._history_date = row.created_at  # each creation recorded when it happened
        model.history.bulk_history_create(created, batch_size=2000)
    return {
        "staff": staff,
        "users": users,
        "conversations": len(conversations),
        "messages": len(conversations) * 10,
        "facts": n_facts,
        "decisions": n_decisions,
        "action_items": n_actions,
        "sample_user": people[42 % users].username,
        "sample_user_id": people[42 % users].pk,
        "sample_conversation": conversations[84 % len(conversations)].pk,
    }


def cases(world: dict, *, memories: int) -> list[tuple[str, str]]:
    pages = -(-world["facts"] // 50)
    deep = max(1, pages // 2)  # the middle page of the facts
    user = world["sample_user"]
    return [
        ("facts list, page 1", "/staff/memories/"),
        ("facts list, HTMX table only", "/staff/memories/?kind=fact&__htmx=table"),
        (f"facts list, deep page {deep}", f"/staff/memories/?page={deep}"),
        (f"facts list, last page {pages}", f"/staff/memories/?page={pages}"),
        ("search 'deadline' (common)", "/staff/memories/?q=deadline"),
        ("search 'project budget'", "/staff/memories/?q=project+budget"),
        (f"search '{RARE_WORD}' (rare)", f"/staff/memories/?q={RARE_WORD}"),
        ("search 'deadl' (prefix)", "/staff/memories/?q=deadl"),
        ("search, superseded only", "/staff/memories/?q=deadline&status=superseded"),
        (
            "filter user+status+category",
            f"/staff/memories/?user={user}&status=active&category=project",
        ),
        ("filter user + search", f"/staff/memories/?user={user}&q=deadline"),
        ("filter pinned, by importance", "/staff/memories/?pinned=yes&sort=-importance"),
        ("filter updated in the last 30 days", "/staff/memories/?updated_from=" + _days_ago(30)),
        ("decisions list", "/staff/memories/?kind=decision"),
        ("action items by due date", "/staff/memories/?kind=action_item&sort=due_date"),
        ("users list", "/staff/users/"),
        ("users search", "/staff/users/?q=user004"),
        ("user page", f"/staff/users/{world['sample_user_id']}/"),
        ("conversation page", f"/staff/conversations/{world['sample_conversation']}/"),
        ("changes (audit log)", "/staff/changes/"),
        ("overview", "/staff/"),
    ]


def proposed_index_statements(connection) -> list[str]:
    """CREATE INDEX for each proposed index whose name the schema does not have yet."""
    statements = []
    for name, (table, columns) in PROPOSED_INDEXES.items():
        with connection.cursor() as cursor:
            existing = connection.introspection.get_constraints(cursor, table)
        if name not in existing:
            statements.append(f"CREATE INDEX {name} ON {table} ({columns})")
    return statements


def _days_ago(days: int) -> str:
    from django.utils import timezone

    return (timezone.localdate() - timedelta(days=days)).isoformat()


def time_requests(world: dict, case_list, *, reps: int, warmup: int):
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client()
    client.force_login(world["staff"])

    def get(url: str):
        headers = {}
        if url.endswith("&__htmx=table"):
            url = url.removesuffix("&__htmx=table")
            headers = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "memory-table"}
        response = client.get(url, **headers)
        if response.status_code != 200:
            raise SystemExit(f"{url}: HTTP {response.status_code}")
        return response

    info = {}
    for name, url in case_list:
        with CaptureQueriesContext(connection) as queries:
            response = get(url)
        found = re.search(rb'data-count="(\d+)"', response.content)
        info[name] = (len(queries), int(found.group(1)) if found else "")
    for _ in range(warmup):
        for _name, url in case_list:
            get(url)
    samples: dict[str, list[float]] = {name: [] for name, _ in case_list}
    for round_number in range(reps):
        shift = round_number % len(case_list)
        for name, url in case_list[shift:] + case_list[:shift]:
            start = time.perf_counter()
            get(url)
            samples[name].append((time.perf_counter() - start) * 1000)
    return samples, info


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, round(0.95 * len(ordered)) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1_000)
    parser.add_argument("--reps", type=int, default=30, help="timed requests per page")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="20k memories, 10 repetitions")
    parser.add_argument("--database-url", help="postgres://... (a scratch database is made)")
    parser.add_argument("--analyze", action="store_true", help="run ANALYZE after seeding")
    parser.add_argument("--index", action="append", default=[], help="extra SQL run after seeding")
    parser.add_argument(
        "--proposed-indexes",
        action="store_true",
        help="create the indexes the dashboard asks for, unless a migration already did",
    )
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    if args.quick:
        args.memories, args.reps = 20_000, 10

    tmp = Path(tempfile.mkdtemp(prefix="dashboard-bench-"))
    scratch = None
    if args.database_url:
        parts = urlsplit(args.database_url)
        if parts.scheme not in ("postgres", "postgresql"):
            raise SystemExit("--database-url: only postgres:// URLs (SQLite is the default)")
        scratch = f"mc_dashboard_bench_{os.getpid()}"
        _pg_admin(args.database_url, f'CREATE DATABASE "{scratch}"')
        url = urlunsplit(parts._replace(path=f"/{scratch}"))
    else:
        url = f"sqlite:///{tmp / 'dashboard.sqlite3'}"
    try:
        setup_django(url)
        from django.core.management import call_command
        from django.db import connection

        call_command("migrate", verbosity=0)
        rng = random.Random(args.seed)
        started = time.perf_counter()
        world = seed(users=args.users, memories=args.memories, rng=rng)
        seeding = time.perf_counter() - started
        with connection.cursor() as cursor:
            if args.proposed_indexes:
                args.index += proposed_index_statements(connection)
            for statement in args.index:
                cursor.execute(statement)
            if args.analyze:
                cursor.execute("ANALYZE")
        case_list = cases(world, memories=args.memories)
        samples, info = time_requests(world, case_list, reps=args.reps, warmup=args.warmup)
        report(args, world, seeding, connection.vendor, samples, info, case_list)
    finally:
        from django.db import connections

        connections.close_all()
        if scratch:
            _pg_admin(args.database_url, f'DROP DATABASE IF EXISTS "{scratch}"')
        shutil.rmtree(tmp, ignore_errors=True)


def report(args, world, seeding, vendor, samples, info, case_list) -> None:
    import django

    total = world["facts"] + world["decisions"] + world["action_items"]
    print("# Staff dashboard benchmark\n")
    print(
        f"{vendor}, {world['users']} users, {world['conversations']} conversations, "
        f"{world['messages']} messages, {total} memories ({world['facts']} facts, "
        f"{world['decisions']} decisions, "
        f"{world['action_items']} action items); seeded in {seeding:.1f} s"
        f"{'; ANALYZE run' if args.analyze else ''}"
        f"{'; extra: ' + '; '.join(args.index) if args.index else ''}."
    )
    print(
        f"Python {platform.python_version()}, Django {django.get_version()}, "
        f"{os.cpu_count()} CPUs. {args.reps} timed requests a page after {args.warmup} warm-up "
        f"rounds, pages interleaved. Target: {TARGET_MS:.0f} ms.\n"
    )
    print("| page | rows matched | queries | median ms | p95 ms | max ms | within target |")
    print("|---|---:|---:|---:|---:|---:|:---:|")
    worst = 0.0
    for name, _url in case_list:
        values = samples[name]
        queries, matched = info[name]
        median, high = statistics.median(values), p95(values)
        worst = max(worst, high)
        ok = "yes" if high <= TARGET_MS else "**no**"
        print(
            f"| {name} | {matched} | {queries} | {median:.1f} | {high:.1f} "
            f"| {max(values):.1f} | {ok} |"
        )
    print(f"\nSlowest p95: {worst:.1f} ms.")


if __name__ == "__main__":
    main()
