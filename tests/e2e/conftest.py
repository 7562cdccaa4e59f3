"""Browser tests: Playwright driving Debian's chromium against a real daphne process."""

from __future__ import annotations

import sqlite3

import pytest
from playwright.sync_api import expect

from tests.support.fake_llm import Behaviour, FakeLLM
from tests.support.live_server import ServerProcess, create_user, manage, project_env

PASSWORD = "alice-password-1"

pytestmark = pytest.mark.e2e
# Real servers, a real browser and (scale-out) two processes on PostgreSQL + Redis: on a busy
# 2-core machine a first turn can take longer than Playwright's 5 s default to show.
expect.set_options(timeout=15_000)

# Two shared, busy cores: a first turn can take several seconds to start.
expect.set_options(timeout=15_000)


@pytest.fixture(scope="session")
def fake_upstream():
    server = FakeLLM(Behaviour()).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def live_env(tmp_path_factory, fake_upstream):
    db = tmp_path_factory.mktemp("e2e") / "db.sqlite3"
    env = project_env(
        DATABASE_URL=f"sqlite:///{db}",
        OPENAI_API_KEY="test-key",
        OPENAI_BASE_URL=fake_upstream.base_url,
        OPENAI_MAX_RETRIES="0",
    )
    manage("migrate", "--noinput", env=env)
    create_user(env, "alice", PASSWORD)
    return {"env": env, "db": db}


@pytest.fixture(scope="session")
def app_server(live_env):
    server = ServerProcess(live_env["env"]).start()
    yield server
    server.stop()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture
def db_rows(live_env):
    def query(sql: str, params=()):
        with sqlite3.connect(live_env["db"]) as connection:
            return connection.execute(sql, params).fetchall()

    return query


def log_in(page, app_server, username="alice", password=PASSWORD):
    page.goto(f"{app_server.url}/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{app_server.url}/")


def open_report(reply):
    """Open a reply's "What the model saw" and wait for its body (fetched when first opened)."""
    reply.locator(".context-report summary").click()
    expect(reply.locator(".context-report .report-totals")).to_be_visible()
    return reply.locator(".context-report")
