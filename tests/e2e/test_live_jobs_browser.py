"""What the job worker makes in the background (a model's title, a summary run's "Remembered"
notice) reaches the open tab live on the one-machine default of `make run`: the in-memory
channel layer (no Redis) and the job worker as a process of its own, so the worker's own frames
reach no tab and the server process brings them (chat.job_watch)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from playwright.sync_api import expect

from chat.titles import TITLE_PROMPT
from tests.e2e.conftest import PASSWORD, log_in
from tests.memory.test_llm_memory import extraction_json
from tests.support.live_server import ROOT, create_user, manage, stop_process

pytestmark = pytest.mark.e2e
TITLE = "Nginx in front of Django"
QUESTION = "How do I put nginx in front of a Django app that serves websockets?"


@pytest.fixture
def job_worker(live_env, tmp_path):
    if live_env["env"].get("REDIS_URL"):
        pytest.skip("on Redis the worker's own frame reaches the tabs")
    # The jobs the session's earlier tests queued (no worker ran for them) are not this test's.
    manage(
        "shell",
        "-c",
        "from django_tasks_db.models import DBTaskResult; "
        "DBTaskResult.objects.filter(status='READY').delete()",
        env=live_env["env"],
    )
    log = (tmp_path / "worker.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "manage.py", "job_worker", "--queue-name", "*", "--interval", "0.2"],
        cwd=ROOT,
        env=live_env["env"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    yield process
    stop_process(process)
    log.close()


@pytest.fixture
def titles_from_the_model(fake_upstream):
    behaviour = fake_upstream.behaviour
    before = behaviour.json_reply

    def answer(body):
        if body["messages"][0]["content"] == TITLE_PROMPT:
            return f'Title: "{TITLE}."'
        if body.get("response_format"):
            return extraction_json(body)  # a summary run's extraction
        return before(body) if before else behaviour.reply

    behaviour.json_reply = answer
    yield
    behaviour.json_reply = before


def test_the_models_title_reaches_the_open_tab_without_a_reload(
    page, app_server, job_worker, titles_from_the_model
):
    log_in(page, app_server)
    box = page.get_by_role("textbox", name="Message")
    box.fill(QUESTION)
    box.press("Enter")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    expect(page.locator('[data-role="assistant"] .message-tools').last).to_be_attached()
    url = page.url

    heading = page.locator("#conversation-title")
    expect(heading).to_have_text(TITLE, timeout=30_000)
    expect(page.locator(".sidebar li.current")).to_contain_text(TITLE)
    expect(page).to_have_title(f"{TITLE} · memorychat")
    assert page.url == url  # the same page: no reload
    assert job_worker.poll() is None


# Six exchanges: the twelfth message makes a summary run due (memory.services.summaries).
EXCHANGES = [
    "We are planning the product launch for the spring.",
    "Sam thinks PostgreSQL scales better than MySQL for the launch.",
    "So we will use PostgreSQL for the launch database.",
    "Sam also has to book the venue before December.",
    "The venue should hold two hundred people.",
    "That is all for the launch plans today.",
]


def test_a_summary_runs_notice_reaches_the_open_tab_without_a_reload(
    page, app_server, live_env, fake_upstream, job_worker, titles_from_the_model
):
    # Short replies: an earlier test's long one would make every exchange a long tail.
    fake_upstream.behaviour.reply, fake_upstream.behaviour.interval = "Noted.", 0.0
    # A user of its own: alice's earlier tests' conversations and memory are not this test's.
    create_user(live_env["env"], "lena", PASSWORD)
    log_in(page, app_server, username="lena")
    box = page.get_by_role("textbox", name="Message")
    for n, text in enumerate(EXCHANGES, start=1):
        box.fill(text)
        box.press("Enter")
        expect(page.locator('[data-role="assistant"] .message-tools')).to_have_count(n)
    url = page.url

    notice = page.locator(".memory-notice", has_text="Use PostgreSQL")
    expect(notice).to_be_visible(timeout=60_000)
    expect(notice).to_contain_text("Book the venue")
    assert page.url == url  # the same page: no reload
    assert job_worker.poll() is None
