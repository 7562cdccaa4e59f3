"""Near-duplicate memories among a turn's candidates: one of them reaches the model.

A decision (or action item, or fact) held both everywhere and in a project is often the same
thing in other words ("Use raised beds for the vegetables" and "We decided to use raised beds
for vegetables"). Two memories of the same kind are the same when one says nothing the other
does not: every content word of the shorter is in the longer (stems), the longer adds at most
as many words as they share, and they name the same numbers and the same negations ("not",
"never": "Ada is not my daughter" is not "Ada is my daughter"). A changed word ("the north
bed", "the south bed") makes them different. Messages and summaries are left alone: they are
what was said, and the search already shows the same words once.

Of each group the one kept is the project's own (the more specific scope), else the best
scored; it takes the group's best score, so its place in the ranking does not drop, and
carries the others in ``duplicates`` for the report.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from memory.search.scope import EVERYWHERE
from memory.search.terms import STOPWORDS, stem

if TYPE_CHECKING:
    from memory.recall import Recalled

KINDS = frozenset({"fact", "decision", "action_item"})
NEGATIONS = frozenset({"no", "not", "nor", "never", "t", "cannot", "without", "nothing"})
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def signature(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the content words' stems, the numbers and negations) of a memory's text."""
    words: set[str] = set()
    marks: set[str] = set()
    for word in _WORD.findall(text.lower()):
        if word in NEGATIONS or any(ch.isdigit() for ch in word):
            marks.add(word)
        elif word not in STOPWORDS:
            words.add(stem(word))
    return frozenset(words), frozenset(marks)


def same(a: tuple[frozenset[str], frozenset[str]], b: tuple[frozenset[str], frozenset[str]]):
    """Whether two signatures say the same (see the module docstring)."""
    (words_a, marks_a), (words_b, marks_b) = a, b
    if marks_a != marks_b:
        return False
    if words_a == words_b:
        return bool(words_a or marks_a)
    small, large = (words_a, words_b) if len(words_a) <= len(words_b) else (words_b, words_a)
    return len(small) >= 2 and small <= large and 2 * len(small) >= len(large)


def _rank(item: Recalled) -> tuple[int, float]:
    return (item.scope != EVERYWHERE, item.score)  # the project's own first, then the best


def distinct(items: list[Recalled]) -> list[Recalled]:
    """``items`` (best first) with one of each group of near-duplicates, best first."""
    groups: list[list[Recalled]] = []
    signatures: list[tuple[str, tuple[frozenset[str], frozenset[str]]]] = []
    kept: list[list[Recalled] | Recalled] = []
    for item in items:
        if item.kind not in KINDS:
            kept.append(item)
            continue
        mine = signature(item.text)
        for n, (kind, theirs) in enumerate(signatures):
            if kind == item.kind and same(mine, theirs):
                groups[n].append(item)
                break
        else:
            signatures.append((item.kind, mine))
            groups.append([item])
            kept.append(groups[-1])
    if len(groups) == sum(len(g) for g in groups):
        return items  # nothing to merge: the common case costs no copies
    result = []
    for entry in kept:
        if not isinstance(entry, list):
            result.append(entry)
            continue
        if len(entry) == 1:
            result.append(entry[0])
            continue
        best = max(entry, key=_rank)
        others = [other for other in entry if other is not best]
        top = max(item.score for item in entry)
        result.append(replace(best, score=top, duplicates=[*best.duplicates, *others]))
    result.sort(key=lambda item: -item.score)  # stable: a tie keeps the order given
    return result
