"""Search over everything a user's memory holds: hybrid full-text + recency + importance.

``search(user=..., query=..., k=10)`` returns ranked ``Hit``s over the user's messages in all
conversations, current summaries, active facts, decisions and action items. Full text comes
from the trigger-maintained index (see ``search_schema``: SQLite FTS5 with porter stemming, or
PostgreSQL full-text search); when ``OPENAI_EMBEDDING_MODEL`` is set, stored embeddings add a
semantic score (see ``memory.embeddings``). Candidates are then re-ranked:

    score = 0.6 · text relevance (normalised to the best hit)
          + 0.15 · recency (half-life 30 days)
          + 0.25 · importance (kind prior; a fact's own importance; pinned = 1)

and, with embeddings, the text relevance is the mean of lexical and cosine similarity.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.db import connection
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from chat.models import Conversation
from memory.models import ActionItem, Decision, Fact, Summary

CANDIDATES = 60
MAX_TERMS = 24
HALF_LIFE_DAYS = 30.0
W_TEXT, W_RECENCY, W_IMPORTANCE = 0.6, 0.15, 0.25
KIND_PRIOR = {"fact": 0.8, "decision": 0.7, "action_item": 0.7, "summary": 0.6, "message": 0.35}
SUMMARY_MESSAGE_IDS = 50  # a summary hit lists at most this many of the messages it covers

STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "tell",
        "know",
        "remember",
        "said",
        "say",
        "told",
        "again",
        "please",
        "also",
        "get",
        "got",
        "let",
        "us",
        "really",
        "thing",
        "things",
    ]
)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass
class Hit:
    kind: str
    id: int
    score: float
    text: str
    message_ids: list[int] = field(default_factory=list)
    conversation_id: int | None = None
    date: str = ""
    source: str = ""
    why: str = ""


def query_terms(query: str) -> list[str]:
    """Distinct meaningful words of the query, in order."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        if len(word) > 1 and word not in STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


def _lexical(user_id: int, terms: list[str], limit: int) -> list[tuple]:
    """(kind, object_id, conversation_id, created_at, text, relevance>0) best first."""
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            match = f'owner:"u{user_id}" AND (' + " OR ".join(f'"{t}"' for t in terms) + ")"
            cursor.execute(
                "SELECT kind, object_id, conversation_id, created_at, text, "
                "-bm25(memory_search, 1.0, 0.0) AS relevance FROM memory_search "
                "WHERE memory_search MATCH %s ORDER BY bm25(memory_search, 1.0, 0.0) LIMIT %s",
                [match, limit],
            )
        else:
            tsquery = " | ".join(terms)
            cursor.execute(
                "SELECT kind, object_id, conversation_id, created_at, text, "
                "ts_rank_cd(tsv, q, 32) AS relevance "
                "FROM memory_search, to_tsquery('english', %s) q "
                "WHERE user_id = %s AND tsv @@ q ORDER BY relevance DESC LIMIT %s",
                [tsquery, user_id, limit],
            )
        return cursor.fetchall()


def _as_datetime(value) -> datetime | None:
    if isinstance(value, datetime):
        return value if timezone.is_aware(value) else timezone.make_aware(value, UTC)
    parsed = parse_datetime(str(value)) if value else None
    if parsed is not None and timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, UTC)
    return parsed


def search(
    *, user, query: str, k: int = 10, exclude_message_ids: frozenset[int] = frozenset()
) -> list[Hit]:
    """The user's k best memories for ``query``, best first."""
    terms = query_terms(query)
    if not terms or k <= 0:
        return []
    rows = _lexical(user.pk, terms, CANDIDATES + len(exclude_message_ids))
    rows = [r for r in rows if not (r[0] == "message" and r[1] in exclude_message_ids)]
    if not rows:
        return []
    semantic = _semantic_scores(user, query, rows)
    best = max(r[5] for r in rows) or 1.0
    now = timezone.now()
    facts = Fact.objects.in_bulk([r[1] for r in rows if r[0] == "fact"])

    hits: list[Hit] = []
    for kind, object_id, conversation_id, created_at, text, relevance in rows:
        text_score = relevance / best
        if semantic is not None:
            text_score = (text_score + semantic.get((kind, object_id), 0.0)) / 2
        created = _as_datetime(created_at)
        age_days = max((now - created).total_seconds() / 86400, 0.0) if created else 365.0
        recency = math.pow(0.5, age_days / HALF_LIFE_DAYS)
        importance = KIND_PRIOR[kind]
        fact = facts.get(object_id) if kind == "fact" else None
        if fact is not None:
            importance = 1.0 if fact.pinned else max(importance, fact.importance)
        score = W_TEXT * text_score + W_RECENCY * recency + W_IMPORTANCE * importance
        why = f"text {text_score:.2f}, recency {recency:.2f}, importance {importance:.2f}"
        hits.append(
            Hit(
                kind=kind,
                id=object_id,
                score=score,
                text=text,
                conversation_id=conversation_id,
                date=created.date().isoformat() if created else "",
                why=why,
            )
        )
    hits.sort(key=lambda h: h.score, reverse=True)
    hits = hits[:k]
    _attach_sources(hits)
    return hits


def _semantic_scores(user, query, rows) -> dict | None:
    from memory import embeddings

    if not embeddings.enabled():
        return None
    return embeddings.similarities(user=user, query=query, keys=[(r[0], r[1]) for r in rows])


def _attach_sources(hits: list[Hit]) -> None:
    """Fill message_ids and the source conversation's title, a few queries for all hits."""
    titles = dict(
        Conversation.objects.filter(
            pk__in={h.conversation_id for h in hits if h.conversation_id}
        ).values_list("pk", "title")
    )
    by_kind: dict[str, list[Hit]] = {}
    for hit in hits:
        hit.source = titles.get(hit.conversation_id, "") or ""
        by_kind.setdefault(hit.kind, []).append(hit)
    for hit in by_kind.get("message", []):
        hit.message_ids = [hit.id]
    for kind, model in (("fact", Fact), ("decision", Decision), ("action_item", ActionItem)):
        group = by_kind.get(kind, [])
        if not group:
            continue
        through = model.source_messages.through
        links: dict[int, list[int]] = {}
        owner = f"{model._meta.model_name}_id"
        for object_id, message_id in through.objects.filter(
            **{f"{owner}__in": [h.id for h in group]}
        ).values_list(owner, "message_id"):
            links.setdefault(object_id, []).append(message_id)
        for hit in group:
            hit.message_ids = sorted(links.get(hit.id, []))
    for hit in by_kind.get("summary", []):
        summary = Summary.objects.filter(pk=hit.id).only("conversation_id", "covered_through")
        summary = summary.first()
        if summary is not None:
            from chat.models import Message

            hit.message_ids = list(
                Message.objects.filter(
                    conversation_id=summary.conversation_id, pk__lte=summary.covered_through
                )
                .order_by("-id")
                .values_list("id", flat=True)[:SUMMARY_MESSAGE_IDS]
            )[::-1]
