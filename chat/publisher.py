"""The chat layer's publisher for what other apps tell the user's open tabs: they send a
signal of their own (memory: ``memory.signals.memory_event_changed``, after commit) and this
sends the frames, so that they never import chat's fan-out or frames. On the in-memory channel
layer the job worker's notices reach no tab: the server process watches the summary runs its
turns or staff's pages started and sends their notices itself (``summary_run_watch``,
``summary_runs_watch_from_view``, ``chat.job_watch``)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from functools import partial

from chat import fanout, protocol
from chat.job_watch import Watch, frames_cannot_cross, watch_from_view
from memory.models import MemoryEvent, SummaryRun
from memory.selectors import notice_get, notice_ids_since, summary_run_ended

logger = logging.getLogger(__name__)

# A run may wait its pacing (SUMMARY_MIN_INTERVAL_SECONDS), then its model, then retries.
SUMMARY_RUN_WAIT = 900.0  # seconds


def publish_memory_event(sender, *, event_id: int, **kwargs) -> None:
    """A notice, as it now is, to every tab on its conversation and, as a note, to the
    user's tabs elsewhere. From a database thread or a job worker: never on the event loop."""
    try:
        notice = notice_get(event_id=event_id)
        if notice is not None:
            event = notice.event
            fanout.send_to_conversation(event.conversation_id, protocol.memory_event(notice))
            fanout.send_to_users_other_tabs(
                event.user_id, event.conversation_id, protocol.memory_elsewhere(notice)
            )
    except Exception:  # the notice is stored: a reload shows it
        logger.warning("could not tell the tabs of memory event %s", event_id, exc_info=True)


def summary_run_watch(run: SummaryRun) -> Watch | None:
    """The notices a summary run (a job in the worker) makes, for this process's tabs when the
    worker's own frames cannot reach them (``chat.job_watch``); None when they can."""
    if not frames_cannot_cross():
        return None
    return Watch(
        name=f"summary-run-{run.pk}",
        ended=partial(summary_run_ended, run_id=run.pk),
        then=partial(publish_summary_notices, run.conversation_id, since=run.created_at),
        wait=SUMMARY_RUN_WAIT,
    )


def summary_runs_watch_from_view(runs: Iterable[SummaryRun]) -> None:
    """From a view that queued summary runs (staff's re-summarise of a conversation or of a
    project): their notices reach the user's open tabs as a turn's run's do."""
    jobs = [job for run in runs if (job := summary_run_watch(run)) is not None]
    if jobs:
        watch_from_view(*jobs)


def publish_summary_notices(conversation_id: int, *, since: datetime) -> None:
    """Every notice the conversation's summary runs made since ``since``, as they now are."""
    for event_id in notice_ids_since(
        conversation_id=conversation_id, source=MemoryEvent.Source.SUMMARY, since=since
    ):
        publish_memory_event(MemoryEvent, event_id=event_id)
