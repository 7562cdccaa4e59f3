"""A readable diff of two summary versions (difflib), as segments the template escapes."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_TOKEN = re.compile(r"\s+|[^\s]+")


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
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            add("equal", a[i1:i2])
            continue
        if tag in ("delete", "replace"):
            add("delete", a[i1:i2])
            deleted += sum(1 for t in a[i1:i2] if not t.isspace())
        if tag in ("insert", "replace"):
            add("insert", b[j1:j2])
            inserted += sum(1 for t in b[j1:j2] if not t.isspace())
    return TextDiff(segments=segments, inserted=inserted, deleted=deleted)


def list_diff(old: list, new: list) -> list[Segment]:
    """Items of a list field (topics, open questions) added, removed or kept."""
    old_items, new_items = [str(x) for x in old or []], [str(x) for x in new or []]
    out = [Segment("delete", x) for x in old_items if x not in new_items]
    out += [Segment("equal", x) for x in new_items if x in old_items]
    out += [Segment("insert", x) for x in new_items if x not in old_items]
    return out
