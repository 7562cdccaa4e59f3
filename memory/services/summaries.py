"""Summary runs: when a conversation is summarised, the background job that does it, and the
versioned summaries it writes.

Locking: ``summary_run_execute`` claims its run with a conditional UPDATE (two workers never
run one run), and swaps the current summary inside a transaction that first locks the
conversation row and checks the version it started from is still current.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta

import httpx2
import openai
from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import F, Max
from django.utils import timezone
from django_tasks import TaskResultStatus

from audit import attribute
from chat.models import Conversation, Message
from contextwindow.tokens import count_tokens
from llm import OFFLINE_MODEL, limits
from llm.clients import chat_endpoint, summary_endpoint, summary_model
from llm.errors import describe_error
from memory import extraction, recall, summariser
from memory.extraction import Extraction, acceptance, normalise_key
from memory.models import (
    OPEN_STATUSES,
    ActionItem,
    Decision,
    Fact,
    MemoryEvent,
    MemoryState,
    Summary,
    SummaryRun,
)
from memory.search import scope as scoping
from memory.search.scope import memories_in
from memory.selectors import (
    forgotten_through,
    summary_run_active,
    summary_runs_active_for,
    system_prompt_current,
    unsummarised_tails,
)
from memory.services.events import EventItem, memory_event_record
from memory.services.memories import memories_merge

logger = logging.getLogger(__name__)

# A conversation is summarised when its unsummarised tail has this many messages, or this
# share of its context budget in tokens.
TRIGGER_MESSAGES = 12
TRIGGER_BUDGET_SHARE = 0.3
TRIGGER_MIN_MESSAGES = 4  # the budget share alone starts no run for fewer (two exchanges)
HEARTBEAT_SECONDS = 30  # a running run's heartbeat while it waits on the model
YIELD_POLL_SECONDS = 0.5
BATCH_MESSAGES = 200  # messages folded per LLM call
MAX_ATTEMPTS = 3
ERROR_MAX_CHARS = 12000  # the run's record: every attempt's error, then the done run's notes
# Replies with text to fold (a truncated reply is text too).
SUMMARISED_STATUSES = (
    Message.Status.COMPLETE,
    Message.Status.INTERRUPTED,
    Message.Status.TRUNCATED,
)


class StaleBase(Exception):
    """The current summary changed while the run worked: start again from the new one."""


# -- triggering ------------------------------------------------------------------------------


def conversation_after_turn(*, conversation: Conversation) -> SummaryRun | None:
    """After a reply: start an incremental summary run when the unsummarised tail is long."""
    return conversations_after_turn(conversations=[conversation]).get(conversation.pk)


def conversations_after_turn(*, conversations, enabled=None) -> dict[int, SummaryRun]:
    """``conversation_after_turn`` for several conversations at once (the replies that ended
    together): the same checks, in three queries for all of them (two with ``enabled``, the
    memory rule by conversation id as the caller just read it). Returns the runs started,
    by conversation id."""
    unique = list({c.pk: c for c in conversations}.values())
    if enabled is None:
        enabled = recall.memory_enabled_many(unique)
    candidates = [c for c in unique if enabled.get(c.pk)]
    if not candidates:
        return {}
    # A backstop for watch_summary_run (the job that checks each run): one sweep every
    # STALE_SWEEP_SECONDS across processes, not a query on every turn.
    if cache.add("summary-runs-stale-sweep", 1, STALE_SWEEP_SECONDS):
        summary_runs_recover_stale()
    embeddings_schedule()
    busy = summary_runs_active_for(conversations=candidates)
    idle = [c for c in candidates if c.pk not in busy]
    if not idle:
        return {}
    tails = unsummarised_tails(conversation_ids=[c.pk for c in idle], statuses=SUMMARISED_STATUSES)
    due = []
    budgets: dict[tuple[int, str], int] = {}
    for conversation in idle:
        n, tokens = tails.get(conversation.pk, (0, 0))
        share = tokens >= _chat_budget(conversation, budgets) * TRIGGER_BUDGET_SHARE
        if n >= TRIGGER_MESSAGES or (n >= TRIGGER_MIN_MESSAGES and share):
            due.append(conversation)
    delays = _paced(due)
    return {c.pk: summary_run_start(conversation=c, delay=delays.get(c.pk)) for c in due}


def _chat_budget(conversation: Conversation, known: dict[tuple[int, str], int]) -> int:
    """The budget the chat builds with (the conversation's, never more than the server's
    context), in our estimated tokens (the tail's are: the server's token scale divides it),
    so that the tail is folded before it outgrows the window the server allows;
    ``known``: by budget and model, a server asked once per batch of conversations."""
    key = (conversation.effective_budget, conversation.effective_model)
    if key not in known:
        server = limits.server_size(chat_endpoint(), key[1])
        known[key] = int(server.budget(key[0]) / max(server.scale, 1.0))
    return known[key]


def _paced(conversations) -> dict[int, timedelta]:
    """How long each conversation's next run waits: its runs start at least
    SUMMARY_MIN_INTERVAL_SECONDS apart (on a one-slot server each run holds the chat's slot)."""
    interval = timedelta(seconds=settings.SUMMARY_MIN_INTERVAL_SECONDS)
    if not conversations or not interval:
        return {}
    last = (
        SummaryRun.objects.filter(conversation_id__in=[c.pk for c in conversations])
        .values("conversation_id")
        .annotate(last=Max("created_at"))
    )
    now = timezone.now()
    return {
        row["conversation_id"]: row["last"] + interval - now
        for row in last
        if row["last"] + interval > now
    }


EMBED_DEBOUNCE_SECONDS = 10
STALE_SWEEP_SECONDS = 30


def embeddings_schedule() -> bool:
    """With embeddings on (the default), queue one job (at most every few seconds, across
    processes via the cache) that embeds whatever the search index holds without a vector."""
    from memory.search import embeddings
    from memory.tasks import embed_pending

    if not embeddings.enabled() or not cache.add("embed-pending", 1, EMBED_DEBOUNCE_SECONDS):
        return False
    transaction.on_commit(embed_pending.enqueue)
    return True


def summary_run_start(
    *,
    conversation: Conversation,
    mode: str = SummaryRun.Mode.INCREMENTAL,
    source: str = Summary.Source.AUTO,
    requested_by=None,
    delay: timedelta | None = None,
) -> SummaryRun:
    """Queue a run (after ``delay``, pacing); the task is enqueued only once the run row is
    committed."""

    run = SummaryRun.objects.create(
        conversation=conversation,
        mode=mode,
        source=source,
        requested_by=requested_by,
        stage=f"queued, starts in {delay.total_seconds():.0f} s (paced)" if delay else "queued",
    )

    transaction.on_commit(lambda: _enqueue(run.pk, delay=delay))
    return run


def _enqueue(run_id: int, *, delay: timedelta | None = None) -> None:
    """Enqueue the run's task and record its id: the orphan check reads that task's state."""
    from memory.tasks import summarise_conversation

    task = summarise_conversation
    if delay:
        task = task.using(run_after=timezone.now() + delay)
    result = task.enqueue(run_id)
    SummaryRun.objects.filter(pk=run_id).update(task_id=str(result.id))


def summary_runs_recover_stale(*, conversation: Conversation | None = None) -> int:
    """Re-queue runs whose worker died mid-run (the current summary was never touched)."""
    stale = timedelta(seconds=settings.MEMORYCHAT_STALE_RUN_SECONDS)
    qs = SummaryRun.objects.filter(
        status=SummaryRun.Status.RUNNING, heartbeat_at__lt=timezone.now() - stale
    )
    if conversation is not None:
        qs = qs.filter(conversation=conversation)
    # Orphans first: a run retried below is queued with its old task's id until its retry is
    # enqueued, and would look orphaned (enqueued at once, skipping the retry's backoff).
    recovered = _requeue_orphans(stale, conversation)
    for run in qs:
        if _retry_or_fail(run, "The worker stopped during the run."):
            recovered += 1
    return recovered


def _requeue_orphans(stale: timedelta, conversation: Conversation | None) -> int:
    """Re-enqueue queued runs whose task is no longer waiting: a worker killed after taking
    the task but before claiming the run leaves it queued with no task to run it. A duplicate
    task is harmless (the claim is one conditional update), so no lock is needed."""
    from django_tasks.exceptions import TaskResultDoesNotExist

    from memory.tasks import summarise_conversation

    qs = SummaryRun.objects.filter(
        status=SummaryRun.Status.QUEUED, created_at__lt=timezone.now() - stale
    ).exclude(task_id="")
    if conversation is not None:
        qs = qs.filter(conversation=conversation)
    requeued = 0
    for run in qs.only("pk", "task_id"):
        try:
            status = summarise_conversation.get_result(run.task_id).status
        except (TaskResultDoesNotExist, NotImplementedError):
            continue  # a backend that keeps no results (tests' immediate one) has no orphans
        if status == TaskResultStatus.READY:
            continue  # waiting its turn (or a retry's backoff)
        logger.warning(
            "summary run %s: its task %s is %s; enqueued again", run.pk, run.task_id, status
        )
        _enqueue(run.pk)
        requeued += 1
    return requeued


def _attempts_record(earlier: str, attempt: int, error: str) -> str:
    """The run's record of every attempt: the earlier ones' errors, then this one's."""
    line = f"attempt {attempt}: {error}" if attempt else error
    return "\n".join(part for part in (earlier, line) if part)[-ERROR_MAX_CHARS:]


def _retry_or_fail(run: SummaryRun, error: str) -> bool:
    error = _attempts_record(run.error, run.attempts, error)
    if run.attempts < MAX_ATTEMPTS:
        updated = SummaryRun.objects.filter(pk=run.pk, status=run.status).update(
            status=SummaryRun.Status.QUEUED,
            error=error,
            stage=f"retrying (attempt {run.attempts + 1} of {MAX_ATTEMPTS})",
        )
        if updated:
            delay = timedelta(seconds=5 * run.attempts)
            transaction.on_commit(lambda: _enqueue(run.pk, delay=delay))
        return bool(updated)
    SummaryRun.objects.filter(pk=run.pk).update(
        status=SummaryRun.Status.FAILED, error=error, finished_at=timezone.now(), stage="failed"
    )
    return False


# -- running -----------------------------------------------------------------------------------


def summary_run_execute(*, run_id: int) -> SummaryRun | None:
    """Do one run (called by the task). Returns the run, or None if another worker has it."""
    summary_runs_recover_stale()  # any worker picks up runs whose worker died
    now = timezone.now()
    claimed = SummaryRun.objects.filter(pk=run_id, status=SummaryRun.Status.QUEUED).update(
        status=SummaryRun.Status.RUNNING,
        started_at=now,
        heartbeat_at=now,
        attempts=F("attempts") + 1,
        stage="reading messages",
        progress=0,
    )
    if not claimed:
        return None
    _watch_later(run_id, now)
    run = SummaryRun.objects.select_related("conversation__user").get(pk=run_id)
    try:
        with _heartbeat(run_id):
            for _ in range(3):  # a concurrent swap: start again from the new current version
                try:
                    summary, outcome = _run(run)
                    break
                except StaleBase:
                    continue
            else:
                raise StaleBase("the summary kept changing during the run")
    except Exception as exc:
        logger.warning("summary run %s failed", run_id, exc_info=True)
        _retry_or_fail(run, run_error(exc))
        run.refresh_from_db()
        return run
    SummaryRun.objects.filter(pk=run.pk).update(
        status=SummaryRun.Status.DONE,
        progress=100,
        stage="done, fell back" if outcome.notes else "done",
        finished_at=timezone.now(),
        summary=summary,
        method=outcome.method,
        error=_attempts_record(run.error, 0, "; ".join(outcome.notes)[:4000]),
    )
    run.refresh_from_db()
    if run.mode == SummaryRun.Mode.INCREMENTAL and summary is not None:
        conversation_after_turn(conversation=run.conversation)  # a long tail needs more runs
    return run


@contextlib.contextmanager
def _heartbeat(run_id: int):
    """Renew the run's heartbeat every HEARTBEAT_SECONDS while the block runs: one request to a
    slow server may take BACKGROUND_TIMEOUT, longer than a dead run's silence."""
    done = threading.Event()

    def beat() -> None:
        try:
            while not done.wait(HEARTBEAT_SECONDS):
                SummaryRun.objects.filter(pk=run_id, status=SummaryRun.Status.RUNNING).update(
                    heartbeat_at=timezone.now()
                )
        except Exception:  # the database away for a moment: the watch job decides
            logger.warning("summary run %s: heartbeat failed", run_id, exc_info=True)
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=beat, daemon=True, name=f"summary-run-{run_id}-heartbeat")
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def _yield_to_replies(run: SummaryRun):
    """Before each summary request: while a reply of the same user streams from the same server,
    wait (up to SUMMARY_YIELD_SECONDS), so that a one-slot server finishes the reply first."""
    user_id = run.conversation.user_id

    def pause() -> None:
        if summary_endpoint().base_url != chat_endpoint().base_url:
            return  # summaries have a server of their own
        deadline = time.monotonic() + settings.SUMMARY_YIELD_SECONDS
        noted = False
        while time.monotonic() < deadline and _reply_streaming(user_id):
            if not noted:
                _progress(run, run.progress, "waiting for a reply to finish streaming")
                noted = True
            time.sleep(YIELD_POLL_SECONDS)

    return pause


def _reply_streaming(user_id: int) -> bool:
    return Message.objects.filter(
        conversation__user_id=user_id,
        status=Message.Status.STREAMING,
        lease_expires_at__gt=timezone.now(),
    ).exists()


def _watch_later(run_id: int, since) -> None:
    """Queue a check for after the run's heartbeat could go stale: if its worker dies, the
    check (run by any other worker) queues the run again. No scheduler needed."""
    from memory.tasks import watch_summary_run

    stale = timedelta(seconds=settings.MEMORYCHAT_STALE_RUN_SECONDS)
    watch_summary_run.using(run_after=since + stale + timedelta(seconds=1)).enqueue(run_id)


def summary_run_watch(*, run_id: int) -> str:
    """The check queued by _watch_later: requeue a dead run, look again later at a live one."""
    run = SummaryRun.objects.filter(pk=run_id).first()
    if run is None or run.status != SummaryRun.Status.RUNNING:
        return "finished"
    stale = timedelta(seconds=settings.MEMORYCHAT_STALE_RUN_SECONDS)
    if run.heartbeat_at and run.heartbeat_at >= timezone.now() - stale:
        _watch_later(run_id, run.heartbeat_at)
        return "alive"
    _retry_or_fail(run, "The worker stopped during the run.")
    return "requeued"


def run_error(exc: BaseException) -> str:
    """What a failed attempt records: for a model server's error, the page's words and the
    server's own (its status and body, for staff); otherwise the exception."""
    if isinstance(exc, openai.OpenAIError | httpx2.HTTPError):
        described = describe_error(exc)
        return f"{described.message} Server said: {described.detail}"[:2000]
    return f"{type(exc).__name__}: {exc}"[:2000]


@dataclass
class RunOutcome:
    method: str = ""
    notes: list[str] = field(default_factory=list)


def _run(run: SummaryRun) -> tuple[Summary | None, RunOutcome]:
    conversation = run.conversation
    outcome = RunOutcome()
    base = Summary.objects.filter(conversation=conversation, is_current=True).first()
    full = run.mode == SummaryRun.Mode.FULL
    # What the user had forgotten is never read again, not even by a full re-summarise.
    floor = forgotten_through(conversation_ids=[conversation.pk]).get(conversation.pk, 0)
    start_after = floor if full or base is None else max(base.covered_through, floor)
    messages = list(_foldable(conversation, start_after, None if full else BATCH_MESSAGES))
    if not messages:
        return None, outcome
    batches = [messages[i : i + BATCH_MESSAGES] for i in range(0, len(messages), BATCH_MESSAGES)]
    previous = "" if full or base is None else base.text
    result: Extraction | None = None
    merged: list[tuple[Extraction, list[Message]]] = []
    model = summary_model(conversation.effective_model)
    methods: list[str] = []
    # The replaced version's open action items survive the run (acceptance): each batch of an
    # incremental run keeps them; a full run, which reads them again, must have them at its end.
    replaced_open = _open_items(conversation, base)
    open_items = [] if full else replaced_open
    system_prompt = system_prompt_current().text
    pause = _yield_to_replies(run)
    for number, batch in enumerate(batches, start=1):
        _progress(
            run, int(90 * (number - 1) / len(batches)), f"summarising {number} of {len(batches)}"
        )
        required = open_items
        if full and number == len(batches):
            required = [*replaced_open, *open_items]
        summarised = summariser.summarise(
            previous_summary=previous,
            messages=[{"role": m.role, "content": m.content, "model": m.model} for m in batch],
            model=model,
            today=timezone.localdate(),
            max_tokens=settings.SUMMARY_MAX_TOKENS,
            open_items=tuple(required),
            system_prompt=system_prompt,
            pause=pause,
        )
        result = summarised.extraction
        prefix = f"batch {number}: " if len(batches) > 1 else ""
        outcome.notes += [prefix + note for note in summarised.notes]
        methods.append(summarised.method)
        previous = result.summary
        open_items = acceptance.open_after(required, result)
        merged.append((result, batch))
    assert result is not None, "messages is not empty: one batch at least"
    outcome.method = "+".join(dict.fromkeys(methods))
    _progress(run, 95, "saving")
    with transaction.atomic():
        Conversation.objects.select_for_update().filter(pk=conversation.pk).first()
        current = Summary.objects.filter(conversation=conversation, is_current=True).first()
        if (current and current.pk) != (base and base.pk):
            raise StaleBase()
        changes: list[EventItem] = []
        remembering = recall.memory_enabled(conversation)
        if remembering:
            for batch_result, batch in merged:
                memories_merge(
                    conversation=conversation,
                    extraction=batch_result,
                    messages=batch,
                    changes=changes,
                )
        # What waits for the user ("ask first") is not stated by the summary either.
        suggested = _suggested_texts(conversation.user)
        result = extraction.withhold(result, suggested)
        open_items = extraction.withhold_items(open_items, suggested)
        summary = summary_create(
            conversation=conversation,
            extraction=result,
            covered_through=messages[-1].pk,
            message_count=(0 if full or base is None else base.message_count) + len(messages),
            source=run.source,
            created_by=run.requested_by,
            model=OFFLINE_MODEL if set(methods) == {summariser.OFFLINE} else model,
            carried_items=open_items,
        )
        if remembering:
            memory_event_record(
                conversation=conversation,
                message=_last_reply(messages),
                items=changes,
                source=MemoryEvent.Source.SUMMARY,
            )
    return summary, outcome


SUGGESTIONS_WITHHELD = 500  # the newest suggestions a summary is checked against


def _suggested_texts(user) -> list[str]:
    """The texts of the user's suggestions still waiting (memory mode "ask first"), whichever
    run or turn made them and whatever the mode is now: none may be stated by a summary."""
    texts: list[str] = []
    for model, column in ((Fact, "text"), (Decision, "what"), (ActionItem, "what")):
        rows = (
            model.objects.filter(user=user, state=MemoryState.SUGGESTED)
            .order_by("-created_at")
            .values_list(column, flat=True)[:SUGGESTIONS_WITHHELD]
        )
        texts += list(rows)
    return texts


def _open_items(conversation: Conversation, base: Summary | None) -> list[str]:
    """The action items ``base`` lists that are still open: not marked done or cancelled, and
    (when the memory is kept) not deleted by the user from the Memory page."""
    if base is None or not base.action_items:
        return []
    keys = {normalise_key(what): what for what in base.action_items if isinstance(what, str)}
    # The conversation's scopes (one row per scope and key); its own scope's row has the word.
    project_id = conversation.project_id
    found = ActionItem.objects.filter(
        memories_in(scoping.readable(project_id)),
        user_id=conversation.user_id,
        dedupe_key__in=keys,
    ).values_list("dedupe_key", "status", "project_id")
    rows = {key: status for key, status, _ in sorted(found, key=lambda row: row[2] == project_id)}
    missing = None if recall.memory_enabled(conversation) else ActionItem.Status.OPEN
    return [what for key, what in keys.items() if rows.get(key, missing) in OPEN_STATUSES]


def _last_reply(messages: list[Message]) -> Message:
    """Where a run's notice shows: under the newest reply it read."""
    replies = [m for m in messages if m.role == Message.Role.ASSISTANT]
    return (replies or messages)[-1]


def _foldable(conversation, after_id: int, limit: int | None):
    """Stored messages after ``after_id`` in order, stopping before one still streaming so
    that a later run picks it up: nothing is skipped, nothing counted twice."""
    qs = Message.objects.filter(
        conversation=conversation, id__gt=after_id, hidden_by__isnull=True
    ).order_by("id")
    if limit is not None:
        qs = qs[:limit]
    for message in qs.only("id", "role", "content", "status", "model", "created_at"):
        if message.status == Message.Status.STREAMING:
            return
        if message.status != Message.Status.FAILED and message.content:
            yield message


def _progress(run: SummaryRun, percent: int, stage: str) -> None:
    """Report progress; doubles as the heartbeat that tells a live run from a dead one."""
    SummaryRun.objects.filter(pk=run.pk).update(
        progress=percent, stage=stage, heartbeat_at=timezone.now()
    )


def summary_create(
    *,
    conversation: Conversation,
    extraction: Extraction,
    covered_through: int,
    message_count: int,
    source: str,
    created_by=None,
    model: str = "",
    carried_items: list[str] | None = None,
) -> Summary:
    """A new version, made current atomically (the old one stays, not current).
    ``carried_items``: the open action items it holds on from the version it replaces, listed
    with its own so that the next version is checked for them too."""
    own = [a.what for a in extraction.action_items]
    own_keys = {normalise_key(what) for what in own}
    carried = [w for w in carried_items or () if normalise_key(w) not in own_keys]
    with transaction.atomic():
        version = (
            Summary.objects.filter(conversation=conversation).aggregate(v=Max("version"))["v"] or 0
        ) + 1
        Summary.objects.filter(conversation=conversation, is_current=True).update(is_current=False)
        return Summary.objects.create(
            conversation=conversation,
            version=version,
            text=extraction.summary,
            topics=extraction.topics,
            decisions=[d.what for d in extraction.decisions],
            action_items=carried + own,
            open_questions=extraction.open_questions,
            covered_through=covered_through,
            message_count=message_count,
            token_count=count_tokens(extraction.summary, conversation.effective_model),
            source=source,
            created_by=created_by,
            model=model,
            is_current=True,
        )


def summary_make_current(*, summary: Summary, actor=None, reason: str = "") -> Summary:
    """Make an older version current again (``actor`` and ``reason``, when given, go into the
    summary's history record)."""
    with transaction.atomic():
        Summary.objects.filter(conversation=summary.conversation_id, is_current=True).update(
            is_current=False
        )
        summary.is_current = True
        attribute(summary, actor=actor, reason=reason)
        summary.save(update_fields=["is_current"])
    return summary


def summary_follow_branch(*, conversation: Conversation, branch_point: int) -> None:
    """The branch shown changed at message ``branch_point`` (the first question of the edited
    group): a current version covering messages from there on (another branch's) gives way to
    the newest version that covers only what comes before it, or to none; the next run folds
    the branch shown. A blank version left by forgetting stays."""
    current = Summary.objects.filter(conversation=conversation, is_current=True).first()
    if current is None or current.covered_through < branch_point:
        return
    if current.model == Summary.FORGOTTEN:
        return
    earlier = (
        Summary.objects.filter(conversation=conversation, covered_through__lt=branch_point)
        .order_by("-version")
        .first()
    )
    reason = "The conversation's branch shown changed."
    if earlier is not None:
        summary_make_current(summary=earlier, reason=reason)
        return
    current.is_current = False
    attribute(current, reason=reason)
    current.save(update_fields=["is_current"])


def conversation_resummarise(*, conversation: Conversation, actor) -> SummaryRun:
    """Queue a full re-summarisation by ``actor`` (the new version becomes current only when it
    completes). A run already queued or running for the conversation is returned instead."""
    with transaction.atomic():
        # Locked: two clicks at once find the same active run, not none each.
        Conversation.objects.select_for_update().filter(pk=conversation.pk).first()
        active = summary_run_active(conversation=conversation)
        if active is not None:
            return active
        return summary_run_start(
            conversation=conversation,
            mode=SummaryRun.Mode.FULL,
            source=Summary.Source.STAFF,
            requested_by=actor,
        )
