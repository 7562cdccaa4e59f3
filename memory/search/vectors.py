"""A user's stored vectors, held per process as one matrix: the rows nearest a query without
reading every vector from the database on every search.

The matrix follows the database. Each search reads the count and the newest id of the user's
vectors for the model (one indexed read); vectors stored since (ids above the newest seen) are
appended, and any other change (a deletion: an edited or forgotten memory, an erased account)
reloads the user's vectors. So every process sees what the others stored, and a deleted row's
vector is never compared again.

Bounded by ``MEMORYCHAT_VECTOR_CACHE_ROWS`` over all users (the least recently searched user
goes first). A user with more vectors than that has only their newest ones held (a window from
``first_id`` on, four fifths of the cap, so that appends can grow it back to the cap before it
is read anew): candidates by meaning come from their recent history, and a lexical candidate
older than the window is compared by its vector read from the database
(``embeddings.compare``). The window's counts cover its own id range only, so following it
costs the same as following a user who fits. ``VECTOR_CACHE_ROWS=0`` holds nothing.

A user's vectors are held per scope (``scope``: everywhere, or one project), each matrix
read and followed with its scope in the statement: a search compares the query with the
matrices of the scopes its conversation reads, never with another project's. A vector changing
scope is deleted and stored anew (``schema``'s triggers, ``projects.services``), so following
by count and newest id sees the change.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import connection

if TYPE_CHECKING:  # numpy loads with the first search that compares vectors
    import numpy as np

Key = tuple[str, int]  # (kind, object_id)


@dataclass
class Held:
    """One user's vectors: row i of ``matrix`` is the vector of ``keys[i]``, for i < size."""

    matrix: np.ndarray
    keys: list[Key] = field(default_factory=list)
    position: dict[Key, int] = field(default_factory=dict)
    count: int = 0  # the database's count (from first_id on) and newest id when last followed
    newest_id: int = 0
    first_id: int = 0  # the lowest id held: 0 when all the user's vectors are
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def size(self) -> int:
        return len(self.keys)

    def append(self, found: list[tuple[int, str, int, bytes]]) -> None:
        """Add rows read in id order (a vector of another length than the first is counted,
        not held)."""
        if not found:
            return
        self.count += len(found)
        self.newest_id = found[-1][0]
        dimensions = self.matrix.shape[1] or len(found[0][3]) // 4
        fresh = [(i, k, o, b) for i, k, o, b in found if len(b) == 4 * dimensions]
        needed = self.size + len(fresh)
        if needed > len(self.matrix):
            import numpy as np

            grown = np.zeros((max(needed, len(self.matrix) * 5 // 4, 64), dimensions), "float32")
            if self.size:
                grown[: self.size] = self.matrix[: self.size]
            self.matrix = grown  # a search still reading the old matrix keeps it
        for _, kind, object_id, blob in fresh:
            self.matrix[self.size] = memoryview(blob).cast("f")
            self.position[(kind, object_id)] = self.size
            self.keys.append((kind, object_id))


@dataclass(frozen=True)
class Snapshot:
    """What a search compares with: the first ``size`` rows, which later appends leave as
    they are."""

    matrix: np.ndarray
    keys: list[Key]
    position: dict[Key, int]
    size: int
    complete: bool  # False: only the user's newest vectors are here

    def cosines(self, query: np.ndarray) -> np.ndarray:
        product = self.matrix[: self.size] @ query
        return product.clip(min=0.0)

    def row_of(self, key: Key) -> int | None:
        row = self.position.get(key)
        return row if row is not None and row < self.size else None


def _empty() -> np.ndarray:
    import numpy as np

    return np.zeros((0, 0), "float32")


_held: OrderedDict[tuple[int, str, int], Held] = OrderedDict()
_lock = threading.Lock()  # guards _held itself; each user's refresh holds that user's lock


def cache_rows() -> int:
    return settings.MEMORYCHAT_VECTOR_CACHE_ROWS


def window_rows() -> int:
    """How many of their newest vectors a user past the cap starts with."""
    return max(cache_rows() * 4 // 5, 1)


def snapshot(user_id: int, model: str, scope: int = 0) -> Snapshot | None:
    """The user's vectors of one scope as of now: all of them, or their newest when more than
    the cache holds (``Snapshot.complete`` says which). None when the cache holds nothing."""
    return snapshots(user_id, model, (scope,))[0]


def snapshots(user_id: int, model: str, scopes: tuple[int, ...]) -> list[Snapshot | None]:
    """``snapshot`` of each scope, their states read in one statement (a project's
    conversation reads two scopes on every search: one round trip, not two)."""
    if cache_rows() <= 0:
        return [None for _ in scopes]
    helds = []
    with _lock:
        for scope in scopes:
            at = (user_id, model, scope)
            held = _held.get(at)
            if held is None:
                held = _held[at] = Held(_empty())
            _held.move_to_end(at)
            helds.append((at, held))
    states = _states(user_id, model, {at[2]: held.first_id for at, held in helds})
    result: list[Snapshot | None] = [_follow(at, held, states.get(at[2])) for at, held in helds]
    _evict()
    return result


def _follow(at: At, held: Held, state: tuple[int, int, int] | None) -> Snapshot:
    """The snapshot of ``held`` brought up to ``state`` (first id it was read from, count,
    newest id), read again when another search moved the window since."""
    with held.lock:
        if state is not None and state[0] == held.first_id:
            count, newest_id = state[1], state[2]
        else:
            count, newest_id = _state(at, since=held.first_id)
        if (held.count == 0 and count) or not _follows(held, count, newest_id, at):
            held = _reload(at)  # first read, or something was deleted
        elif (held.count, held.newest_id) != (count, newest_id):
            held.append(_read(at, after=held.newest_id))
            if held.size > cache_rows():
                held = _reload(at)  # grown past the cap: hold the newest only
        return Snapshot(
            held.matrix, held.keys, held.position, held.size, complete=held.first_id == 0
        )


At = tuple[int, str, int]  # (user id, model, scope)

# The rows of one (user, model, scope), the leading columns of the embedding_user_scope index.
_AT = "user_id = %s AND model = %s AND scope = %s"


def _follows(held: Held, count: int, newest_id: int, at: At) -> bool:
    """Only appends since it was read: as many more rows as new ids can hold (a deletion and
    an insert between two searches leave the count even, but not the newest id's gap)."""
    if count < held.count or newest_id < held.newest_id:
        return False
    if count == held.count:
        return newest_id == held.newest_id
    return _count_after(at, held.newest_id) == count - held.count


def _reload(at: At) -> Held:
    first_id = _window_start(at)
    fresh = Held(_empty(), first_id=first_id)
    with fresh.lock:
        fresh.append(_read(at, after=max(first_id - 1, 0)))
    with _lock:
        _held[at] = fresh
    return fresh


def _evict() -> None:
    with _lock:
        total = sum(h.size for h in _held.values())
        while total > cache_rows() and len(_held) > 1:
            _, oldest = _held.popitem(last=False)
            total -= oldest.size


def forget_all() -> None:
    """Drop every held matrix (tests: a rolled-back database reuses ids)."""
    with _lock:
        _held.clear()


def _window_start(at: At) -> int:
    """0 when all the scope's vectors fit the cache; else the id of the oldest of their
    newest ``window_rows()``."""
    if _nth_newest(at, cache_rows() + 1) is None:
        return 0
    return _nth_newest(at, window_rows()) or 0


def _nth_newest(at: At, n: int) -> int | None:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id FROM memory_embedding WHERE {_AT} ORDER BY id DESC LIMIT 1 OFFSET %s",  # noqa: S608
            [*at, n - 1],
        )
        found = cursor.fetchone()
    return int(found[0]) if found else None


def _state(at: At, *, since: int = 0) -> tuple[int, int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*), coalesce(max(id), 0) FROM memory_embedding "  # noqa: S608
            f"WHERE {_AT} AND id >= %s",
            [*at, since],
        )
        count, newest_id = cursor.fetchone()
    return int(count), int(newest_id)


def _states(user_id: int, model: str, since: dict[int, int]) -> dict[int, tuple[int, int, int]]:
    """``_state`` of each scope (scope -> its first id), in one statement: scope -> (the first
    id it was counted from, count, newest id)."""
    parts = " UNION ALL ".join(
        f"SELECT {int(scope)}, count(*), coalesce(max(id), 0) FROM memory_embedding "  # noqa: S608
        f"WHERE {_AT} AND id >= %s"
        for scope in since
    )
    params = [p for scope, first in since.items() for p in (user_id, model, scope, first)]
    with connection.cursor() as cursor:
        cursor.execute(parts, params)
        rows = cursor.fetchall()
    return {
        int(scope): (since[int(scope)], int(count), int(newest)) for scope, count, newest in rows
    }


def _count_after(at: At, after: int) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*) FROM memory_embedding WHERE {_AT} AND id > %s",  # noqa: S608
            [*at, after],
        )
        return cursor.fetchone()[0]


def _read(at: At, *, after: int) -> list[tuple[int, str, int, bytes]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id, kind, object_id, vector FROM memory_embedding "  # noqa: S608
            f"WHERE {_AT} AND id > %s ORDER BY id",
            [*at, after],
        )
        return [(i, kind, o, bytes(blob)) for i, kind, o, blob in cursor.fetchall()]
