"""The background model slots: at most BACKGROUND_MODEL_CONCURRENCY background requests
(summary runs, embedding jobs) talk to a model at a time, so the chat keeps the rest of a
server's slots.

A llama.cpp or Ollama server answers a fixed number of requests at once (``--parallel``); one
summary run on a single-slot server made a chat message wait 55 s for its first token. Serve
the chat with at least one slot more than this limit (or give summaries a server of their own,
``SUMMARY_BASE_URL``).

The slots are cache keys taken with ``cache.add`` (atomic on Redis and in-process caches), so
they hold across processes and machines when the cache is shared (REDIS_URL), and within the
one worker process otherwise. A holder renews its slot every few seconds while it talks to
the model, so a slot whose holder died (a killed worker) frees itself after ``LEASE_SECONDS``
instead of after the longest request.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
import uuid
from collections.abc import Iterator

from django.conf import settings
from django.core.cache import cache

POLL_SECONDS = 0.25
LEASE_SECONDS = 10

logger = logging.getLogger(__name__)


class NoSlot(Exception):
    """No background slot came free in time."""


@contextlib.contextmanager
def background_slot(*, wait: float | None = None) -> Iterator[int]:
    """Hold one background slot for the block; waits up to ``wait`` seconds for one."""
    limit = settings.BACKGROUND_MODEL_CONCURRENCY
    # A holder may keep its slot for a whole background request (BACKGROUND_TIMEOUT).
    wait = settings.BACKGROUND_TIMEOUT if wait is None else wait
    token = uuid.uuid4().hex
    deadline = time.monotonic() + wait
    while True:
        for number in range(limit):
            key = f"llm-background-slot-{number}"
            if cache.add(key, token, LEASE_SECONDS):
                done = threading.Event()
                renewing = threading.Thread(target=_renew, args=(key, token, done), daemon=True)
                renewing.start()
                try:
                    yield number
                finally:
                    done.set()
                    renewing.join()
                    if cache.get(key) == token:
                        cache.delete(key)
                return
        if time.monotonic() >= deadline:
            raise NoSlot(
                f"all {limit} background model slot(s) stayed busy for {wait:.0f} s; "
                "the job will be tried again"
            )
        time.sleep(POLL_SECONDS)


def _renew(key: str, token: str, done: threading.Event) -> None:
    """Keep the lease while the block runs (the holder is alive)."""
    while not done.wait(LEASE_SECONDS / 3):
        try:
            if cache.get(key) != token:
                return
            cache.touch(key, LEASE_SECONDS)
        except Exception:  # the cache is away for a moment: the next renewal retries
            logger.warning("could not renew a background model slot", exc_info=True)
