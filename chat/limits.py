"""Abuse limits on Django's cache: sliding-window counters (shared across processes when the
cache is Redis, per process with the default local-memory cache).

A fixed window lets twice the limit through across a boundary (the limit at its last second,
the limit again at the next one), so the count is the sliding-window estimate: this window's
events plus the previous window's, weighted by how much of it the last ``window`` seconds
still cover. ``cache.add`` + ``cache.incr`` are atomic on both backends, so concurrent
requests cannot both slip under a limit. A refusal names the limit and when to try again.
"""

from __future__ import annotations

import contextlib
import math
import time
from dataclasses import dataclass

from django.core.cache import cache


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    retry_after: int = 0  # seconds until one more event would be allowed


def hit(key: str, *, limit: int, window: int) -> Verdict:
    """Count one event for ``key``, or refuse it (uncounted) when the last ``window`` seconds
    already hold ``limit``. A limit of 0 disables the check."""
    if limit <= 0:
        return Verdict(True)
    now = time.time()
    start = int(now) - int(now) % window
    bucket = f"limit:{key}:{start}"
    cache.add(bucket, 0, timeout=2 * window + 1)  # read again as the previous window
    try:
        count = cache.incr(bucket)
    except ValueError:  # expired between add and incr
        cache.add(bucket, 1, timeout=2 * window + 1)
        count = 1
    previous = cache.get(f"limit:{key}:{start - window}", 0)
    elapsed = now - start
    if previous * (1 - elapsed / window) + count <= limit:
        return Verdict(True)
    with contextlib.suppress(ValueError):  # gone meanwhile: nothing to take back
        cache.decr(bucket)  # a refused event does not count
    return Verdict(
        False, retry_after=_seconds_until_allowed(previous, count - 1, limit, window, elapsed)
    )


def _seconds_until_allowed(
    previous: int, current: int, limit: int, window: int, elapsed: float
) -> int:
    """Seconds from now until ``previous * (1 - t / window) + current + 1 <= limit``, where
    ``t`` counts from the start of this window."""
    if current + 1 <= limit:  # this window has room once enough of the previous one slides out
        due = window * (1 - (limit - current - 1) / previous)
    else:  # this window is full: it becomes the previous one and must slide out in turn
        due = window + window * (1 - (limit - 1) / current)
    return max(1, math.ceil(round(due - elapsed, 6)))  # 20.000000000000004 s is 20 s


def client_ip(request) -> str:
    """The client's address as the server sees it. Behind a proxy, the ASGI server puts the
    client's address here from trusted proxies only (uvicorn --proxy-headers
    --forwarded-allow-ips, see docs/deploy.md); a client-sent X-Forwarded-For is never read."""
    return request.META.get("REMOTE_ADDR", "") or "0.0.0.0"  # noqa: S104 (a key, not a bind)


class SocketSlots:
    """At most ``limit`` open websockets per user, across processes when the cache is Redis.

    Each socket holds one of the user's ``limit`` slots, a cache key taken with ``cache.add``
    (atomic: two sockets cannot take one slot) for ``lease`` seconds and renewed while the
    socket is open; closing frees it. A server that dies without closing its sockets frees
    their slots when the leases run out, so a crash never locks a user out for long.
    Blocking cache calls: run these methods in a worker thread, not on the event loop.
    """

    def __init__(self, user_id: int, owner: str, *, limit: int, lease: int):
        self.user_id, self.owner, self.limit, self.lease = user_id, owner, limit, lease
        self.key: str | None = None

    def claim(self) -> bool:
        if self.limit <= 0:
            return True
        for slot in range(self.limit):
            key = f"sockets:{self.user_id}:{slot}"
            if cache.add(key, self.owner, timeout=self.lease):
                self.key = key
                return True
        return False

    def renew(self) -> None:
        if self.key is not None and cache.get(self.key) == self.owner:
            cache.touch(self.key, self.lease)
        elif self.key is not None:  # expired (a long pause) and maybe taken: take it back
            cache.add(self.key, self.owner, timeout=self.lease)

    def release(self) -> None:
        if self.key is not None and cache.get(self.key) == self.owner:
            cache.delete(self.key)
        self.key = None
