"""A turn's set-up (the context build, storing the message) in processes of their own.

Why: in the server's process each statement of a set-up lets go of the GIL and then waits
for the event loop, which at 50 chats holds it for the other chats' chunks; a dozen
statements a turn, about a millisecond each (bench/README.md, stream, "Seventh session"). A
set-up process has its own GIL, on another core. ``MEMORYCHAT_SETUP_PROCESSES``
(``SETUP_PROCESSES``) says how many each server process starts; 0 keeps the set-up in the
server's database threads (the tests' default: a test's settings overrides and uncommitted
rows do not reach another process).

The workers are spawned, not forked (the server has threads, whose locks a fork would copy
held), set Django up once and open the databases the server's connections name (a test
database too). A job takes the conversation (a model instance, pickled) and gives back the
function's result with the conversation's title and activity time, which a set-up may
change. A pool that broke (a worker killed) is replaced at once; the job that found it
broken runs in a thread instead (``chat.turn.run_setup``): a store that had committed is
then seen as a resend (its client_id), never stored twice.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

__all__ = ["BrokenProcessPool", "enabled", "run", "shutdown", "warm"]

from django.conf import settings
from django.db import close_old_connections, connections

from chat import setup_process
from memory.selectors import system_prompt_generation, system_prompt_seen

logger = logging.getLogger(__name__)

_pools: dict[int, ProcessPoolExecutor] = {}  # by pid: a forked child never uses its parent's
_lock = threading.Lock()


# A pool that breaks twice within this many seconds (a worker that cannot start, say) is
# left alone for as long: set-ups run in threads meanwhile, not a new process each turn.
PAUSE_AFTER_BREAKS = 60.0
_broken_at: float | None = None
_paused_until = 0.0


def enabled() -> bool:
    return settings.MEMORYCHAT_SETUP_PROCESSES > 0 and time.monotonic() >= _paused_until


def _database_names() -> dict[str, str]:
    return {alias: str(connections[alias].settings_dict["NAME"]) for alias in connections}


def _pool(*, warm: bool = False) -> ProcessPoolExecutor:
    with _lock:
        pool = _pools.get(os.getpid())
        if pool is None:
            pool = _pools[os.getpid()] = ProcessPoolExecutor(
                max_workers=settings.MEMORYCHAT_SETUP_PROCESSES,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=setup_process.start,
                initargs=(_database_names(),),
            )
            if warm:  # each ping that finds no idle worker starts one more
                for _ in range(settings.MEMORYCHAT_SETUP_PROCESSES):
                    pool.submit(_ping)
        return pool


def _discard(pool: ProcessPoolExecutor) -> None:
    """Drop a broken pool and start its replacement now, so that the next turn does not wait
    for Django to load in it; or, broken twice within PAUSE_AFTER_BREAKS, pause."""
    global _broken_at, _paused_until
    with _lock:
        if _pools.get(os.getpid()) is pool:
            del _pools[os.getpid()]
            now = time.monotonic()
            if _broken_at is not None and now - _broken_at < PAUSE_AFTER_BREAKS:
                _paused_until = now + PAUSE_AFTER_BREAKS
            _broken_at = now
    pool.shutdown(wait=False, cancel_futures=True)
    warm()


def warm() -> None:
    """Start the workers (the server's start, a broken pool's replacement): a first message
    then does not wait for Django to load in them."""
    if enabled():
        _pool(warm=True)


def shutdown() -> None:
    """Stop this process's workers (tests; the server's exit does it by itself)."""
    with _lock:
        pool = _pools.pop(os.getpid(), None)
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


async def run(fn: Callable, *, conversation, **kwargs):
    """``fn(conversation=conversation, **kwargs)`` in a set-up process; the conversation's
    title and activity time come back onto ``conversation``. Raises BrokenProcessPool when
    the pool broke (it is replaced): the caller sets the turn up in a thread instead."""
    pool = _pool()
    loop = asyncio.get_running_loop()
    try:
        result, title, updated_at = await loop.run_in_executor(
            pool, _job, system_prompt_generation(), fn, conversation, kwargs
        )
    except BrokenProcessPool:
        logger.warning("a set-up process broke: replaced, this set-up runs in a thread")
        _discard(pool)
        raise
    conversation.title, conversation.updated_at = title, updated_at
    return result


# -- in the worker ----------------------------------------------------------------------------


def _ping() -> int:
    return os.getpid()


def _job(prompt_generation: int, fn: Callable, conversation, kwargs: dict):
    system_prompt_seen(prompt_generation)  # the server's cache may have dropped the prompt
    close_old_connections()
    try:
        result = fn(conversation=conversation, **kwargs)
    finally:
        close_old_connections()
    return result, conversation.title, conversation.updated_at
