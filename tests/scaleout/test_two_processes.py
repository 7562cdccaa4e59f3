"""Two ASGI servers on one Redis channel layer and one PostgreSQL database; two job workers."""

from __future__ import annotations

import itertools
import re
import signal
import subprocess
import sys
import time

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in
from tests.support.live_server import ROOT, ServerProcess, manage
from tests.support.ws_client import ChatSocket, login_cookie, new_conversation, run_async

pytestmark = pytest.mark.scaleout


@pytest.fixture(scope="module")
def two_servers(scaleout_env):
    servers = [ServerProcess(scaleout_env["env"]).start() for _ in range(2)]
    yield servers
    for server in servers:
        server.stop()


def test_a_reply_streamed_by_one_process_reaches_a_tab_on_the_other(
    two_servers, browser, fake_upstream, sql
):
    """Tab A on server 1 sends; tab B on server 2 watches the reply arrive in pieces."""
    first, second = two_servers
    fake_upstream.behaviour.reply = " ".join(f"part{i}" for i in range(30))
    fake_upstream.behaviour.interval = 0.05
    context = browser.new_context()
    tab_a = context.new_page()
    log_in(tab_a, first)
    box = tab_a.get_by_role("textbox", name="Message")
    box.fill("Start a shared conversation")
    box.press("Enter")
    tab_a.wait_for_url(re.compile(r"/c/\d+/$"))
    expect(tab_a.locator('[data-role="assistant"]').last).to_contain_text("part29")
    path = tab_a.url.split(str(first.port), 1)[1]

    tab_b = context.new_page()  # same session cookie: cookies do not depend on the port
    tab_b.goto(f"{second.url}{path}")
    expect(tab_b.get_by_role("textbox", name="Message")).to_be_visible()
    tab_b.wait_for_timeout(500)  # let its websocket join the conversation's group

    box.fill("Tell tab B something")
    box.press("Enter")
    watched = tab_b.locator('[data-role="assistant"]').nth(1)
    expect(watched).to_contain_text("part1")
    partial = watched.inner_text()
    expect(watched).to_contain_text("part29")
    assert "part29" not in partial  # tab B saw the reply while it streamed
    expect(tab_b.locator('[data-role="user"] .content').last).to_have_text("Tell tab B something")
    context.close()
    rows = sql("SELECT role, status FROM chat_message ORDER BY id")
    assert rows == [("user", "complete"), ("assistant", "complete")] * 2


def test_a_tab_on_the_other_process_resumes_a_reply_whose_tab_closed(
    two_servers, fake_upstream, sql
):
    """The tab on server 1 sends and closes; a tab opened on server 2 mid-reply gets a resume
    (asked of server 1 with chat.join) at once, then the reply to its end, stored once."""
    first, second = two_servers
    words = [f"far{i}" for i in range(80)]
    fake_upstream.behaviour.reply = " ".join(words)
    fake_upstream.behaviour.interval = 0.04
    session = login_cookie(first.url, "alice", "alice-password-1")
    conversation = new_conversation(first.url, session)

    async def scenario():
        async with ChatSocket(first.url, session, conversation) as sender:
            await sender.send({"type": "send", "text": "A long one", "client_id": "far-1"})
            await sender.until("chunk")
        began = time.monotonic()
        async with ChatSocket(second.url, session, conversation) as joiner:
            assert joiner.ready["streaming"] is not None
            resume = await joiner.receive(5)
            waited = time.monotonic() - began
            assert resume["type"] == "resume" and resume["id"] == joiner.ready["streaming"]
            rest = await joiner.until("reply_end")
        return resume, rest, waited

    resume, rest, waited = run_async(scenario())
    assert resume["text"] and " ".join(words).startswith(resume["text"])
    assert waited < 2.0, waited
    texts = [resume["text"]] + [f["text"] for f in rest if f["type"] == "snapshot"]
    assert all(b.startswith(a) for a, b in itertools.pairwise(texts)), "never back"
    assert rest[-1]["status"] == "complete" and "far79" in rest[-1]["html"]
    rows = sql(
        "SELECT role, status, content FROM chat_message WHERE conversation_id = %s ORDER BY id",
        (conversation,),
    )
    assert [(r[0], r[1]) for r in rows] == [("user", "complete"), ("assistant", "complete")]
    assert rows[1][2] == " ".join(words)


SEED_RUNS = """
from chat.models import Conversation
from chat.services import NewMessage, conversation_create, message_create_many
from django.contrib.auth import get_user_model
from memory.services import summary_run_start
alice = get_user_model().objects.get(username="alice")
for n in range({count}):
    conversation = conversation_create(user=alice, title=f"jobs {{n}}")
    message_create_many(conversation=conversation, messages=[
        NewMessage("user" if i % 2 == 0 else "assistant", f"note {{n}}.{{i}} about gardening")
        for i in range(6)])
    summary_run_start(conversation=conversation)
"""


def _summary_reply(body):
    return {
        "summary": "gardening notes",
        "topics": ["gardening"],
        "decisions": [],
        "action_items": [],
        "facts": [],
        "open_questions": [],
    }


def test_two_workers_share_jobs_and_lose_none_when_one_is_killed(scaleout_env, fake_upstream, sql):
    """Each job runs once; a worker killed mid-job loses nothing: the other finishes it."""
    count = 8
    fake_upstream.behaviour.json_reply = _summary_reply
    fake_upstream.behaviour.stall_before = 0.6  # each job's model call takes a while
    manage("shell", "-c", SEED_RUNS.format(count=count), env=scaleout_env["env"])
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "db_worker",
                "--queue-name",
                "*",
                "--interval",
                "0.1",
                "--no-reload",
                "--no-startup-delay",
                "--worker-id",
                f"worker-{n}",
            ],
            cwd=ROOT,
            env=scaleout_env["env"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for n in range(2)
    ]
    try:
        deadline = time.monotonic() + 30
        victim = None
        while time.monotonic() < deadline and victim is None:
            running = sql(
                "SELECT worker_ids FROM django_tasks_database_dbtaskresult WHERE status = 'RUNNING'"
            )
            claimed = sql("SELECT count(*) FROM memory_summaryrun WHERE status = 'running'")[0][0]
            # Killed mid-run: only once every taken task's run is claimed (a kill between
            # the two leaves a queued run, recovered by the sweep but never retried).
            if any("worker-0" in ids for (ids,) in running) and claimed >= len(running):
                victim = workers[0]
            time.sleep(0.05)
        assert victim is not None, "worker-0 never started a job"
        victim.send_signal(signal.SIGKILL)  # killed mid-job, no chance to clean up
        victim.wait()

        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            states = dict(sql("SELECT status, count(*) FROM memory_summaryrun GROUP BY status"))
            if states == {"done": count}:
                break
            time.sleep(0.25)
        assert states == {"done": count}, states
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()
    # Exactly one summary version per conversation: no job ran twice.
    versions = sql("SELECT conversation_id, count(*) FROM memory_summary GROUP BY 1")
    assert len(versions) == count and all(n == 1 for _, n in versions)
    attempts = [n for (n,) in sql("SELECT attempts FROM memory_summaryrun")]
    assert sorted(attempts)[-1] == 2 and attempts.count(2) == 1  # the killed job, retried once
