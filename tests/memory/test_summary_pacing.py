"""Background requests of their own (issue 42, item 3): summary requests have their own timeout,
a run keeps every attempt's error, and runs are paced so that a one-slot server keeps its slot
for the chat (a run waits for the user's streaming reply; runs start at least an interval
apart; a long message alone starts none)."""

import time

import pytest

from chat.models import Message
from chat.services import NewMessage, message_create, message_create_many
from memory import services
from memory.models import SummaryRun
from tests.memory.test_llm_memory import extraction_json
from tests.support.fake_llm import Behaviour, FakeLLM

pytestmark = pytest.mark.django_db


@pytest.fixture
def fake_llm(fake_llm):
    fake_llm.behaviour.json_reply = extraction_json
    return fake_llm


def chat(conversation, n=2, text="I'm Sam; we use PostgreSQL."):
    message_create_many(
        conversation=conversation,
        messages=[NewMessage("user" if i % 2 == 0 else "assistant", text) for i in range(n)],
    )


def execute(run_id):
    return services.summary_run_execute(run_id=run_id)


def test_a_summary_request_outlives_the_chats_timeout(conversation, fake_llm, settings):
    """A server that takes longer than the chat's timeout to answer: the summary waits for it
    (BACKGROUND_TIMEOUT), where it used to be killed at OPENAI_TIMEOUT."""
    settings.OPENAI_TIMEOUT = 1.0
    settings.BACKGROUND_TIMEOUT = 10.0
    fake_llm.behaviour.stall_before = 1.5
    chat(conversation)
    run = execute(services.summary_run_start(conversation=conversation).pk)
    assert run.status == "done" and run.method == "json_schema", run.error


def test_every_attempts_error_is_kept(conversation, fake_llm, settings):
    """Too slow for BACKGROUND_TIMEOUT once, then a 503, then an answer: the done run still
    says what each failed attempt met."""
    settings.BACKGROUND_TIMEOUT = 0.5
    fake_llm.behaviour.stall_before = 1.0
    chat(conversation)
    run = execute(services.summary_run_start(conversation=conversation).pk)
    assert run.status == "queued" and run.error.startswith("attempt 1: The model took too long")
    fake_llm.behaviour.stall_before = 0
    # The first request's handler still sleeps out its stall and then takes any failure set:
    # let it end first (on a loaded machine it used to take the 503 meant for attempt 2).
    time.sleep(1.5)
    fake_llm.behaviour.fail_status, fake_llm.behaviour.fail_times = 503, 1
    run = execute(run.pk)
    assert run.status == "queued" and "attempt 2: The model server failed (HTTP 503)" in run.error
    run = execute(run.pk)
    assert run.status == "done" and run.attempts == 3
    lines = run.error.splitlines()
    assert lines[0].startswith("attempt 1: The model took too long")
    assert lines[1].startswith("attempt 2: The model server failed (HTTP 503)")


def test_a_run_waits_while_the_users_reply_streams(conversation, fake_llm, settings):
    """One server for both: the summary request is not sent while the user's reply streams
    (here until SUMMARY_YIELD_SECONDS pass, since this reply never ends)."""
    settings.SUMMARY_YIELD_SECONDS = 1
    chat(conversation)
    message_create(
        conversation=conversation, role="assistant", content="", status=Message.Status.STREAMING
    )
    started = time.monotonic()
    run = execute(services.summary_run_start(conversation=conversation).pk)
    assert run.status == "done"
    assert fake_llm.chat_requests()[0]["time"] - started >= 1.0


def test_a_summary_server_of_its_own_does_not_wait(conversation, fake_llm, settings):
    settings.SUMMARY_YIELD_SECONDS = 30  # far above a loaded machine's own delay
    summary_server = FakeLLM(Behaviour(json_reply=extraction_json)).start()
    try:
        settings.SUMMARY_BASE_URL = summary_server.base_url
        chat(conversation)
        message_create(
            conversation=conversation, role="assistant", content="", status=Message.Status.STREAMING
        )
        started = time.monotonic()
        execute(services.summary_run_start(conversation=conversation).pk)
        assert summary_server.chat_requests()[0]["time"] - started < 10.0
    finally:
        summary_server.stop()


def test_runs_of_a_conversation_are_paced(conversation, settings):
    """A run started less than SUMMARY_MIN_INTERVAL_SECONDS ago: the next is queued to start
    when the interval is over, not at once."""
    settings.SUMMARY_MIN_INTERVAL_SECONDS = 60
    chat(conversation, services.TRIGGER_MESSAGES)
    first = services.conversation_after_turn(conversation=conversation)
    assert first.stage == "queued"
    SummaryRun.objects.filter(pk=first.pk).update(status=SummaryRun.Status.DONE)
    chat(conversation, services.TRIGGER_MESSAGES)
    second = services.conversation_after_turn(conversation=conversation)
    assert second.stage.startswith("queued, starts in ") and second.stage.endswith("s (paced)")
    seconds = int(second.stage.split("starts in ")[1].split(" s")[0])
    assert 55 <= seconds <= 60


def test_one_long_message_starts_no_run(conversation):
    """The budget share alone needs TRIGGER_MIN_MESSAGES messages: one long exchange on a
    small budget no longer starts a run every turn."""
    conversation.context_budget = 1000
    conversation.save()
    chat(conversation, 2, text="plan " * 400)
    assert services.conversation_after_turn(conversation=conversation) is None
    chat(conversation, services.TRIGGER_MIN_MESSAGES - 2, text="plan " * 400)
    assert services.conversation_after_turn(conversation=conversation) is not None


@pytest.mark.django_db(transaction=True)
def test_a_long_request_keeps_the_run_alive(alice, fake_llm, settings, monkeypatch):
    """A request may take BACKGROUND_TIMEOUT: the run's heartbeat goes on meanwhile, so the
    stale-run check does not take a slow run for a dead one."""
    from chat.services import conversation_create

    monkeypatch.setattr(services.summaries, "HEARTBEAT_SECONDS", 0.2)
    fake_llm.behaviour.stall_before = 1.0
    conversation = conversation_create(user=alice)
    chat(conversation)
    beats = []
    original = services.summaries._progress

    def progress(run, percent, stage):  # the last one ("saving") comes after the request
        beats.append(SummaryRun.objects.get(pk=run.pk).heartbeat_at)
        original(run, percent, stage)

    monkeypatch.setattr(services.summaries, "_progress", progress)
    run = execute(services.summary_run_start(conversation=conversation).pk)
    assert run.status == "done"
    before_request, after_request = beats[0], beats[-1]
    assert (after_request - before_request).total_seconds() >= 0.5
