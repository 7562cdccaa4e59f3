"""Full-text search of memories for the staff lists.

Current memories (active facts, live decisions, open action items) are in the trigger-maintained
``memory_search`` index (see ``memory.search_schema``): SQLite FTS5 with porter stemming, or a
PostgreSQL tsvector with a GIN index. Staff search every word of the query (AND), each as a
prefix, so "deadl proj" finds "the project deadline". Memories the index leaves out (superseded
facts, reversed decisions, finished action items) are matched by substring instead.
"""

from __future__ import annotations

import re

from django.db import connection
from django.db.models import Q
from django.db.models.expressions import RawSQL

from memory.retrieval import STOPWORDS
from memory.staff.kinds import Kind

MAX_TERMS = 8
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def search_terms(query: str) -> list[str]:
    """The words to search for: lower-case, no stopwords, no repeats, at most MAX_TERMS."""
    terms: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        if word not in STOPWORDS:
            terms.setdefault(word, None)
    return list(terms)[:MAX_TERMS]


def _indexed_ids(kind: Kind, terms: list[str], user_id: int | None) -> RawSQL:
    """A subquery of the ids of ``kind`` rows in the index that contain every term."""
    if connection.vendor == "sqlite":
        match = " AND ".join(f'text : "{term}"*' for term in terms)
        if user_id is not None:
            match = f'owner : "u{int(user_id)}" AND {match}'
        return RawSQL(
            "SELECT object_id FROM memory_search WHERE memory_search MATCH %s AND kind = %s",
            (match, kind.slug),
        )
    tsquery = " & ".join(f"{term}:*" for term in terms)
    sql = "SELECT object_id FROM memory_search WHERE kind = %s AND tsv @@ to_tsquery('english', %s)"
    params: tuple = (kind.slug, tsquery)
    if user_id is not None:
        sql += " AND user_id = %s"
        params += (int(user_id),)
    return RawSQL(sql, params)  # noqa: S611 — constant SQL, the query goes in as a parameter


def search_filter(
    kind: Kind, query: str, *, statuses: list[str] | None = None, user_id: int | None = None
) -> Q:
    """A filter for ``kind``'s queryset: rows matching ``query``.

    ``statuses``: the statuses the list is limited to (None: all), so that a list of indexed
    statuses only never scans for substrings, and one of unindexed statuses never asks the index.
    """
    query = " ".join(query.split())
    if not query:
        return Q()
    wanted = set(statuses) if statuses else set(kind.model.Status.values)
    indexed = wanted & set(kind.indexed_statuses)
    unindexed = wanted - indexed
    terms = search_terms(query)
    result = Q(pk__in=[])
    if indexed:
        if terms:
            result |= Q(pk__in=_indexed_ids(kind, terms, user_id))
        else:  # only stopwords ("to do"): a substring search still finds them
            result |= Q(status__in=sorted(indexed), **{f"{kind.text_field}__icontains": query})
    if unindexed:
        result |= Q(status__in=sorted(unindexed), **{f"{kind.text_field}__icontains": query})
    return result
