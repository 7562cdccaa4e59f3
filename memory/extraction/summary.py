"""Summary: the extractive rolling summary.

Bullet lines ("- ..."), at most ``SUMMARY_MAX_WORDS`` words counting the bullets; each line at
most ``MAX_UNIT_WORDS`` words. New sentences are scored by the log-frequency of their content
words over the square root of their number, +3 when they produced a fact, decision, action or
open question, x1.5 for user sentences, x0.6 for assistant sentences; greetings, thanks and
other sentences under four words are skipped unless they produced something. They are rewritten
in the third person ("I" -> "the user", "we" -> "the team", "you" -> "the assistant" for user
messages; "I" -> "the assistant", "you" -> "the user" for assistant messages), questions as
'The user asked: "..."', checkboxes as "To do:"/"Done:"; a sentence whose content words match a
line already kept (Jaccard >= 0.8) is skipped; the best fill up to 60% of the budget (more if
the previous summary is short) and are kept in conversation order. The previous summary (split
into lines and sentences) keeps the rest of the budget: whole when it fits, otherwise its most
informative sentences (fact statements about the user, names, numbers, decision/deadline/
preference words; the first sentence gets a bonus, and among equals the more recent wins) are
kept in their order, and at least its first sentence always survives (truncated if need be).
Short previous sentences that state a subject a new fact now restates ("favourite colour") are
replaced by the new fact's text. With no new sentence and a previous summary within budget,
the previous summary is returned unchanged.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from memory.extraction.sentences import BULLET_RE, FILLER, Sent
from memory.extraction.subjects import subject_of
from memory.extraction.text import (
    I,
    content_tokens,
    normalise_key,
    sentence,
    similar_tokens,
    squash,
    third_person,
)
from memory.extraction.types import MAX_UNIT_WORDS, NEW_SHARE, SUMMARY_MAX_WORDS, ExtractedFact

_LOW_VALUE = re.compile(
    r"^(?:(?:hi|hello|hey|thanks|thank\s+you|ok|okay|cool|great|nice|sure|yes|no|bye|"
    r"good\s+(?:morning|night|evening))\b[\s!.,]*)+$",
    I,
)
_INFORMATIVE = re.compile(
    r"\b(?:decided|agreed|deadline|due|prefers?|wants?|name|called|will|must|needs?|todo|"
    r"action|because|lives?|works?|project|uses?|chose|plan|launch|meeting|budget)\b",
    I,
)


def _unit_words(text: str) -> int:
    """Words a summary line costs, its "- " bullet included."""
    return len(text.split()) + 1


def _truncate_words(text: str, limit: int) -> str:
    words = text.split()
    if len(words) <= limit:
        return text
    return " ".join(words[:limit]).rstrip(",;:") + "\u2026"


def _previous_units(previous: str) -> list[str]:
    units: list[str] = []
    seen: set[str] = set()
    for line in (previous or "").splitlines():
        line = BULLET_RE.sub("", line).strip()
        if not line:
            continue
        for piece in re.split(r"(?<=[.!?\u2026])\s+(?=[A-Z0-9\"'(])", line):
            piece = squash(piece)
            key = normalise_key(piece)
            if piece and key and key not in seen:
                seen.add(key)
                units.append(_truncate_words(piece, MAX_UNIT_WORDS))
    return units


_FACT_LINE = re.compile(
    r"\bthe\s+user(?:'s)?\b.*?\b(?:is|are|has|lives|works|prefers|likes|loves|hates|wants|"
    r"was\s+born|speaks|uses)\b",
    I,
)


def _informativeness(unit: str, position: int, total: int) -> float:
    """How much a previous-summary sentence is worth keeping when the summary must shrink."""
    words = _unit_words(unit)
    score = min(len(_INFORMATIVE.findall(unit)), 3) * 1.0
    score += min(0.5 * len(re.findall(r"(?<=[a-z,;:] )[A-Z][\w-]+", unit)), 1.5)
    score += 0.7 if re.search(r"\d", unit) else 0.0
    score += 2.5 if words <= 26 and _FACT_LINE.search(unit) else 0.0
    score += 2.0 if position == 0 else 0.0
    score += 0.5 * position / max(1, total - 1)  # among equals, the more recent
    return score + min(words, 25) / 25


class _Seen:
    """Keys and content-token sets of summary lines, for "already said" checks."""

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.tokens: list[set[str]] = []

    def add(self, text: str) -> None:
        self.keys.add(normalise_key(text))
        self.tokens.append(content_tokens(text))

    def has(self, text: str) -> bool:
        if normalise_key(text) in self.keys:
            return True
        tokens = content_tokens(text)
        return any(similar_tokens(tokens, other, 0.8) for other in self.tokens)


def _new_units(sents: list[Sent]) -> list[tuple[float, Sent]]:
    freq: Counter[str] = Counter()
    token_sets = [content_tokens(s.raw) for s in sents]
    for tokens in token_sets:
        freq.update(tokens)
    units: list[tuple[float, Sent]] = []
    for s, tokens in zip(sents, token_sets, strict=True):
        n_words = len(s.raw.split())
        if not s.tags and (n_words < 4 or _LOW_VALUE.search(s.text)):
            continue
        if s.role == "assistant" and not s.tags and n_words < 6:
            continue
        if len(re.findall(r"[^\W\d_]", s.raw)) < len(s.raw) * 0.5:
            continue  # mostly symbols/digits: tables, code leftovers
        base = sum(math.log1p(freq[t]) for t in tokens) / math.sqrt(len(tokens) + 1)
        score = base + (3.0 if s.tags else 0.0)
        score *= 1.5 if s.role == "user" else 0.6
        units.append((score, s))
    return units


def _summary_line(s: Sent) -> str:
    """A new sentence as a summary line: third person, checkboxes spelled out."""
    if s.raw.rstrip().endswith("?"):
        who = "The user" if s.role == "user" else "The assistant"
        return f'{who} asked: "{_truncate_words(s.raw, MAX_UNIT_WORDS)}"'
    text = FILLER.sub("", s.text) or s.text
    text = re.sub(r"^\[\s\]\s*", "To do: ", text)
    text = re.sub(r"^\[[xX]\]\s*", "Done: ", text)
    return sentence(_truncate_words(third_person(text, s.role), MAX_UNIT_WORDS))


def _restated(unit: str, subject: str) -> bool:
    """Whether a short previous-summary sentence states ``subject`` (and nothing else)."""
    if _unit_words(unit) > 20 or re.search(r"\band\b|;", unit):
        return False
    return bool(re.match(rf"{re.escape(subject)}\b", subject_of(unit)))


def build_summary(previous: str, sents: list[Sent], facts: list[ExtractedFact]) -> str:
    budget = SUMMARY_MAX_WORDS
    prev_units = _previous_units(previous)
    # previous statements of a subject a new fact restates give way to the new statement
    for fact in facts:
        if fact.subject:
            prev_units = [fact.text if _restated(u, fact.subject) else u for u in prev_units]
    prev_units = list(dict.fromkeys(prev_units))
    seen = _Seen()
    for unit in prev_units:
        seen.add(unit)
    prev_words = sum(map(_unit_words, prev_units))
    new_cap = budget - min(prev_words, int(budget * (1 - NEW_SHARE))) if prev_units else budget
    chosen: list[tuple[int, str]] = []
    used = 0
    for _, s in sorted(_new_units(sents), key=lambda c: (-c[0], c[1].order)):
        if used >= new_cap - 3:
            break
        text = _summary_line(s)
        words = _unit_words(text)
        if used + words > new_cap or seen.has(text):
            continue
        seen.add(text)
        chosen.append((s.order, text))
        used += words
    chosen.sort()
    if (
        not chosen
        and prev_words <= budget
        and previous.strip()
        and prev_units == _previous_units(previous)
    ):
        return previous.strip()
    prev_budget = budget - used
    if prev_words > prev_budget:
        ranked = sorted(
            range(len(prev_units)),
            key=lambda i: (-_informativeness(prev_units[i], i, len(prev_units)), i),
        )
        keep: set[int] = set()
        total = 0
        for i in ranked:
            words = _unit_words(prev_units[i])
            if total + words <= prev_budget:
                keep.add(i)
                total += words
        if not keep and prev_units:
            prev_units = [_truncate_words(prev_units[0], max(8, prev_budget - 1))]
        else:
            prev_units = [u for i, u in enumerate(prev_units) if i in keep]
    lines = [f"- {u}" for u in prev_units] + [f"- {t}" for _, t in chosen]
    # hard bound, whole lines (only reachable with a tiny previous budget)
    while len(lines) > 1 and sum(len(line.split()) for line in lines) > budget:
        lines.pop()
    return "\n".join(lines)
