"""Background jobs (django-tasks; run by `manage.py job_worker`, chat/jobs.py)."""

from django_tasks import task

from memory import services
from memory.search import embeddings


@task()
def summarise_conversation(run_id: int) -> str:
    run = services.summary_run_execute(run_id=run_id)
    return run.status if run is not None else "taken by another worker"


@task()
def watch_summary_run(run_id: int) -> str:
    return services.summary_run_watch(run_id=run_id)


@task()
def embed_pending() -> int:
    return embeddings.embed_pending()


@task()
def embed_memories(keys: list[list]) -> int:
    """The vectors of memories the user just added, edited or kept, off the request's path."""
    return embeddings.embed_keys([(str(kind), int(pk)) for kind, pk in keys])
