"""Search in messages: the words of a query inside the messages of every conversation of a
user, archived ones included, newest first, each with a snippet around the words it matched.

The matching is the memory's full-text index (``memory.search``; its staff filter, every word
as a prefix, stemmed: "peanuts" finds "peanut"); so what the index leaves out is not found
here either: temporary conversations, failed replies and the offline provider's replies.
A query of stopwords only ("to do"), which the index cannot answer, is matched as a substring.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from chat.models import Message
from memory.search.staff import search_filter, search_terms
from memory.search.terms import stem

MAX_HITS = 30
SNIPPET_BEFORE = 60  # characters of context before the first match
SNIPPET_CHARS = 200  # at most, the whole snippet
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# Markdown's marks, left out of a snippet (it is read as text): a heading's, a quote's or a
# list item's mark at the start of a line, a code fence, emphasis and code spans.
_LINE_MARKS = re.compile(r"^[ \t]*(?:(?:#{1,6}|>|[-*+]|\d+[.)])[ \t]+|```\w*)", re.M)
_INLINE_MARKS = re.compile(r"\*\*|__|~~|`|(?<![\w*])\*(?=\w)|(?<=\w)\*(?![\w*])")


def plain(text: str) -> str:
    return _INLINE_MARKS.sub("", _LINE_MARKS.sub("", text))


class _MessageKind:
    """What ``memory.search.staff.search_filter`` needs to know of messages: every status but
    failed is indexed, so the filter asks the index only."""

    slug = "message"
    model = Message
    text_field = "content"
    indexed_statuses = tuple(s for s in Message.Status.values if s != Message.Status.FAILED)


@dataclass(frozen=True)
class MessageHit:
    message_id: int
    conversation_id: int
    title: str
    archived: bool
    role: str
    created_at: datetime
    snippet: SafeString

    @property
    def url(self) -> str:
        return f"/c/{self.conversation_id}/?found={self.message_id}#m{self.message_id}"


def message_search(*, user, query: str, limit: int = MAX_HITS) -> list[MessageHit]:
    """The user's messages holding every word of ``query`` (word forms too), newest first."""
    query = " ".join(query.split())
    if not query:
        return []
    rows = Message.objects.filter(conversation__user=user, conversation__temporary=False)
    if search_terms(query):
        statuses = list(_MessageKind.indexed_statuses)
        found = search_filter(_MessageKind, query, statuses=statuses, user_id=user.pk)
        rows = rows.filter(found)
    else:
        rows = rows.filter(content__icontains=query).exclude(status=Message.Status.FAILED)
    rows = rows.select_related("conversation").only(
        "id", "role", "content", "created_at", "conversation__id", "conversation__title",
        "conversation__archived",
    ).order_by("-created_at", "-id")[:limit]  # fmt: skip
    return [
        MessageHit(
            message_id=m.pk,
            conversation_id=m.conversation_id,
            title=m.conversation.display_title,
            archived=m.conversation.archived,
            role=m.role,
            created_at=m.created_at,
            snippet=snippet(m.content, query),
        )
        for m in rows
    ]


def _matches(word: str, terms: list[str], stems: set[str]) -> bool:
    lower = word.lower()
    return stem(lower) in stems or any(lower.startswith(term) for term in terms)


def snippet(text: str, query: str) -> SafeString:
    """Up to SNIPPET_CHARS of ``text`` around the first word the query matched, every matched
    word in ``<mark>``; everything else escaped (the text is a user's or a model's)."""
    text = plain(text)
    terms = search_terms(query)
    stems = {stem(term) for term in terms}
    spans = [m.span() for m in _WORD.finditer(text) if _matches(m.group(), terms, stems)]
    if not terms:  # stopwords only: the substring itself
        lowered, needle = text.lower(), query.lower()
        at = lowered.find(needle)
        spans = [(at, at + len(needle))] if at >= 0 else []
    first = spans[0][0] if spans else 0
    start = max(0, first - SNIPPET_BEFORE)
    if start:  # begin at a word
        space = text.find(" ", start, first)
        start = space + 1 if space >= 0 else start
    end = min(len(text), start + SNIPPET_CHARS)
    parts: list[str] = []
    at = start
    for left, right in spans:
        if left < start or right > end:
            continue
        parts.append(escape(text[at:left]))
        parts.append(f"<mark>{escape(text[left:right])}</mark>")
        at = right
    parts.append(escape(text[at:end]))
    shown = " ".join("".join(parts).split())
    prefix = "…" if start else ""
    suffix = "…" if end < len(text) else ""
    return mark_safe(f"{prefix}{shown}{suffix}")  # noqa: S308 — every text part escaped above
