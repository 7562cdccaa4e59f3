"""The query plans of one turn's context build, in a project and outside it (issue 37).

    .venv/bin/python bench/scope_plans.py                    # scratch SQLite
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/scopeplans .venv/bin/python \\
        bench/scope_plans.py                                 # a scratch PostgreSQL database

One user with ``--earlier`` messages outside any project and ``--project`` in a project's
conversations (the turn-setup bench's corpus). Every statement the context build of a turn
runs (``memory.context.build``: history, pinned facts, the search's stats, candidates and rows,
the project's instructions) is captured for a conversation in the project and one outside
it, with the same message, and each is explained (SQLite's ``EXPLAIN QUERY PLAN``,
PostgreSQL's ``EXPLAIN (ANALYZE, BUFFERS)``). It prints the statements side by side, so a scan
or a sort the scope adds shows. The PostgreSQL database is dropped and created again.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _setup(database_url: str | None) -> None:
    if database_url is None:
        scratch = tempfile.mkdtemp(prefix="scope-plans-")
        os.environ["DATABASE_URL"] = f"sqlite:///{scratch}/db.sqlite3"
    else:
        import psycopg

        name = database_url.rsplit("/", 1)[1]
        with psycopg.connect(database_url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{name}"')
            c.execute(f'CREATE DATABASE "{name}"')
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings_bench"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def _seed(earlier: int, in_project: int):
    from django.contrib.auth import get_user_model

    from bench.corpus import chat_messages
    from chat import services
    from chat.models import Conversation
    from contextwindow.tokens import count_tokens
    from projects.models import Project

    user = get_user_model().objects.create_user("plans")
    project = Project.objects.create(user=user, name="Plans")
    seeded = earlier + in_project
    texts = chat_messages(40 + seeded, lambda s: count_tokens(s, "gpt-4o-mini"))
    for start in range(0, seeded, 50):
        conversation = services.conversation_create(user=user)
        if start >= earlier:
            Conversation.objects.filter(pk=conversation.pk).update(project=project)
        services.message_create_many(
            conversation=conversation,
            messages=[services.NewMessage(r, t) for r, t in texts[start : start + 50]],
        )
    question = next(t for r, t in texts[seeded:] if r == "user")
    inside = services.conversation_create(user=user)
    Conversation.objects.filter(pk=inside.pk).update(project=project)
    outside = services.conversation_create(user=user)
    # Past a new session's first turns, as most turns are: pinned facts, not resume items.
    for conversation in (inside, outside):
        services.message_create_many(
            conversation=conversation,
            messages=[services.NewMessage(r, t) for r, t in texts[seeded : seeded + 8]],
        )
    return Conversation.objects.get(pk=inside.pk), outside, question


def _statements(conversation, question) -> list[str]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from chat.services import message_create
    from memory.context import build

    said = message_create(conversation=conversation, role="user", content=question)
    build(conversation=conversation, user_text=question, user_message=said)  # warm the caches
    with CaptureQueriesContext(connection) as captured:
        build(conversation=conversation, user_text=question, user_message=said)
    return [q["sql"] for q in captured.captured_queries]


def _explain(sql: str) -> str:
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("EXPLAIN QUERY PLAN " + sql)
            return "\n".join(f"    {row[3]}" for row in cursor.fetchall())
        cursor.execute("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, SUMMARY ON) " + sql)
        return "\n".join(f"    {row[0]}" for row in cursor.fetchall())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--earlier", type=int, default=20000)
    parser.add_argument("--project", type=int, default=2000)
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL") or None
    _setup(url if url and url.startswith("postgres") else None)
    from django.db import connection

    inside, outside, question = _seed(args.earlier, args.project)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    print(f"{connection.vendor}: {args.earlier} messages outside, {args.project} in the project")
    print(f"question: {question[:100]!r}\n")
    for label, conversation in (("in the project", inside), ("outside", outside)):
        statements = _statements(conversation, question)
        print(f"== {label}: {len(statements)} statements")
        for sql in statements:
            print(f"-- {sql[:400]}")
            print(_explain(sql))
        print()


if __name__ == "__main__":
    main()
