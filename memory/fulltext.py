"""Candidates from the full-text index (see search_schema), at a cost bounded whatever the size
of the user's memory.

Ranking every match of a long message is what makes naive full-text search slow: a chat
message shares a common word with most of a user's history. So query words are split by how
many rows they match (counted up to ``COMMON_MATCHES``, cached): the rare ones are searched and
ranked by the database, the common ones only narrow the newest ``NEWEST_WINDOW`` rows that
contain them all. ``memory.retrieval`` then ranks the union with BM25 in Python.
"""

from __future__ import annotations

from django.core.cache import cache
from django.db import connection

COMMON_MATCHES = 2000  # a word in more rows than this is common
POOL = 100  # rows taken from the rare words
NEWEST_WINDOW = 120  # rows taken from the common words
MAX_COMMON = 3  # common words ANDed together, rarest first
COUNT_TTL = 600  # seconds a word's row count is cached

Row = tuple  # (kind, object_id, conversation_id, created_at, text)


def _fts_phrase(term: str) -> str:
    return '"' + term.replace('"', "") + '"'


def _fts_match(user_id: int, terms: list[str], operator: str) -> str:
    """An FTS5 query: the user's rows whose text has the terms, joined by OR or AND."""
    joined = f" {operator} ".join(_fts_phrase(t) for t in terms)
    return f'owner:"u{user_id}" AND {{text}}: ({joined})'


def match_count(term: str) -> int:
    """Rows (of every user) containing ``term``, counted up to COMMON_MATCHES."""
    key = f"fts-count:{connection.vendor}:{term}"
    count = cache.get(key)
    if count is None:
        with connection.cursor() as cursor:
            if connection.vendor == "sqlite":
                cursor.execute(
                    "SELECT count(*) FROM (SELECT rowid FROM memory_search "
                    "WHERE memory_search MATCH %s LIMIT %s)",
                    ["{text}: " + _fts_phrase(term), COMMON_MATCHES],
                )
            else:
                cursor.execute(
                    "SELECT count(*) FROM (SELECT 1 FROM memory_search "
                    "WHERE tsv @@ plainto_tsquery('english', %s) LIMIT %s) s",
                    [term, COMMON_MATCHES],
                )
            count = cursor.fetchone()[0]
        cache.set(key, count, COUNT_TTL)
    return count


def index_size() -> int:
    key = f"fts-size:{connection.vendor}"
    size = cache.get(key)
    if size is None:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM memory_search")
            size = cursor.fetchone()[0]
        cache.set(key, size, COUNT_TTL)
    return max(size, 1)


def candidates(user_id: int, terms: list[str]) -> list[Row]:
    counts = {term: match_count(term) for term in terms}
    rare = [t for t in terms if counts[t] < COMMON_MATCHES]
    common = sorted((t for t in terms if counts[t] >= COMMON_MATCHES), key=counts.get)
    rows: dict[tuple, Row] = {}
    if rare:
        for row in _rare(user_id, rare):
            rows[row[:2]] = row
    if common and len(rows) < POOL:
        for row in _newest_with_all(user_id, common[:MAX_COMMON]):
            rows.setdefault(row[:2], row)
    return list(rows.values())


_COLUMNS = "kind, object_id, conversation_id, created_at, text"


def _rare(user_id: int, terms: list[str]) -> list[Row]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            match = _fts_match(user_id, terms, "OR")
            cursor.execute(
                f"SELECT {_COLUMNS} FROM memory_search WHERE memory_search MATCH %s "  # noqa: S608
                "ORDER BY bm25(memory_search, 1.0, 0.0) LIMIT %s",
                [match, POOL],
            )
        else:
            # ts_rank, not ts_rank_cd: a third cheaper per match, and BM25 re-ranks anyway.
            cursor.execute(
                f"SELECT {_COLUMNS} FROM memory_search, to_tsquery('english', %s) q "  # noqa: S608
                "WHERE user_id = %s AND tsv @@ q ORDER BY ts_rank(tsv, q) DESC LIMIT %s",
                [" | ".join(terms), user_id, POOL],
            )
        return cursor.fetchall()


def _newest_with_all(user_id: int, terms: list[str]) -> list[Row]:
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            match = _fts_match(user_id, terms, "AND")
            cursor.execute(
                f"SELECT {_COLUMNS} FROM memory_search WHERE memory_search MATCH %s "  # noqa: S608
                "ORDER BY rowid DESC LIMIT %s",
                [match, NEWEST_WINDOW],
            )
        else:
            cursor.execute(
                f"SELECT {_COLUMNS} FROM memory_search "  # noqa: S608
                "WHERE user_id = %s AND tsv @@ to_tsquery('english', %s) "
                "ORDER BY created_at DESC LIMIT %s",
                [user_id, " & ".join(terms), NEWEST_WINDOW],
            )
        return cursor.fetchall()
