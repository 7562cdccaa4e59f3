"""Scale-out: several server and worker processes on one PostgreSQL database and one Redis.

These tests need PostgreSQL at 127.0.0.1:5432 (trust auth) and Redis at 127.0.0.1:6379; when
either is missing they fail, never skip.
"""

from __future__ import annotations

import os
import uuid

import psycopg
import pytest
import redis

from tests.support.fake_llm import Behaviour, FakeLLM
from tests.support.live_server import create_user, manage, project_env

PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
# SCALEOUT_REDIS_URL: another database number, for engineers sharing one Redis.
REDIS = os.environ.get("SCALEOUT_REDIS_URL", "redis://127.0.0.1:6379/0")

pytestmark = pytest.mark.scaleout


@pytest.fixture(scope="module")
def fake_upstream():
    server = FakeLLM(Behaviour()).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def scaleout_env(fake_upstream, tmp_path_factory):
    redis.Redis.from_url(REDIS).ping()  # fails loudly if Redis is down
    name = f"memorychat_scaleout_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    env = project_env(
        DEBUG="false",
        SECRET_KEY="scaleout-test-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz",
        DATABASE_URL=f"postgres://postgres@127.0.0.1:5432/{name}",
        REDIS_URL=REDIS,
        REDIS_PREFIX=f"test-{name}",
        OPENAI_API_KEY="test-key",
        OPENAI_BASE_URL=fake_upstream.base_url,
        OPENAI_MAX_RETRIES="0",
        SUMMARY_RUN_STALE_SECONDS="2",
        SECURE_SSL_REDIRECT="false",
        SESSION_COOKIE_SECURE="false",
        CSRF_COOKIE_SECURE="false",
        STATIC_ROOT=str(tmp_path_factory.mktemp("static")),
    )
    manage("migrate", "--noinput", env=env)
    manage("collectstatic", "--noinput", env=env)
    create_user(env, "alice", "alice-password-1")
    yield {"env": env, "database": name, "url": env["DATABASE_URL"]}
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def sql(scaleout_env):
    def query(statement: str, params=()):
        with psycopg.connect(scaleout_env["url"]) as connection:
            return connection.execute(statement, params).fetchall()

    return query
