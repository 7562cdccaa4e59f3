"""Background jobs (django-tasks; run by `manage.py job_worker`, chat/jobs.py)."""

import uuid

from django.core.cache import cache
from django.utils import timezone
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


# Below the chat's jobs (0) and an import's memory build (-10): the backlog of vectors waits.
BACKLOG_PRIORITY = -20
BACKLOG_CHAIN = "embed-backlog-chain"  # the live backlog chain's token (one chain at a time)
BACKLOG_LEASE_SECONDS = 3600  # a chain silent this long is taken as lost: another may start


@task()
def embed_pending() -> int:
    """The newest recent rows without a vector (a turn's, what was just learned); any left
    (more than a job's share, or an imported history's old dates) start the backlog's chain
    of jobs, unless one is under way."""
    since = timezone.now() - embeddings.RECENT
    done = embeddings.embed_pending(limit=embeddings.JOB_ROWS, since=since)
    if done == embeddings.JOB_ROWS or embeddings.pending(1):
        token = uuid.uuid4().hex
        if cache.add(BACKLOG_CHAIN, token, BACKLOG_LEASE_SECONDS):
            embed_backlog.using(priority=BACKLOG_PRIORITY).enqueue(token)
    return done


@task()
def embed_backlog(token: str) -> int:
    """``BACKLOG_ROWS`` more rows, then the next job of the chain while rows remain. A job of
    a chain given up (its lease passed, another started) ends it."""
    if cache.get(BACKLOG_CHAIN) not in (None, token):
        return 0
    done = embeddings.embed_pending(limit=embeddings.BACKLOG_ROWS)
    if done == embeddings.BACKLOG_ROWS:
        cache.set(BACKLOG_CHAIN, token, BACKLOG_LEASE_SECONDS)
        embed_backlog.using(priority=BACKLOG_PRIORITY).enqueue(token)
    else:
        cache.delete(BACKLOG_CHAIN)
    return done


@task()
def embed_memories(keys: list[list]) -> int:
    """The vectors of memories the user just added, edited or kept, off the request's path."""
    return embeddings.embed_keys([(str(kind), int(pk)) for kind, pk in keys])
