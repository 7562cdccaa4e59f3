"""`manage.py job_worker`: django-tasks-db's `db_worker` (same options) that outlives a
locked or unreachable database and records a heartbeat (chat/jobs.py)."""

import os

from django.db import close_old_connections
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django_tasks_db.management.commands import db_worker

from chat.jobs import Heartbeat, ResilientWorker

WORKER_OPTIONS = ("interval", "batch", "backend_name", "startup_delay", "max_tasks")


class Command(db_worker.Command):
    help = "Run background jobs; a transient database error is waited out, never fatal"

    def handle(self, *, verbosity, queue_name, exclude_queues, reload, worker_id, **options):
        self.configure_logging(verbosity)
        worker = ResilientWorker(
            queue_names=queue_name.split(","),
            excluded_queue_names=exclude_queues.split(",") if exclude_queues else [],
            worker_id=worker_id,
            **{name: options[name] for name in WORKER_OPTIONS},
        )

        def serve():
            heartbeat = Heartbeat(worker_id)
            heartbeat.start()
            try:
                worker.run()
            finally:
                heartbeat.stop()
                close_old_connections()

        if reload and not options["batch"]:
            if os.environ.get(DJANGO_AUTORELOAD_ENV) == "true":  # the child that runs jobs
                worker.configure_signals()
            run_with_reloader(serve)
        else:
            worker.configure_signals()
            serve()
