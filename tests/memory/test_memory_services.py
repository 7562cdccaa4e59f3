"""Merging memories and the background summary runs (offline extractor, real task queue)."""

import pytest
from django.core.management import call_command

from chat.models import Message
from chat.services import NewMessage, conversation_create, message_create, message_create_many
from memory import selectors, services, summariser
from memory.extraction import ExtractedAction, ExtractedDecision, ExtractedFact, Extraction
from memory.models import ActionItem, Decision, Fact, Summary, SummaryRun
from memory.services.summaries import SUMMARISED_STATUSES

pytestmark = pytest.mark.django_db


def remember(alice, conversation, text, subject="", message=None):
    return services.fact_remember(
        user=alice,
        conversation=conversation,
        category="personal",
        subject=subject,
        text=text,
        importance=0.5,
        source_message=message,
    )


# -- merge, don't duplicate -------------------------------------------------------------------


def test_a_restated_fact_updates_the_existing_one(alice, conversation, say):
    """Told twice: one row, two mentions, both source messages."""
    first, second = say("I live in Porto."), say("As I said, I live in Porto.")
    assert remember(alice, conversation, "The user lives in Porto.", "location", first) == (
        "created"
    )
    assert remember(alice, conversation, "The user lives in Porto.", "location", second) == (
        "updated"
    )
    fact = Fact.objects.get()
    assert fact.mentions == 2
    assert set(fact.source_messages.values_list("pk", flat=True)) == {first.pk, second.pk}


def test_a_contradicting_fact_supersedes_the_old_one(alice, conversation):
    """Same subject, new text: the old fact is kept, superseded, linked to the new one."""
    remember(alice, conversation, "The user's favourite colour is blue.", "favourite colour")
    outcome = remember(
        alice, conversation, "The user's favourite colour is green.", "favourite colour"
    )
    assert outcome == "superseded"
    old = Fact.objects.get(text__contains="blue")
    new = Fact.objects.get(text__contains="green")
    assert old.status == "superseded" and old.superseded_by == new and new.status == "active"
    assert old.history.count() == 2  # created, then superseded: the audit trail has both


def test_the_same_decision_and_action_item_are_one_row(alice, conversation):
    """Extracted twice, stored once; richer details fill the gaps."""
    for rationale in ("", "it is cheaper"):
        services.decision_remember(
            user=alice, conversation=conversation, what="Use PostgreSQL", rationale=rationale
        )
        services.action_item_remember(
            user=alice, conversation=conversation, what="Send the contract to Ana", owner="user"
        )
    assert Decision.objects.get().rationale == "it is cheaper"
    assert ActionItem.objects.count() == 1
    services.action_item_remember(
        user=alice, conversation=conversation, what="send the contract to ana", status="done"
    )
    assert ActionItem.objects.get().status == "done"


def test_merge_links_every_item_to_its_source_message(alice, conversation, say):
    """memories_merge maps message_index to the stored message."""
    messages = [say("hello"), say("We decided to use Django.")]
    extraction = Extraction(
        summary="s",
        topics=[],
        open_questions=[],
        facts=[ExtractedFact("technical", "web framework", "The user uses Django.", 0.6, 1)],
        decisions=[ExtractedDecision("Use Django", "", "", [], [], "decided", 1)],
        action_items=[ExtractedAction("Deploy it", "user", None, "open", [], 0)],
    )
    services.memories_merge(conversation=conversation, extraction=extraction, messages=messages)
    assert list(Fact.objects.get().source_messages.all()) == [messages[1]]
    assert list(Decision.objects.get().source_messages.all()) == [messages[1]]
    assert list(ActionItem.objects.get().source_messages.all()) == [messages[0]]


# -- summary runs ------------------------------------------------------------------------------


def chat(conversation, lines):
    return message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user" if i % 2 == 0 else "assistant", text) for i, text in enumerate(lines)
        ],
    )


def run_now(conversation, **kwargs):
    run = services.summary_run_start(conversation=conversation, **kwargs)
    return services.summary_run_execute(run_id=run.pk)


def test_a_short_tail_starts_nothing(conversation, django_capture_on_commit_callbacks):
    """Below the threshold no job is queued."""
    chat(conversation, ["hi", "hello"])
    with django_capture_on_commit_callbacks(execute=True):
        assert services.conversation_after_turn(conversation=conversation) is None
    assert not SummaryRun.objects.exists()


def test_a_long_tail_queues_one_job(conversation, django_capture_on_commit_callbacks):
    """Past the threshold one run is queued (and only one while it waits)."""
    from django_tasks_db.models import DBTaskResult

    chat(conversation, [f"line {i}" for i in range(services.TRIGGER_MESSAGES)])
    with django_capture_on_commit_callbacks(execute=True):
        run = services.conversation_after_turn(conversation=conversation)
        assert services.conversation_after_turn(conversation=conversation) is None
    assert run.status == "queued"
    assert DBTaskResult.objects.count() == 1


def test_the_tail_counted_is_what_the_current_summary_does_not_cover(alice, conversation):
    """Each conversation's messages after its current summary, in the statuses summarised
    (a failed reply is not), with their tokens; another conversation's are its own."""
    other = conversation_create(user=alice, title="other")
    chat(conversation, ["My name is Sam.", "Hi Sam."])
    run_now(conversation)
    newer = chat(conversation, ["My favourite colour is green.", "Nice."])
    Message.objects.filter(pk=newer[1].pk).update(status=Message.Status.FAILED)
    chat(other, ["one", "two", "three"])
    tails = selectors.unsummarised_tails(
        conversation_ids=[conversation.pk, other.pk], statuses=SUMMARISED_STATUSES
    )
    assert tails == {
        conversation.pk: (1, newer[0].token_count),
        other.pk: (3, sum(m.token_count for m in Message.objects.filter(conversation=other))),
    }


def test_a_run_folds_the_tail_and_extracts_memories(alice, conversation):
    """Offline: a current summary covering every message, and the facts it found."""
    messages = chat(
        conversation,
        [
            "My favourite colour is blue.",
            "Noted!",
            "We decided to use PostgreSQL because it scales.",
            "Good choice.",
            "TODO: send the slides to Marta by Friday.",
            "Will remind you.",
        ],
    )
    run = run_now(conversation)
    assert run.status == "done" and run.progress == 100
    summary = Summary.objects.get(is_current=True)
    assert summary.covered_through == messages[-1].pk and summary.message_count == 6
    assert summary.source == "auto" and summary.model == "offline" and summary.text
    assert Fact.objects.filter(subject="favourite colour", status="active").exists()
    assert Decision.objects.filter(what__icontains="PostgreSQL").exists()
    assert ActionItem.objects.filter(what__icontains="slides").exists()


def test_the_next_run_is_incremental_and_swaps_atomically(conversation):
    """Version 2 covers only the new messages on top of version 1; one version is current."""
    chat(conversation, ["My name is Sam.", "Hi Sam."])
    run_now(conversation)
    first = Summary.objects.get()
    newer = chat(conversation, ["My favourite colour is green.", "Nice."])
    run_now(conversation)
    second = Summary.objects.get(is_current=True)
    assert second.version == 2 and second.covered_through == newer[-1].pk
    assert second.message_count == 4
    first.refresh_from_db()
    assert not first.is_current


def test_a_streaming_reply_stops_the_fold_so_nothing_is_skipped(conversation):
    """Messages after a reply still streaming wait for the next run."""
    done = chat(conversation, ["first", "answer"])
    user = message_create(conversation=conversation, role="user", content="question")
    message_create(
        conversation=conversation, role="assistant", content="", status="streaming", reply_to=user
    )
    message_create(conversation=conversation, role="user", content="later")
    run_now(conversation)
    assert Summary.objects.get().covered_through == user.pk
    assert Summary.objects.get().covered_through > done[-1].pk


def test_a_failed_run_keeps_the_previous_summary_and_is_retried(
    conversation, monkeypatch, django_capture_on_commit_callbacks
):
    """The summariser fails: the old version stays current, the run is queued again, and
    after the last attempt it is failed with the reason."""
    chat(conversation, ["My name is Sam.", "Hi."])
    run_now(conversation)
    chat(conversation, ["More text.", "Ok."])

    def broken(**kwargs):
        raise RuntimeError("model unavailable")

    monkeypatch.setattr(summariser, "summarise", broken)
    run = services.summary_run_start(conversation=conversation)
    for attempt in range(1, services.MAX_ATTEMPTS + 1):
        with django_capture_on_commit_callbacks(execute=False):
            run = services.summary_run_execute(run_id=run.pk)
        assert run.attempts == attempt
        assert Summary.objects.get(is_current=True).version == 1
    assert run.status == "failed" and "model unavailable" in run.error


def test_a_run_is_executed_once_even_if_delivered_twice(conversation):
    """Two workers picking the same run: the second finds it taken."""
    chat(conversation, ["hello there", "hi"])
    run = services.summary_run_start(conversation=conversation)
    assert services.summary_run_execute(run_id=run.pk).status == "done"
    assert services.summary_run_execute(run_id=run.pk) is None
    assert Summary.objects.count() == 1


def test_a_run_whose_worker_died_is_requeued(conversation, django_capture_on_commit_callbacks):
    """'running' for too long means the worker was killed: the run goes back to the queue."""
    from datetime import timedelta

    from django.utils import timezone
    from django_tasks_db.models import DBTaskResult

    with django_capture_on_commit_callbacks(execute=True):
        run = services.summary_run_start(conversation=conversation)
    an_hour_ago = timezone.now() - timedelta(hours=1)
    SummaryRun.objects.filter(pk=run.pk).update(
        status="running", attempts=1, heartbeat_at=an_hour_ago, created_at=an_hour_ago
    )
    run.refresh_from_db()
    DBTaskResult.objects.filter(id=run.task_id).update(status="RUNNING")  # as its worker left it
    with django_capture_on_commit_callbacks(execute=False) as retries:
        # Once, with its backoff: not also taken for a queued run whose task is gone.
        assert services.summary_runs_recover_stale() == 1
    assert SummaryRun.objects.get(pk=run.pk).status == "queued" and len(retries) == 1


def test_a_queued_run_whose_task_was_taken_by_a_dead_worker_is_enqueued_again(
    conversation, django_capture_on_commit_callbacks
):
    """A worker killed after taking the task but before claiming the run leaves the run
    queued with no task waiting: the sweep enqueues it again (one still waiting is left)."""
    from datetime import timedelta

    from django.utils import timezone
    from django_tasks_db.models import DBTaskResult

    with django_capture_on_commit_callbacks(execute=True):
        run = services.summary_run_start(conversation=conversation)
    first_task = SummaryRun.objects.get(pk=run.pk).task_id
    SummaryRun.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(hours=1))
    assert first_task and services.summary_runs_recover_stale() == 0  # its task still waits

    DBTaskResult.objects.filter(id=first_task).update(status="RUNNING")  # its worker died
    with django_capture_on_commit_callbacks(execute=True):
        assert services.summary_runs_recover_stale() == 1
    run.refresh_from_db()
    assert run.status == "queued" and run.task_id not in ("", first_task)
    assert DBTaskResult.objects.get(id=run.task_id).status == "READY"
    assert services.summary_runs_recover_stale() == 0  # the new task waits: not enqueued twice


def test_a_full_run_rebuilds_from_the_first_message(conversation):
    """Staff re-summarise: a new version covering everything, made by staff."""
    messages = chat(conversation, ["My name is Sam.", "Hi.", "I live in Porto.", "Nice."])
    run_now(conversation)
    run = run_now(conversation, mode="full", source="staff")
    summary = Summary.objects.get(is_current=True)
    assert run.summary == summary and summary.version == 2 and summary.source == "staff"
    assert summary.message_count == 4 and summary.covered_through == messages[-1].pk


def test_temporary_conversations_are_never_summarised(alice):
    """No background memory work for a temporary conversation."""
    temporary = conversation_create(user=alice, temporary=True)
    chat(temporary, [f"x {i}" for i in range(40)])
    assert services.conversation_after_turn(conversation=temporary) is None


@pytest.mark.django_db(transaction=True)
def test_the_db_worker_runs_queued_jobs(alice):
    """The real worker command picks the job from the database and completes it."""
    conversation = conversation_create(user=alice)
    chat(conversation, [f"My note number {i} is about gardening." for i in range(14)])
    run = services.conversation_after_turn(conversation=conversation)
    call_command("db_worker", "--batch", "--no-reload", "--no-startup-delay", verbosity=0)
    run.refresh_from_db()
    assert run.status == "done"
    assert Summary.objects.filter(conversation=conversation, is_current=True).exists()
    assert Message.objects.filter(conversation=conversation).count() == 14


def test_a_watch_requeues_a_dead_run_and_leaves_a_live_one(conversation):
    """The check queued at claim time: a stale heartbeat means the worker died."""
    from datetime import timedelta

    from django.utils import timezone

    run = services.summary_run_start(conversation=conversation)
    SummaryRun.objects.filter(pk=run.pk).update(
        status="running", attempts=1, heartbeat_at=timezone.now()
    )
    assert services.summary_run_watch(run_id=run.pk) == "alive"
    SummaryRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert services.summary_run_watch(run_id=run.pk) == "requeued"
    assert SummaryRun.objects.get(pk=run.pk).status == "queued"
    assert services.summary_run_watch(run_id=run.pk) == "finished"


def test_replies_ending_together_are_checked_in_one_go(
    alice, conversation, django_assert_max_num_queries, django_capture_on_commit_callbacks
):
    """conversations_after_turn: the same decisions as one conversation_after_turn each (a
    long tail queues a run, a short one or one already waiting does not, a temporary
    conversation never), with queries that do not grow with the conversations checked."""
    short = conversation_create(user=alice, title="short")
    temporary = conversation_create(user=alice, title="temp", temporary=True)
    waiting = conversation_create(user=alice, title="waiting")
    for long_one in (conversation, temporary, waiting):
        chat(long_one, [f"line {i}" for i in range(services.TRIGGER_MESSAGES)])
    chat(short, ["hi", "hello"])
    services.summary_run_start(conversation=waiting)
    everything = [conversation, short, temporary, waiting]
    with django_capture_on_commit_callbacks(execute=True), django_assert_max_num_queries(8):
        started = services.conversations_after_turn(conversations=[*everything, conversation])
    assert list(started) == [conversation.pk]
    assert started[conversation.pk].status == "queued"
    assert set(SummaryRun.objects.values_list("conversation_id", flat=True)) == {
        conversation.pk,
        waiting.pk,
    }
