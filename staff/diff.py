"""A readable diff of two summary versions (difflib), as segments the template escapes."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\s+|[^\s]+")
SHORT_EQUAL = 2  # words: a shorter unchanged run between two changes is folded into them


@dataclass(frozen=True)
class Segment:
    op: str  # "equal", "insert" or "delete"
    text: str


@dataclass(frozen=True)
class TextDiff:
    segments: list[Segment]
    inserted: int  # words
    deleted: int

    @property
    def unchanged(self) -> bool:
        return not (self.inserted or self.deleted)


def text_diff(old: str, new: str) -> TextDiff:
    """Word by word, whitespace kept, so the diff reads as the text does."""
    a, b = _TOKEN.findall(old or ""), _TOKEN.findall(new or "")
    segments: list[Segment] = []
    inserted = deleted = 0

    def add(op: str, tokens: list[str]) -> None:
        if not tokens:
            return
        text = "".join(tokens)
        if segments and segments[-1].op == op:
            segments[-1] = Segment(op, segments[-1].text + text)
        else:
            segments.append(Segment(op, text))

    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, old_tokens, new_tokens in _cleanup(a, b, matcher.get_opcodes()):
        if tag == "equal":
            add("equal", old_tokens)
            continue
        add("delete", old_tokens)
        add("insert", new_tokens)
        deleted += sum(1 for t in old_tokens if not t.isspace())
        inserted += sum(1 for t in new_tokens if not t.isspace())
    return TextDiff(segments=segments, inserted=inserted, deleted=deleted)


def _cleanup(a: list[str], b: list[str], opcodes) -> list[tuple[str, list[str], list[str]]]:
    """Fold short runs of equal words between changes into the change around them, so a
    rewritten sentence reads as the old sentence struck out and the new one inserted, not as
    words interleaved around every "the" the two happen to share."""
    ops = [(tag, a[i1:i2], b[j1:j2]) for tag, i1, i2, j1, j2 in opcodes]
    folded: list[tuple[str, list[str], list[str]]] = []
    for index, (tag, old, new) in enumerate(ops):
        words = sum(1 for t in old if not t.isspace())
        between = 0 < index < len(ops) - 1
        if tag != "equal" or (between and words <= SHORT_EQUAL):
            tag = "change"
        if tag == "change" and folded and folded[-1][0] == "change":
            _tag, old_before, new_before = folded.pop()
            old, new = old_before + old, new_before + new
        folded.append((tag, old, new))
    return folded


def list_diff(old: list, new: list) -> list[Segment]:
    """Items of a list field (topics, open questions) added, removed or kept."""
    old_items, new_items = [str(x) for x in old or []], [str(x) for x in new or []]
    out = [Segment("delete", x) for x in old_items if x not in new_items]
    out += [Segment("equal", x) for x in new_items if x in old_items]
    out += [Segment("insert", x) for x in new_items if x not in old_items]
    return out
