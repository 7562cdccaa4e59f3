"""Who said a turn, and whether a question names them: "What did Caroline say about...".

Pure Python (no Django). A turn's speaker is the name it starts with in the form of a
transcript ("Caroline: I went to..." — talk pasted or imported from elsewhere, and LoCoMo's
turns), else, for the user's own messages, the user's first name. A question that names a
person is mostly answered by what that person said (95 % of LoCoMo-dev's evidence turns are
spoken by a person the question names), while the other side's turns hold the name only as an
address ("Hey Caroline!"): ranking weighs the named speaker's turns up (``ranking``).
"""

from __future__ import annotations

import re
from functools import lru_cache

# "Name:" or "Name Surname:" at the start of a turn, a capital first: a transcript's speaker.
_PREFIX = re.compile(r"([A-Z][\w'.-]{0,30}(?: [A-Z][\w'.-]{0,30})?):\s")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def prefix_speaker(text: str) -> str:
    """The transcript speaker a turn starts with, casefolded ("" when none)."""
    return _speaker_in(text[:64])


@lru_cache(maxsize=65536)
def _speaker_in(head: str) -> str:
    found = _PREFIX.match(head)
    return found.group(1).casefold() if found else ""


def speaker_of(text: str, role: str, user_name: str) -> str:
    """Who said it: the transcript's speaker, else the user (``user_name``, casefolded) for the
    user's own messages; "" when unknown."""
    return prefix_speaker(text) or (user_name if role == "user" else "")


def query_words(query: str) -> frozenset[str]:
    """The query's words, casefolded, to look names up in."""
    return frozenset(_WORD.findall(query.casefold()))


def named(speaker: str, words: frozenset[str]) -> bool:
    """Whether the query (its ``words``) names this speaker (every part of the name)."""
    return bool(speaker) and all(part in words for part in _WORD.findall(speaker))
