"""What a background job tells the tabs (a title, a "Remembered" notice), brought to them by
the server process when the channel layer cannot carry the job's own frames.

With Redis the worker's frames reach every server process. The in-memory layer (``make run``
on one machine) lives in the server process alone, and the worker is a process of its own: its
frames reach nobody. So here the server process that enqueued the job waits for it, asking
whether it has ended every POLL seconds for at most ``Watch.wait``, and then sends what the
job stored, as the worker would have (``Watch.then``, in a database thread, through
``chat.fanout``). One small read a second per job watched; only the jobs a turn, a branch
switch or staff's re-summarise started are (a view's: ``watch_from_view``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django_tasks.exceptions import TaskResultDoesNotExist

from chat.dbthread import in_db_thread

logger = logging.getLogger(__name__)

POLL = 1.0  # seconds between two reads of the job's state
WAIT = 300.0  # seconds: a job queued behind others and a slow model, then the tabs go without

_watches: set[asyncio.Task] = set()  # held here: the loop keeps only weak references


@dataclass(frozen=True)
class Watch:
    """A job to wait for. Both callables are synchronous and run in a database thread."""

    name: str  # for the logs and the asyncio task
    ended: Callable[[], bool | None]  # True once the job ended, None when it never will
    then: Callable[[], None]  # tell the tabs what the job stored
    wait: float = WAIT


def frames_cannot_cross() -> bool:
    """Whether a frame sent by another process (the job worker) misses this one's tabs."""
    return isinstance(get_channel_layer(), InMemoryChannelLayer)


def task_ended(task, result_id: str) -> bool | None:
    """A ``Watch.ended`` for a django-tasks job: whether it finished; None once its result is
    gone (the queue was cleared)."""
    try:
        return task.get_result(result_id).is_finished
    except TaskResultDoesNotExist:
        return None


def watch(job: Watch) -> None:
    """On the event loop: wait for ``job`` in the background, then run its ``then``. A job
    already watched here (staff asked twice for a run already queued) is not watched twice."""
    name = f"job-watch-{job.name}"
    loop = asyncio.get_running_loop()
    if any(t.get_name() == name and t.get_loop() is loop and not t.done() for t in _watches):
        return
    task = loop.create_task(_watch(job), name=name)
    _watches.add(task)
    task.add_done_callback(_watches.discard)


def watch_from_view(*jobs: Watch) -> None:
    """From a synchronous view served over ASGI (a thread of the server's): the watches start
    on the server's event loop, as a consumer's would, in one trip to it. Served without one
    (WSGI), the temporary loop ends with the call and nothing is watched: no tab is on that
    process."""

    async def start() -> None:
        for job in jobs:
            watch(job)

    async_to_sync(start)()


async def _watch(job: Watch) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + job.wait
    while True:
        await asyncio.sleep(POLL)
        try:
            ended = await in_db_thread(job.ended)()
        except Exception:  # a database that is away for a moment: read again
            logger.debug("job %s: state not read", job.name, exc_info=True)
            ended = False
        if ended is None:
            return
        if ended:
            break
        if loop.time() > deadline:
            logger.info("job %s: not ended after %.0f s", job.name, job.wait)
            return
    try:
        await in_db_thread(job.then)()
    except Exception:  # stored: a reload shows it
        logger.warning("job %s: could not tell the tabs", job.name, exc_info=True)
