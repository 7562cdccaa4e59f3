"""Full-text search of memories for the staff lists and the user's Memory page.

Current memories (active facts, live decisions, open action items) are in the trigger-maintained
``memory_search`` index (see ``memory.search.schema``): SQLite FTS5 with porter stemming, or a
PostgreSQL tsvector with a GIN index. Staff search every word of the query (AND), each as a
prefix, so "deadl proj" finds "the project deadline". Memories the index leaves out (superseded
facts, reversed decisions, finished action items, suggestions) are matched by substring
instead, every word too.

A word is searched by its root (``word_root``): its Snowball stem, less the stem's last letter
when the stem is long, as a prefix. Words of one family have stems that differ at their end
("allergy" -> "allergi", "allergic" -> "allerg"; "organise" -> "organis", "organize" ->
"organiz"), so "peanuts allergy" finds "allergic to peanuts".
"""

from __future__ import annotations

import re
from typing import Protocol

from django.db import connection
from django.db.models import Q
from django.db.models.expressions import RawSQL

from chat.models import Message
from memory.models import KeptMemory, MemoryState
from memory.search.schema import KIND_CODES
from memory.search.terms import STOPWORDS, stem


class Kind(Protocol):
    """What these searches need of a memory kind (``staff.kinds.Kind`` is one); read-only."""

    @property
    def slug(self) -> str: ...
    @property
    def model(self) -> type[KeptMemory] | type[Message]: ...  # what the index holds rows of
    @property
    def text_field(self) -> str: ...
    @property
    def indexed_statuses(self) -> tuple[str, ...]: ...


MAX_TERMS = 8
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def search_terms(query: str) -> list[str]:
    """The words to search for: lower-case, no stopwords, no repeats, at most MAX_TERMS."""
    terms: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        if word not in STOPWORDS:
            terms.setdefault(word, None)
    return list(terms)[:MAX_TERMS]


ROOT_MIN = 5  # a stem this short is its own root: "cat" must not find "category"


def word_root(word: str) -> str:
    """What a search word is matched by, as a prefix: its stem, one letter shorter when the
    stem is longer than ``ROOT_MIN`` (a family's stems differ in their last letter), and no
    longer than the word's own beginning ("dying" -> "die" keeps "dy")."""
    root = stem(word)
    if len(root) > ROOT_MIN:
        root = root[:-1]
    common = 0
    for a, b in zip(root, word, strict=False):
        if a != b:
            break
        common += 1
    return root if common == len(root) else word[: max(common, 3)]


def _indexed_ids(kind: Kind, terms: list[str], user_id: int | None) -> tuple[str, tuple]:
    """SQL for the ids of ``kind`` rows in the index that contain every term (by its root)."""
    terms = [word_root(term) for term in terms]
    if connection.vendor == "sqlite":
        match = " AND ".join(f'text : "{term}"*' for term in terms)
        if user_id is not None:
            match = f'owner : "u{int(user_id)}" AND {match}'
        # The row id is object_id * 8 + the kind's code: reading it needs no lookup of the
        # (unindexed) kind and object_id columns, ten times faster for a common word.
        return (
            "SELECT rowid / 8 FROM memory_search WHERE memory_search MATCH %s AND rowid %% 8 = %s",
            (match, KIND_CODES[kind.slug]),
        )
    tsquery = " & ".join(f"{term}:*" for term in terms)
    sql = "SELECT object_id FROM memory_search WHERE kind = %s AND tsv @@ to_tsquery('english', %s)"
    params: tuple = (kind.slug, tsquery)
    if user_id is not None:
        sql += " AND user_id = %s"
        params += (int(user_id),)
    return sql, params


def _contains(field: str, query: str) -> Q:
    """Text holding every word's root (``word_root``), or the query itself when it is only
    stopwords ("to do")."""
    terms = search_terms(query)
    if not terms:
        return Q(**{f"{field}__icontains": query})
    condition = Q()
    for term in terms:
        condition &= Q(**{f"{field}__icontains": word_root(term)})
    return condition


def _substring_ids(
    kind: Kind, query: str, statuses: set[str], user_id: int | None, *, suggested: bool = False
):
    """SQL for the ids of rows with one of ``statuses`` whose text holds ``query``'s words
    (only the suggestions among them, with ``suggested``)."""
    if issubclass(kind.model, Message):  # no state, no user of their own
        raise ValueError("messages are searched in the index only: pass indexed statuses")
    rows = kind.model.objects.filter(_contains(kind.text_field, query), status__in=sorted(statuses))
    if suggested:
        rows = rows.filter(state=MemoryState.SUGGESTED)
    if user_id is not None:
        rows = rows.filter(user_id=user_id)
    return rows.order_by().values("pk").query.sql_with_params()


def search_filter(
    kind: Kind,
    query: str,
    *,
    statuses: list[str] | None = None,
    user_id: int | None = None,
    suggestions: bool = False,
) -> Q:
    """A filter for ``kind``'s queryset: rows matching ``query``, as one ``id IN (...)``.

    ``statuses``: the statuses the list is limited to (None: all), so that a list of indexed
    statuses only never scans for substrings, and one of unindexed statuses never asks the index.
    The two parts are a UNION ALL inside the IN, not an OR of two conditions: an OR makes the
    database test the substring on every row it walks. ``suggestions``: a list of suggestions
    only (never indexed), searched by substring.
    """
    query = " ".join(query.split())
    if not query:
        return Q()
    if suggestions:  # they wait outside the index (memory mode "ask first"): by substring
        wanted = set(statuses) if statuses else set(kind.model.Status.values)
        sql, params = _substring_ids(kind, query, wanted, user_id, suggested=True)
        return Q(pk__in=RawSQL(sql, params))  # noqa: S611 — built by the ORM
    wanted = set(statuses) if statuses else set(kind.model.Status.values)
    indexed = wanted & set(kind.indexed_statuses)
    terms = search_terms(query)
    # Only stopwords ("to do"): the index cannot help, a substring search still finds them.
    by_substring = wanted - indexed if terms else wanted
    parts = []
    if indexed and terms:
        parts.append(_indexed_ids(kind, terms, user_id))
    if by_substring:
        parts.append(_substring_ids(kind, query, by_substring, user_id))
    if not parts:
        return Q(pk__in=[])
    sql = " UNION ALL ".join(part_sql for part_sql, _params in parts)
    params = tuple(param for _sql, part_params in parts for param in part_params)
    return Q(pk__in=RawSQL(sql, params))  # noqa: S611 — constant SQL, the query is a parameter


class _SummaryKind:
    slug = "summary"


def summary_search_filter(query: str, *, user_id: int) -> Q:
    """A filter for current summaries of ``user_id``'s conversations matching ``query``: the
    index (every word, as a prefix), or a substring when the query is only stopwords."""
    query = " ".join(query.split())
    if not query:
        return Q()
    terms = search_terms(query)
    if not terms:
        return _contains("text", query)
    sql, params = _indexed_ids(_SummaryKind, terms, user_id)  # type: ignore[arg-type]
    return Q(pk__in=RawSQL(sql, params))  # noqa: S611 — constant SQL, the query is a parameter
