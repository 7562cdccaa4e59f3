"""Run queued background jobs in tests with the real django-tasks-db worker loop."""

from django_tasks_db.management.commands.db_worker import Worker


def run_pending_tasks() -> None:
    """Process every ready job, then return (the worker's --batch mode, minus signals, so it
    also works off the main thread)."""
    Worker(
        queue_names=["*"],
        interval=0,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id="tests",
        excluded_queue_names=[],
    ).run()
