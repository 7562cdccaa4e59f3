"""Derived text without the memories that wait for the user (memory mode "ask first").

A summary run in "ask first" mode stores what it found as suggestions; its summary, topics and
lists must not state them before the user keeps them, or the suggestion would reach a prompt,
the search index and the reports through the summary. ``withhold`` removes from an
``Extraction`` every summary sentence that states one of the given memory texts, the topics
drawn from them and the decisions and action items they name.

A sentence states a memory when it holds at least half of the memory's content words (cut to
six letters, possessives dropped, "user", "assistant" and "name" left out): "Alice mentioned her
daughter Ada" states "The user's daughter's name is Ada". Erring towards leaving out: a
sentence that shares half the words of a suggestion is not worth the leak.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace

from memory.extraction.sentences import BULLET_RE
from memory.extraction.text import STOPWORDS, normalise_key
from memory.extraction.types import Extraction

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_GENERIC = frozenset({"user", "users", "assistant", "team", "name", "called"})
_SENTENCE_END = re.compile(r"(?<=[.!?\u2026])\s+")


def _tokens(text: str) -> frozenset[str]:
    out = set()
    for word in _WORD.findall(text.lower().replace("\u2019", "'")):
        word = re.sub(r"'s?$", "", word)
        if len(word) < 3 or word in STOPWORDS or word in _GENERIC:
            continue
        out.add(word[:6] if word.isalpha() else word)
    return frozenset(out)


def states(sentence: str, memory: frozenset[str]) -> bool:
    """Whether ``sentence`` holds at least half of ``memory``'s content words."""
    if not memory:
        return False
    shared = len(memory & _tokens(sentence))
    return shared >= max(1, math.ceil(len(memory) / 2))


def _summary_without(summary: str, memories: list[frozenset[str]]) -> str:
    lines = []
    for line in summary.splitlines():
        bullet = BULLET_RE.match(line)
        body = line[bullet.end() :] if bullet else line
        kept = [
            s
            for s in _SENTENCE_END.split(body.strip())
            if s and not any(states(s, m) for m in memories)
        ]
        if kept:
            lines.append((bullet.group(0) if bullet else "") + " ".join(kept))
    return "\n".join(lines)


def withhold(result: Extraction, texts: list[str]) -> Extraction:
    """``result`` without what states any of ``texts`` (the suggestions' texts)."""
    memories = [m for m in (_tokens(t) for t in texts) if m]
    if not memories:
        return result
    keys = {normalise_key(t) for t in texts}
    every_word = frozenset().union(*memories)
    return replace(
        result,
        summary=_summary_without(result.summary, memories),
        topics=[
            t
            for t in result.topics
            if not (_tokens(t) and _tokens(t) <= every_word)
            and not any(states(t, m) for m in memories)
        ],
        decisions=[
            d
            for d in result.decisions
            if normalise_key(d.what) not in keys and not any(states(d.what, m) for m in memories)
        ],
        action_items=[
            a
            for a in result.action_items
            if normalise_key(a.what) not in keys and not any(states(a.what, m) for m in memories)
        ],
    )


def withhold_items(items: list[str], texts: list[str]) -> list[str]:
    """``items`` (plain item texts, such as the open items a summary carries over) without
    those that state any of ``texts``."""
    memories = [m for m in (_tokens(t) for t in texts) if m]
    keys = {normalise_key(t) for t in texts}
    return [
        i for i in items if normalise_key(i) not in keys and not any(states(i, m) for m in memories)
    ]
