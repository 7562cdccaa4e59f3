"""Words for search: the query's meaningful terms, their stems, and the dates a query names.

Pure Python (no Django). The database indexes stem with Porter (SQLite FTS5) or Snowball
English (PostgreSQL); the ranking here uses snowballstemmer's English stemmer (in C, through
PyStemmer) on both the query and the candidates, so it is consistent with itself whatever the
database.

Besides stopwords, a question about the memory itself carries words about the conversation
("what did I mention across our sessions", "in order", "summarise"): they say how to answer,
not what to find, and are dropped from the query (``QUESTION_WORDS``) unless nothing else is
left.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache

import snowballstemmer

MAX_TERMS = 24
_STOPWORDS_TEXT = """
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers herself him himself his how i if in into is it its itself
just me more most my myself no nor not now of off on once only or other our ours ourselves out
over own same she should so some such than that the their theirs them themselves then there
these they this those through to too under until up very was we were what when where which
while who whom why will with would you your yours yourself yourselves tell know remember said
say told again please also get got let us really thing things
"""
STOPWORDS = frozenset(_STOPWORDS_TEXT.split())
QUESTION_WORDS = frozenset(
    [
        "conversation",
        "conversations",
        "chat",
        "chats",
        "discuss",
        "discussed",
        "discussion",
        "discussions",
        "mention",
        "mentioned",
        "mentions",
        "brought",
        "bring",
        "order",
        "throughout",
        "across",
        "session",
        "sessions",
        "talk",
        "talked",
        "ask",
        "asked",
        "asking",
        "time",
        "times",
        "different",
        "aspect",
        "aspects",
        "item",
        "items",
        "list",
        "summary",
        "summarize",
        "summarise",
        "comprehensive",
        "walk",
        "give",
        "provide",
        "describe",
    ]
)
# A query about the present: recency counts for more than a tie-break.
NOW_WORDS = frozenset(
    [
        "now",
        "current",
        "currently",
        "latest",
        "still",
        "anymore",
        "recent",
        "recently",
        "today",
        "newest",
        "nowadays",
    ]
)
# A query asking for a summary wants whole exchanges, the assistant's side as much as the user's.
_SUMMARY = re.compile(r"\b(?:summar|overview|recap|comprehensive|walk me through)", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
# A stemmer keeps the word it works on (in C with PyStemmer, which snowballstemmer uses when
# installed: 18x faster, the same stems), so each thread has its own.
_stemmers = threading.local()


def query_terms(query: str) -> list[str]:
    """Distinct meaningful words of the query, in order (at most MAX_TERMS)."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        if len(word) > 1 and word not in STOPWORDS:
            seen.setdefault(word, None)
    terms = list(seen)
    content = [t for t in terms if t not in QUESTION_WORDS]
    return (content or terms)[:MAX_TERMS]


def asks_about_now(query: str) -> bool:
    return any(word in NOW_WORDS for word in _WORD.findall(query.lower()))


def asks_for_summary(query: str) -> bool:
    return bool(_SUMMARY.search(query))


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    stemmer = getattr(_stemmers, "english", None)
    if stemmer is None:
        stemmer = _stemmers.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(word)


def words_of(text: str) -> list[str]:
    """Every word of ``text``, lowercased (stopwords included: they count for its length)."""
    return _WORD.findall(text.lower())


# A word ranking counts: a run of letters and digits at a word boundary (not after "_").
_RANKED_WORD = re.compile(r"\b[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Analysed:
    """A text's words as ranking reads them, stemmed once: ``counts`` holds how often each
    stem comes, for the words that start with their stem's first three letters; ``odd`` the
    rare words that do not ("dying" -> "die"), as (stem, the word's first three letters),
    since ranking counts a word only when it starts like a query stem. A dict lookup per
    query stem, not a scan of the text per stem: on long turns (BEAM's replies run to 2 kB
    of stems) the scans were most of a search's CPU."""

    counts: dict[str, int]
    odd: tuple[tuple[str, str], ...]

    def frequencies(self, stems: dict[str, float], prefixes: frozenset[str]) -> dict[str, int]:
        """Term frequency of each of ``stems`` (the query's) the text holds, in the query's
        order (a score summed over them is the same to the last bit in every process);
        ``prefixes``: their first three letters."""
        counts = self.counts
        tf = {s: counts[s] for s in stems if s in counts}
        if self.odd:
            for s, start in self.odd:
                if s in stems and any(start.startswith(p) for p in prefixes):
                    tf[s] = tf.get(s, 0) + 1
            if len(tf) > 1:
                tf = {s: tf[s] for s in stems if s in tf}
        return tf


@lru_cache(maxsize=65536)
def _counted_stem(word: str) -> str:
    """A word's stem as ``Analysed.counts`` holds it; "" for an odd word."""
    s = stem(word)
    return s if word.startswith(s[:3]) else ""


def analyse(text: str) -> Analysed:
    """The stems of ``text``'s words, for ``Analysed.frequencies``."""
    counts: dict[str, int] = {}
    odd = []
    for word in _RANKED_WORD.findall(text.lower()):
        s = _counted_stem(word)
        if s:
            counts[s] = counts.get(s, 0) + 1
        else:
            odd.append((stem(word), word[:3]))
    return Analysed(counts, tuple(odd))


ANALYSED_ENTRIES = 20_000  # texts whose analysis is kept per process (0.3-3.5 kB each)
_analysed: OrderedDict[bytes, Analysed] = OrderedDict()


def analysed(text: str, owner: tuple = ()) -> Analysed:
    """``analyse(text)``, kept for the texts seen last: a candidate row is ranked again on
    many turns, and its analysis depends on its text only. Keyed by a digest, so the cache
    holds stems, not the texts, and by ``owner`` (the row, hence its user) where there is one,
    so that how fast one user's search runs does not depend on another's rows."""
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16)
    digest.update(repr(owner).encode())
    key = digest.digest()
    found = _analysed.get(key)
    if found is not None:
        _analysed.move_to_end(key)
        return found
    found = _analysed[key] = analyse(text)
    if len(_analysed) > ANALYSED_ENTRIES:
        _analysed.popitem(last=False)
    return found


MONTHS = {
    name: number
    for number, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = re.compile(
    r"\b(?:in|during|since|from|of|early|late|mid)\s+(?:mid-|early\s+|late\s+)?("
    + "|".join(n for n in MONTHS if len(n) > 3 or n == "may")
    + r")\b(?:\s+(\d{4}))?",
    re.IGNORECASE,
)
_MONTH_NAMES = "|".join(sorted(MONTHS, key=len, reverse=True))
# A day with its year, either way round: "25 May, 2022", "May 25th 2022", "October 13, 2023".
_DAY = re.compile(
    rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH_NAMES})\.?|({_MONTH_NAMES})\.?\s+"
    rf"(\d{{1,2}})(?:st|nd|rd|th)?),?\s+(\d{{4}})\b",
    re.IGNORECASE,
)
_YEAR = re.compile(r"\b(?:in|during|of|since)\s+(\d{4})\b", re.IGNORECASE)
_RELATIVE = {
    "today": (0, 1),
    "yesterday": (1, 1),
    "last week": (14, 14),
    "this week": (7, 8),
    "last month": (62, 62),
    "this month": (31, 32),
    "last year": (730, 730),
}


@dataclass(frozen=True)
class DateRange:
    start: date
    end: date  # exclusive

    @property
    def is_day(self) -> bool:
        return self.end - self.start <= timedelta(days=1)

    def holds(self, when: datetime | None) -> bool:
        return when is not None and self.start <= when.date() < self.end


def query_dates(query: str, *, today: date, latest: date | None = None) -> list[DateRange]:
    """The date ranges a query names: "in March (2024)", "on 25 May, 2022", "in 2023",
    "last week", "yesterday". A month
    without a year is the latest such month up to ``latest`` (the newest of what the user's
    memory holds for the query, when older than ``today``: "in June", asked of talk that
    ended in 2023, is June 2023)."""
    ranges = []
    anchor = min(today, latest) if latest is not None else today
    for match in _MONTH.finditer(query):
        month = MONTHS[match.group(1).lower()]
        year = int(match.group(2)) if match.group(2) else anchor.year
        if not match.group(2) and (year, month) > (anchor.year, anchor.month):
            year -= 1
        start = date(year, month, 1)
        end = date(year + (month == 12), month % 12 + 1, 1)
        ranges.append(DateRange(start, end))
    for match in _DAY.finditer(query):
        day = int(match.group(1) or match.group(4))
        month = MONTHS[(match.group(2) or match.group(3)).lower()]
        try:
            start = date(int(match.group(5)), month, day)
        except ValueError:
            continue  # "31 June": no such day
        ranges.append(DateRange(start, start + timedelta(days=1)))
    for match in _YEAR.finditer(query):
        year = int(match.group(1))
        if 1900 < year < 2200:
            ranges.append(DateRange(date(year, 1, 1), date(year + 1, 1, 1)))
    lowered = query.lower()
    for phrase, (back, length) in _RELATIVE.items():
        if phrase in lowered:
            start = today - timedelta(days=back)
            ranges.append(DateRange(start, start + timedelta(days=length)))
    return ranges
