"""Words for search: the query's meaningful terms, and stems for the Python-side BM25.

Pure Python (no Django). The database indexes stem with Porter (SQLite FTS5) or Snowball
English (PostgreSQL); the re-ranking here uses snowballstemmer's English stemmer on both the
query and the candidates, so it is consistent with itself whatever the database.
"""

from __future__ import annotations

import re
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
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_stemmer = snowballstemmer.stemmer("english")


def query_terms(query: str) -> list[str]:
    """Distinct meaningful words of the query, in order (at most MAX_TERMS)."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        if len(word) > 1 and word not in STOPWORDS:
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    return _stemmer.stemWord(word)


def words_of(text: str) -> list[str]:
    """Every word of ``text``, lowercased (stopwords included: they count for its length)."""
    return _WORD.findall(text.lower())
