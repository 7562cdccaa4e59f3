"""Scratch databases for benchmarks: one per part of a run, SQLite or PostgreSQL."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit


def pg_admin(url: str, statement: str) -> None:
    import psycopg

    admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(statement)


def scratch_database(base_url: str | None, part: str, workdir: Path) -> tuple[str, Callable]:
    """A database URL for one part of a run and a function that removes the database: a
    SQLite file in ``workdir``, or with ``base_url`` (postgres://...) the database NAME_part."""
    if not base_url:
        return f"sqlite:///{workdir / f'part_{part}.sqlite3'}", lambda: None
    parts = urlsplit(base_url)
    if parts.scheme not in ("postgres", "postgresql", "pgsql"):
        raise SystemExit("--database-url: only postgres:// URLs (SQLite is the default)")
    name = f"{parts.path.lstrip('/') or 'memorychat_bench'}_{part}"
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise SystemExit(f"--database-url: unusable database name {name!r}")
    url = urlunsplit(parts._replace(path=f"/{name}"))
    pg_admin(base_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    pg_admin(base_url, f'CREATE DATABASE "{name}"')
    return url, lambda: pg_admin(base_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def scratch_django(**settings: str) -> None:
    """Django set up in this process on a migrated SQLite file of a new temporary directory,
    without Redis: the in-process benches' app. ``settings``: environment settings on top."""
    os.environ.pop("REDIS_URL", None)
    os.environ.update(
        DATABASE_URL=f"sqlite:///{tempfile.mkdtemp()}/db.sqlite3",
        DJANGO_SETTINGS_MODULE="config.settings",
        ALLOWED_HOSTS="localhost",
        SECRET_KEY="bench-" * 10,
        **settings,
    )
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
