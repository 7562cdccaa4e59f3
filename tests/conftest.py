"""Fixtures shared by every test: named users (alice owns, bob does not, staff reviews)."""

import inspect
import os

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import caches

pytest_plugins = ["tests.support.keyed_server"]


@pytest.fixture(autouse=True)
def fresh_cache():
    """Abuse-limit counters and search counts live in the caches, and the stored vectors a
    search compares are held per process: each test starts empty (a rolled-back database
    gives the next test's rows the same ids)."""
    from memory.search import vectors

    for cache in caches.all():
        cache.clear()
    vectors.forget_all()


@pytest.fixture(autouse=True)
def replies_end(request):
    """A reply outlives its tab (chat.live): an async test ends once its replies, their
    after-turn work included, have ended, before its database is flushed. Not for the
    others (a browser test's thread has Playwright's loop running)."""
    if inspect.iscoroutinefunction(request.function):
        request.getfixturevalue("_replies_settled")


@pytest.fixture
async def _replies_settled():
    import asyncio

    from chat import live

    yield
    async with asyncio.timeout(30):
        await live.settle()


CHROMIUM = "/usr/bin/chromium"

# The real-server suite needs servers that `make test-llama` builds: collected only there.
collect_ignore = [] if os.environ.get("MEMORYCHAT_REAL_SERVERS") else ["realservers"]


def pytest_sessionfinish(session, exitstatus):
    """Django drops the SQLite test database but not its WAL side files."""
    import os
    from pathlib import Path

    for leftover in Path(__file__).resolve().parent.parent.glob(f"var/test-{os.getpid()}.*"):
        leftover.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The chat's worker threads keep their own PostgreSQL connections; close them before
    Django drops the test database, or the drop fails and the database is left behind."""
    yield
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with django_db_blocker.unblock(), connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )


@pytest.fixture(scope="module")
def browser():
    """One headless chromium per test module. Module, not session: while Playwright's sync
    driver runs, the thread has a running event loop and later async tests could not start
    theirs. Missing chromium fails the test, never skips it."""
    import shutil

    if not shutil.which(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: run `make browser` (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        yield browser
        browser.close()


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user("alice", password="alice-password-1")


@pytest.fixture
def bob(db):
    return get_user_model().objects.create_user("bob", password="bob-password-1")


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_user("sam", password="sam-password-1", is_staff=True)


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client
