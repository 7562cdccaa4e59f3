"""The background-job worker that outlives its database, its heartbeat, and the queue's state
for the staff home and /healthz.

django-tasks-db's worker skips a locked database only while it looks for a job: a lock or a
lost connection anywhere else (opening the transaction, storing a result) ends the process,
and summaries and embeddings then stop for everyone with no sign. This worker retries every
transient database error with backoff instead, stores a job's result until it lands, puts a
job that failed on a transient database error back in the queue, and records a heartbeat
from a thread (so a long job does not look like a dead worker)."""

from __future__ import annotations

import logging
import os
import threading
import time
from datetime import timedelta

from django.conf import settings
from django.db import InterfaceError, OperationalError, close_old_connections, connections
from django.db.models import Min
from django.utils import timezone
from django_tasks_db.compat import TaskResultStatus
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

from chat.models import WorkerHeartbeat

logger = logging.getLogger(__name__)

# Errors a database gives while locked, restarting or unreachable: worth waiting out.
TRANSIENT = (OperationalError, InterfaceError)
FIRST_DELAY, MAX_DELAY = 0.5, 30.0
# A job that failed on a transient error runs again, this many times at most.
MAX_ATTEMPTS = 5


def _backoff(delay: float) -> float:
    return min(delay * 2, MAX_DELAY)


class ResilientWorker(Worker):
    def run(self) -> None:
        delay = FIRST_DELAY
        while self.running:
            started = time.monotonic()
            try:
                return super().run()
            except TRANSIENT as error:
                if time.monotonic() - started > MAX_DELAY:
                    delay = FIRST_DELAY  # it had been running: a fresh outage
                logger.warning(
                    "Job worker: database unavailable (%s); retrying in %.1f s", error, delay
                )
                self.startup_delay = False
                close_old_connections()
                time.sleep(delay)
                delay = _backoff(delay)

    def run_task(self, db_task_result: DBTaskResult) -> None:
        # The job has run: its result is stored until it lands, never lost to a lock.
        set_successful, set_failed = db_task_result.set_successful, db_task_result.set_failed

        def store_failure(error: BaseException) -> None:
            if self._transient(db_task_result, error):
                return self._until_stored(self._requeue, db_task_result)
            return self._until_stored(set_failed, error)

        db_task_result.set_successful = lambda value: self._until_stored(set_successful, value)
        db_task_result.set_failed = store_failure
        super().run_task(db_task_result)

    @staticmethod
    def _transient(db_task_result: DBTaskResult, error: BaseException) -> bool:
        return isinstance(error, TRANSIENT) and len(db_task_result.worker_ids) < MAX_ATTEMPTS

    @staticmethod
    def _requeue(db_task_result: DBTaskResult) -> None:
        """Back in the queue, a little later: the job met a locked or absent database."""
        delay = FIRST_DELAY * 2 ** len(db_task_result.worker_ids)
        DBTaskResult.objects.filter(pk=db_task_result.pk).update(
            status=TaskResultStatus.READY,
            run_after=timezone.now() + timedelta(seconds=min(delay, MAX_DELAY)),
        )
        logger.warning("Job %s met a database error: queued again", db_task_result.pk)

    def _until_stored(self, store, value) -> None:
        delay = FIRST_DELAY
        while True:
            try:
                return store(value)
            except TRANSIENT as error:
                logger.warning("Job worker: result not stored (%s); retrying", error)
                close_old_connections()
                time.sleep(delay)
                delay = _backoff(delay)


class Heartbeat:
    """Records every `interval` seconds that this worker is alive, from a daemon thread."""

    def __init__(self, worker_id: str, interval: float | None = None):
        self.worker_id = worker_id
        self.interval = interval or settings.MEMORYCHAT_WORKER_HEARTBEAT_SECONDS
        self.stopped = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._loop, name="job-heartbeat", daemon=True).start()

    def stop(self) -> None:
        self.stopped.set()

    def beat(self) -> None:
        now = timezone.now()
        WorkerHeartbeat.objects.update_or_create(
            worker_id=self.worker_id, defaults={"pid": os.getpid(), "seen_at": now}
        )
        # Workers that are gone for a day are forgotten.
        WorkerHeartbeat.objects.filter(seen_at__lt=now - timedelta(days=1)).delete()

    def _loop(self) -> None:
        while not self.stopped.is_set():
            try:
                self.beat()
            except TRANSIENT as error:
                logger.warning("Job worker: heartbeat not stored (%s)", error)
            finally:
                connections.close_all()  # this thread's own connection: nothing held between
            self.stopped.wait(self.interval)


def queue_state() -> dict:
    """Jobs waiting, the oldest's age in seconds, and seconds since a worker was last seen
    (None when none ever was); `worker_alive` says whether that is recent enough."""
    now = timezone.now()
    waiting = DBTaskResult.objects.filter(status=TaskResultStatus.READY)
    oldest = waiting.aggregate(oldest=Min("enqueued_at"))["oldest"]
    seen = WorkerHeartbeat.objects.order_by("-seen_at").values_list("seen_at", flat=True).first()
    seen_ago = (now - seen).total_seconds() if seen else None
    return {
        "waiting": waiting.count(),
        "oldest_seconds": (now - oldest).total_seconds() if oldest else None,
        "worker_seen_seconds": seen_ago,
        "worker_alive": seen_ago is not None
        and seen_ago <= 3 * settings.MEMORYCHAT_WORKER_HEARTBEAT_SECONDS,
    }
