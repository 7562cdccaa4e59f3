"""Search over everything a user's memory holds: hybrid full-text + recency + importance.

``search(user=..., query=..., k=10)`` returns ranked ``Hit``s over the user's messages in all
conversations, current summaries, active facts, decisions and action items. Candidates come
from the trigger-maintained full-text index at a bounded cost (``memory.fulltext``: SQLite FTS5
or PostgreSQL full-text search), are scored with BM25 here — one ranking whatever the
database — and, when ``OPENAI_EMBEDDING_MODEL`` is set, by stored embeddings too
(``memory.embeddings``). Then:

    score = 0.6 · text relevance (BM25, normalised to the best candidate)
          + 0.15 · recency (half-life 30 days)
          + 0.25 · importance (kind prior; a fact's own importance; pinned = 1)

and, with embeddings, the text relevance is the mean of lexical and cosine similarity.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.utils import timezone

from chat.models import Conversation
from memory import fulltext
from memory.models import ActionItem, Decision, Fact, Summary
from memory.search_text import query_terms, stem, words_of

HALF_LIFE_DAYS = 30.0
W_TEXT, W_RECENCY, W_IMPORTANCE = 0.6, 0.15, 0.25
KIND_PRIOR = {"fact": 0.8, "decision": 0.7, "action_item": 0.7, "summary": 0.6, "message": 0.35}
SUMMARY_MESSAGE_IDS = 50  # a summary hit lists at most this many of the messages it covers
BM25_K1, BM25_B = 1.2, 0.75


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


def bm25_scores(terms: list[str], texts: list[str]) -> list[float]:
    """Okapi BM25 of each text for the query terms, stems on both sides; document
    frequencies from the whole index (fulltext.match_count, capped for common words)."""
    query = {stem(t): fulltext.match_count(t) for t in terms}
    total = fulltext.index_size()
    idf = {s: math.log(1 + (total - df + 0.5) / (df + 0.5)) for s, df in query.items()}
    # A stem is (nearly) a prefix of its words: only words starting like a query stem can
    # match, so only those are stemmed — the rest of a document just counts for its length.
    prefixes = {s[:3] for s in idf}
    counted = []
    for text in texts:
        words = words_of(text)
        tf: dict[str, int] = {}
        for word in words:
            if word[:3] in prefixes:
                stemmed = stem(word)
                if stemmed in idf:
                    tf[stemmed] = tf.get(stemmed, 0) + 1
        counted.append((len(words), tf))
    average = (sum(n for n, _ in counted) / len(counted)) if counted else 1.0
    scores = []
    for length, tf in counted:
        length_norm = BM25_K1 * (1 - BM25_B + BM25_B * length / (average or 1.0))
        scores.append(
            sum(idf[word] * n * (BM25_K1 + 1) / (n + length_norm) for word, n in tf.items())
        )
    return scores


def _as_datetime(value) -> datetime | None:
    """The index's created_at: a datetime (PostgreSQL) or ISO text (SQLite), in UTC."""
    if not value:
        return None
    if not isinstance(value, datetime):
        try:
            value = datetime.fromisoformat(str(value))
        except ValueError:
            return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def search(
    *, user, query: str, k: int = 10, exclude_message_ids: frozenset[int] = frozenset()
) -> list[Hit]:
    """The user's k best memories for ``query``, best first."""
    terms = query_terms(query)
    if not terms or k <= 0:
        return []
    rows = [
        r
        for r in fulltext.candidates(user.pk, terms)
        if not (r[0] == "message" and r[1] in exclude_message_ids)
    ]
    if not rows:
        return []
    relevances = bm25_scores(terms, [r[4] for r in rows])
    semantic = _semantic_scores(user, query, rows)
    best = max(relevances) or 1.0
    now = timezone.now()
    facts = Fact.objects.in_bulk([r[1] for r in rows if r[0] == "fact"])

    hits: list[Hit] = []
    for (kind, object_id, conversation_id, created_at, text), relevance in zip(
        rows, relevances, strict=True
    ):
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
