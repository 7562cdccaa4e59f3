# ruff: noqa: S608 — SQL built from constants; the user's words are always parameters.
"""Reads of the full-text index (see ``schema``): per-user statistics, candidates, rows.

Everything a ranking needs is the searching user's own, in the scopes the searching
conversation reads (``scope``): their row and word counts (``memory_search_stats``, kept by the
triggers per scope) and how many of their rows hold each query term (counted in those rows
only, cached until they change). Nothing of another user's text, nor of a project the
conversation is outside, reaches its ranking: every statement here matches the scopes.

Candidates, at a bounded cost that keeps old matching rows: every term a user's rows hold
fewer than ``COMMON_MATCHES`` times is read whole from the index (row ids only, at most that
many per term), whatever its age; the rows are scored by the inverse document frequency of the
terms they hold, and the best ``POOL`` are read and ranked with BM25 (``ranking``). A term in
more rows than that weighs little in BM25: it is counted (on a sample of the newest rows, for
its idf), scored on the pool, and adds only the newest ``NEWEST_WINDOW`` rows holding the
commonest terms together.

A common term's count is cached and reused while the user's index grows by less than
``COUNT_GROWTH`` (every turn adds rows, and recounting every common term of every query on
each turn costs more than the search itself on a long history); any shrink (a deletion)
counts again. A rare term's rows are read on every search, so its count is always exact.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.core.cache import caches
from django.db import connection

from memory.models import Summary
from memory.search import scope as scoping
from memory.search.schema import KIND_CODES
from memory.search.scope import ALL, EVERYWHERE, Scopes

logger = logging.getLogger(__name__)

COMMON_MATCHES = 4000  # a term in more of a user's rows than this is common
POOL = 200  # rows read and ranked with BM25
NEWEST_WINDOW = 60  # rows taken from the common terms together
SAMPLE = 2000  # newest rows a common term's frequency is estimated on
COUNT_TTL = 3600  # seconds a common term's count is cached
COUNT_GROWTH = 0.02  # a cached count serves while the user's rows grow by less than this
MERGE_PAGES = 16  # pages of index segments merged after each batch of turns (SQLite)


@dataclass(frozen=True)
class Stats:
    rows: int
    average_words: float
    df: dict[str, int]  # query term -> the user's rows holding it
    # rare term -> the ids of the rows holding it, read with its count (candidates use them)
    rowids: dict[str, list[int]] = field(default_factory=dict)
    # what the index statements match: the scopes read, or (ALL,) when they hold every row of
    # the user (a project's conversation of a user with no other project's rows)
    matched: Scopes = (EVERYWHERE,)


@dataclass
class Row:
    kind: str
    object_id: int
    conversation_id: int | None
    created_at: datetime | None
    role: str
    words: int
    text: str
    scope: int = EVERYWHERE  # the row's project, or EVERYWHERE


def word_count(text: str) -> int:
    """A text's length as the index counts it (schema.words): spaces + 1."""
    return text.count(" ") + 1


def _fts_phrase(term: str) -> str:
    return '"' + term.replace('"', "") + '"'


def _owner_match(user_id: int, scopes: Scopes, terms: list[str], operator: str = "OR") -> str:
    joined = f" {operator} ".join(_fts_phrase(t) for t in terms)
    return f"{scoping.owner_tokens(user_id, scopes)} AND text: ({joined})"


def _pg_owner(scopes: Scopes) -> str:
    """PostgreSQL: the user's rows in these scopes (the user id is the first parameter)."""
    if scopes == (ALL,):
        return "user_id = %s"
    return f"user_id = %s AND {scoping.sql_in('scope', scopes)}"


def tidy() -> None:
    """SQLite: merge a few pages of the full-text index's segments (FTS5's 'merge' command).
    Every write adds a small segment, and a search looks up each of its words in every
    segment: merged a little after each batch of turns, off the replies' path, the index stays
    near one segment (a turn's word lookups took 1.8 ms with the segments FTS5's own merging
    leaves, 1.1 ms so merged). The work per call is bounded by MERGE_PAGES."""
    if connection.vendor != "sqlite":
        return  # PostgreSQL's GIN index has its own pending list, cleaned by autovacuum
    with connection.cursor() as cursor:
        # A negative page count merges segments of different levels too, not only full levels.
        cursor.execute(
            "INSERT INTO memory_search(memory_search, rank) VALUES('merge', %s)", [-MERGE_PAGES]
        )


def user_size(user_id: int, scopes: Scopes = (EVERYWHERE,)) -> tuple[int, int]:
    """(rows, words) the index holds for the user in these scopes."""
    return _sizes(user_id, scopes)[:2]


def _sizes(user_id: int, scopes: Scopes) -> tuple[int, int, int]:
    """(rows, words) of the user in these scopes, and the user's rows in every scope."""
    inside = scoping.sql_in("scope", scopes)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT coalesce(sum(CASE WHEN {inside} THEN row_count ELSE 0 END), 0), "
            f"coalesce(sum(CASE WHEN {inside} THEN word_count ELSE 0 END), 0), "
            "coalesce(sum(row_count), 0) FROM memory_search_stats WHERE user_id = %s",
            [user_id],
        )
        found = cursor.fetchone()
    return (int(found[0]), int(found[1]), int(found[2])) if found else (0, 0, 0)


def user_stats(user_id: int, terms: list[str], scopes: Scopes = (EVERYWHERE,)) -> Stats:
    """The user's statistics for ``terms`` over the rows of ``scopes``. A term's count comes
    from the cache (keyed by the scopes' row count) or, with its row ids, from one statement
    for all uncounted terms: the ids of a rare term are its count, and the candidates need
    them anyway."""
    rows, words, every = _sizes(user_id, scopes)
    # The scopes read hold every row of the user: the statements match the user alone (one
    # posting list on SQLite, no scope filter on PostgreSQL); ``candidates`` reads the rows
    # with their scope, so a row written into another project meanwhile is still left out.
    matched = (ALL,) if rows == every else scopes
    where = "-".join(str(s) for s in scopes)
    keys = {term: f"fts-df:{connection.vendor}:{user_id}:{where}:{term}" for term in terms}
    # Fewer rows than a common term needs: every count is read exactly, none is cached, so
    # the cache is not asked (on Redis a round trip a search, for most users).
    cached = _cached_counts(list(keys.values())) if rows >= COMMON_MATCHES else {}
    df: dict[str, int] = {}
    to_read = []
    for term in terms:
        count = _still_valid(cached.get(keys[term]), rows)
        if count is not None and count >= COMMON_MATCHES:
            df[term] = count  # common: its row ids are not needed
        else:
            to_read.append(term)
    rowids = _rowids_many(user_id, matched, to_read)
    fresh = {}
    for term in to_read:
        ids = rowids[term]
        if len(ids) < COMMON_MATCHES:
            df[term] = len(ids)  # a rare term's ids are read on every search: nothing kept
        else:
            del rowids[term]
            df[term] = _count(user_id, matched, term, rows)
            fresh[keys[term]] = (df[term], rows)
    if fresh:
        _cache_counts(fresh)
    return Stats(
        rows=max(rows, 1),
        average_words=(words / rows) if rows else 1.0,
        df=df,
        rowids=rowids,
        matched=matched,
    )


# The counts are a shortcut: with the cache away (Redis down) the search counts afresh.
def _cached_counts(keys: list[str]) -> dict:
    try:
        return caches["search"].get_many(keys)
    except Exception:
        logger.warning("search cache unavailable: counting afresh", exc_info=True)
        return {}


def _cache_counts(counts: dict) -> None:
    try:
        caches["search"].set_many(counts, COUNT_TTL)
    except Exception:
        logger.warning("search cache unavailable: counts not kept", exc_info=True)


def _still_valid(cached, rows: int) -> int | None:
    """A cached (count, rows when counted) while the index has only grown a little since."""
    try:
        count, counted_at = cached
    except (TypeError, ValueError):
        return None
    if counted_at <= rows < counted_at * (1 + COUNT_GROWTH):
        return int(count)
    return None


def _count(user_id: int, scopes: Scopes, term: str, rows: int) -> int:
    """The user's rows holding ``term``: counted up to COMMON_MATCHES, estimated beyond on the
    newest SAMPLE rows."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT count(*) FROM (SELECT rowid FROM memory_search WHERE memory_search "
                "MATCH %s LIMIT %s)",
                [_owner_match(user_id, scopes, [term]), COMMON_MATCHES],
            )
        else:
            cursor.execute(
                f"SELECT count(*) FROM (SELECT 1 FROM memory_search WHERE {_pg_owner(scopes)} "
                "AND tsv @@ plainto_tsquery('english', %s) LIMIT %s) s",
                [user_id, term, COMMON_MATCHES],
            )
        count = cursor.fetchone()[0]
        if count < COMMON_MATCHES or rows <= COMMON_MATCHES:
            return count
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT count(*) FROM (SELECT rowid FROM memory_search WHERE memory_search "
                "MATCH %s ORDER BY rowid DESC LIMIT %s) s WHERE rowid IN (SELECT rowid FROM "
                "memory_search WHERE memory_search MATCH %s)",
                [
                    scoping.owner_tokens(user_id, scopes),
                    SAMPLE,
                    _owner_match(user_id, scopes, [term]),
                ],
            )
        else:
            cursor.execute(
                f"SELECT count(*) FROM (SELECT tsv FROM memory_search WHERE {_pg_owner(scopes)} "
                "ORDER BY created_at DESC LIMIT %s) s WHERE tsv @@ plainto_tsquery('english', %s)",
                [user_id, SAMPLE, term],
            )
        sampled = cursor.fetchone()[0]
    return max(COMMON_MATCHES, round(rows * sampled / min(SAMPLE, rows)))


def idf(stats: Stats, term: str) -> float:
    df = stats.df.get(term, 0)
    return math.log(1 + (stats.rows - df + 0.5) / (df + 0.5))


def candidates(
    user_id: int, terms: list[str], stats: Stats, scopes: Scopes = (EVERYWHERE,)
) -> list[Row]:
    """The rows of ``scopes`` worth ranking for ``terms`` (see the module docstring)."""
    rare = [t for t in terms if 0 < stats.df[t] < COMMON_MATCHES]
    common = sorted((t for t in terms if stats.df[t] >= COMMON_MATCHES), key=lambda t: stats.df[t])
    weight: dict[int, float] = {}
    for term in rare:
        term_idf = idf(stats, term)
        ids = stats.rowids.get(term)
        for rowid in _rowids(user_id, stats.matched, term) if ids is None else ids:
            weight[rowid] = weight.get(rowid, 0.0) + term_idf
    # Best by the idf of the terms held, then newest (row ids grow with time).
    chosen = sorted(weight, key=lambda r: (-weight[r], -r))[:POOL]
    if common and len(chosen) < POOL:
        seen = set(chosen)
        newest = _newest_with_all(user_id, common[:3], stats, stats.matched)
        chosen += [r for r in newest if r not in seen]
    return _rows(chosen, owner=user_id, scopes=scopes)


def _rowids(user_id: int, scopes: Scopes, term: str) -> list[int]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT rowid FROM memory_search WHERE memory_search MATCH %s LIMIT %s",
                [_owner_match(user_id, scopes, [term]), COMMON_MATCHES],
            )
        else:
            cursor.execute(
                f"SELECT rowid FROM memory_search WHERE {_pg_owner(scopes)} "
                "AND tsv @@ plainto_tsquery('english', %s) LIMIT %s",
                [user_id, term, COMMON_MATCHES],
            )
        return [r for (r,) in cursor.fetchall()]


def _rowids_many(user_id: int, scopes: Scopes, terms: list[str]) -> dict[str, list[int]]:
    """``_rowids`` of every term, in one statement (each term's subquery keeps its limit)."""
    found: dict[str, list[int]] = {term: [] for term in terms}
    if not terms:
        return found
    if connection.vendor == "sqlite":
        part = (
            "SELECT {n}, rowid FROM (SELECT rowid FROM memory_search "
            "WHERE memory_search MATCH %s LIMIT %s)"
        )
        params = [p for t in terms for p in (_owner_match(user_id, scopes, [t]), COMMON_MATCHES)]
    else:
        part = (
            "(SELECT {n}, rowid FROM memory_search WHERE " + _pg_owner(scopes) + " "
            "AND tsv @@ plainto_tsquery('english', %s) LIMIT %s)"
        )
        params = [p for t in terms for p in (user_id, t, COMMON_MATCHES)]
    sql = " UNION ALL ".join(part.format(n=n) for n in range(len(terms)))
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for n, rowid in cursor.fetchall():
            found[terms[n]].append(rowid)
    return found


# PostgreSQL: the newest rows holding all of some common terms. Its planner cannot know how
# many rows hold them together, so it reads every one from the text index and sorts them (on
# 1M rows, 93k matches: 380 ms). Where they are many, the newest few are among the user's
# newest rows: those are looked through first, along the (user, time) index.
_PG_NEWEST_RECENT = (
    "SELECT rowid FROM (SELECT rowid, tsv, created_at FROM memory_search WHERE {owner} "
    "ORDER BY created_at DESC LIMIT %s) recent "
    "WHERE tsv @@ plainto_tsquery('english', %s) ORDER BY created_at DESC LIMIT %s"
)
_PG_NEWEST_ALL = (
    "SELECT rowid FROM memory_search WHERE {owner} "
    "AND tsv @@ plainto_tsquery('english', %s) ORDER BY created_at DESC LIMIT %s"
)
RECENT_ROWS = 5000  # PostgreSQL: the newest rows looked through before the whole index


def _newest_with_all(
    user_id: int, terms: list[str], stats: Stats, scopes: Scopes = (EVERYWHERE,)
) -> list[int]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":  # FTS5 walks the terms' row ids from the newest
            cursor.execute(
                "SELECT rowid FROM memory_search WHERE memory_search MATCH %s "
                "ORDER BY rowid DESC LIMIT %s",
                [_owner_match(user_id, scopes, terms, "AND"), NEWEST_WINDOW],
            )
            return [r for (r,) in cursor.fetchall()]
        words = " ".join(terms)
        whole = stats.rows <= RECENT_ROWS
        # The rarest term bounds how many of the newest rows can hold them all.
        fewest = min(stats.df.get(t, 0) for t in terms)
        if whole or fewest * RECENT_ROWS >= NEWEST_WINDOW * stats.rows:
            cursor.execute(
                _PG_NEWEST_RECENT.format(owner=_pg_owner(scopes)),
                [user_id, RECENT_ROWS, words, NEWEST_WINDOW],
            )
            found = [r for (r,) in cursor.fetchall()]
            # Enough among the newest rows: no older row can be newer than them.
            if whole or len(found) == NEWEST_WINDOW:
                return found
        # Few rows hold the terms together, so the text index's answer is short: read it.
        cursor.execute(
            _PG_NEWEST_ALL.format(owner=_pg_owner(scopes)), [user_id, words, NEWEST_WINDOW]
        )
        return [r for (r,) in cursor.fetchall()]


_COLUMNS = "kind, object_id, conversation_id, created_at, role, words, text, scope"
# Messages the user had forgotten stay in their conversation, not in recall: those up to the
# newest one a blank "forgotten" summary version covers (memory.services.forget; the same
# rule as memory.selectors.forgotten_through, read here in the rows' own statement).
_NOT_FORGOTTEN = (
    "NOT (kind = 'message' AND object_id <= (SELECT coalesce(max(f.covered_through), 0) "
    "FROM memory_summary f WHERE f.conversation_id = memory_search.conversation_id "
    "AND f.model = %s))"
)


def rows_of(user_id: int, keys: list[tuple[str, int]], scopes: Scopes = (EVERYWHERE,)) -> list[Row]:
    """The user's index rows of these (kind, object_id) in ``scopes``: those still indexed
    there and theirs (a vector may outlive its row's place in the index, e.g. a fact since
    retired)."""
    rowids = [object_id * 8 + KIND_CODES[kind] for kind, object_id in keys if kind in KIND_CODES]
    return _rows(rowids, owner=user_id, scopes=scopes)


def _rows(rowids: list[int], *, owner: int | None = None, scopes: Scopes = ()) -> list[Row]:
    """The rows (of ``owner`` in ``scopes`` only, when given), without the messages their
    user forgot."""
    if not rowids:
        return []
    found = []
    owned = "" if owner is None else f"AND user_id = %s AND {scoping.sql_in('scope', scopes)} "
    with connection.cursor() as cursor:
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            marks = ", ".join(["%s"] * len(chunk))
            cursor.execute(
                f"SELECT {_COLUMNS} FROM memory_search WHERE rowid IN ({marks}) "
                f"{owned}AND {_NOT_FORGOTTEN}",
                [*chunk, *([] if owner is None else [owner]), Summary.FORGOTTEN],
            )
            found += cursor.fetchall()
    return [
        Row(kind, object_id, conv, as_datetime(created), role, words or 1, text, int(scope))
        for kind, object_id, conv, created, role, words, text, scope in found
    ]


def as_datetime(value) -> datetime | None:
    """The index's created_at: a datetime (PostgreSQL) or ISO text (SQLite), in UTC."""
    if not value:
        return None
    if not isinstance(value, datetime):
        try:
            value = datetime.fromisoformat(str(value))
        except ValueError:
            return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
