"""The job worker outlives a locked or unreachable database, and a worker that dies is
replaced (issue 40, medium 2)."""

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
from django.conf import settings
from django.db import connection, connections
from django_tasks_db.models import DBTaskResult

from chat.jobs import ResilientWorker
from chat.models import WorkerHeartbeat
from tests.jobs.tasks import rename

pytestmark = pytest.mark.django_db(transaction=True)


def wait_for(predicate, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    pytest.fail(f"timed out waiting for {what}")


def start_worker(worker_class=ResilientWorker):
    worker = worker_class(
        queue_names=["*"],
        excluded_queue_names=[],
        interval=0.05,
        batch=False,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="test-worker",
    )
    errors = []

    def run():
        try:
            worker.run()
        except BaseException as error:  # the test reports a worker that died
            errors.append(error)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return worker, thread, errors


@pytest.fixture
def short_busy_timeout():
    """New connections (the worker thread's) wait 0.2 s for a lock, not 20."""
    options = connections.settings["default"].setdefault("OPTIONS", {})
    before = options.get("timeout")
    options["timeout"] = 0.2
    yield
    options["timeout"] = before


@pytest.mark.skipif(
    not settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"), reason="SQLite's lock"
)
def test_jobs_go_on_after_the_database_was_locked_past_the_busy_timeout(alice, short_busy_timeout):
    """Another process holds SQLite's write lock for 2 s, ten times the busy timeout; the
    worker waits it out, and the job queued meanwhile runs once the lock is released."""
    rename.enqueue(alice.pk, "before")
    holder = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    worker, thread, errors = start_worker()
    try:
        time.sleep(2.0)
        assert not errors, f"the worker died: {errors!r}"
        assert DBTaskResult.objects.get().status != "SUCCESSFUL"
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    wait_for(lambda: DBTaskResult.objects.get().status == "SUCCESSFUL", 15, "the job")
    rename.enqueue(alice.pk, "after")
    wait_for(lambda: DBTaskResult.objects.filter(status="SUCCESSFUL").count() == 2, 15, "more")
    alice.refresh_from_db()
    assert alice.first_name == "after" and not errors
    worker.running = False
    thread.join(5)


@pytest.mark.skipif(
    not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"), reason="a server"
)
def test_jobs_go_on_after_the_database_dropped_the_workers_connection(alice):
    """The server ends the worker's connection (a restart, a failover); the worker reconnects
    and the next job runs."""
    # Only the worker's connection is ended: the connections other tests' threads keep open
    # to this database must outlive this test.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")
        before = [pid for (pid,) in cursor.fetchall()]
    worker, thread, errors = start_worker()
    rename.enqueue(alice.pk, "before")
    wait_for(lambda: DBTaskResult.objects.filter(status="SUCCESSFUL").count() == 1, 15, "job")
    # The worker may close its connection between polls (CONN_MAX_AGE=0): end whatever
    # connection it opens during a second of polling.
    deadline = time.monotonic() + 1.0
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> ALL(%s)",
                [before],
            )
            time.sleep(0.01)
    rename.enqueue(alice.pk, "after")
    wait_for(lambda: DBTaskResult.objects.filter(status="SUCCESSFUL").count() == 2, 20, "more")
    assert not errors
    worker.running = False
    thread.join(5)


def database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"


def test_a_killed_worker_is_replaced(alice):
    """`job_supervisor` (what `make run` and `make serve` start) starts another worker when
    its worker is killed; the new one drains the queue."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "DATABASE_URL": database_url(),
        "WORKER_HEARTBEAT_SECONDS": "1",
    }
    supervisor = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "job_supervisor",
            "--",
            "--interval",
            "0.2",
            "--no-reload",
            "--no-startup-delay",
        ],
        cwd=settings.BASE_DIR,
        env=env,
    )
    try:
        first = wait_for(
            lambda: WorkerHeartbeat.objects.values_list("pid", flat=True).first(), 30, "a worker"
        )
        os.kill(first, signal.SIGKILL)
        second = wait_for(
            lambda: (
                WorkerHeartbeat.objects.exclude(pid=first).values_list("pid", flat=True).first()
            ),
            30,
            "another worker",
        )
        assert second != first
        rename.enqueue(alice.pk, "after")
        wait_for(lambda: DBTaskResult.objects.filter(status="SUCCESSFUL").exists(), 15, "job")
    finally:
        supervisor.send_signal(signal.SIGTERM)
        supervisor.wait(15)
    assert supervisor.returncode == 0
    with pytest.raises(ProcessLookupError):
        os.kill(second, 0)


def test_a_job_that_met_a_locked_database_runs_again(alice):
    """A job failing on a transient database error is queued again, not lost as failed."""
    from tests.jobs import tasks

    tasks.FLAKY_CALLS.clear()
    tasks.flaky_rename.enqueue(alice.pk, "again")
    worker, thread, errors = start_worker()
    try:
        wait_for(lambda: DBTaskResult.objects.get().status == "SUCCESSFUL", 20, "the job")
    finally:
        worker.running = False
        thread.join(5)
    alice.refresh_from_db()
    assert alice.first_name == "again" and len(tasks.FLAKY_CALLS) == 2 and not errors
