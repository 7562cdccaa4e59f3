"""Acceptance: whether a model's new summary may replace the version before it ("never worse").

Pure Python (standard library only, no Django). A small model's answer can parse, pass the
field checks and still be no summary: ``"summary"`` (one word) for 400 words of conversation,
the instructions repeated back, or a fine text that silently drops the action item the
previous version still held. Made current, such a version moves ``covered_through`` on, the
messages it covers leave the prompt, and what it dropped is lost for good. So an answer is
accepted only when its summary:

- is at least ``summary_floor`` words: ``MIN_WORDS``, and ``INPUT_SHARE`` of the request's
  input words (the previous summary and the messages, up to ``INPUT_FLOOR_CAP``), and
  ``PREVIOUS_SHARE`` of the previous summary's words (a rolling summary holds the previous one
  plus what is new); never more than the input itself;
- does not repeat the prompts (``memory.prompts.echoes_prompt``: the app's system prompt and
  headers, the summariser's instructions) nor the request's own JSON keys;
- keeps every open item of the version it replaces: its words (at least ``KEPT_SHARE`` of an
  item's content words) are in the new summary, or the answer lists it again, or the answer
  closes it (an action item with status "done" about the same thing).

``summary_flaws`` says what is wrong, in words the run records; the caller falls back (the
offline extractor) when there is anything. ``keep_open_items`` makes the fallback keep them too.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from memory.extraction.text import content_tokens, normalise_key
from memory.extraction.types import Extraction
from memory.prompts import PROMPT_TEXTS, echoes_prompt

MIN_WORDS = 3
INPUT_SHARE = 0.1
INPUT_FLOOR_CAP = 40
PREVIOUS_SHARE = 0.5
KEPT_SHARE = 0.5
SAME_ITEM = 0.5  # Jaccard of content words: the same action item, reworded
REQUEST_KEYS = ("previous_summary", "message_index")
OPEN_ITEM_PREFIX = "To do: "


def word_count(text: str) -> int:
    return len((text or "").split())


def summary_floor(*, input_words: int, previous_words: int) -> int:
    """The fewest words a summary of this input may have (module docs)."""
    floor = max(
        MIN_WORDS,
        min(math.ceil(INPUT_SHARE * input_words), INPUT_FLOOR_CAP),
        math.ceil(PREVIOUS_SHARE * previous_words),
    )
    return min(floor, max(input_words, 1))


def _shared(words: set[str], others: set[str]) -> int:
    """How many of ``words`` are in ``others``, a word matching one it begins or ends
    ("book" and "booked": content_tokens' stems are cut at six letters, not conjugated)."""
    return sum(1 for w in words if w in others or any(_stem_match(w, o) for o in others))


def _stem_match(word: str, other: str) -> bool:
    shorter, longer = sorted((word, other), key=len)
    return len(shorter) >= 4 and longer.startswith(shorter)


def _same(item: str, other: str) -> bool:
    """The same item, reworded: SAME_ITEM of the words of both in common."""
    if normalise_key(item) == normalise_key(other):
        return True
    a, b = content_tokens(item), content_tokens(other)
    return bool(a and b) and _shared(a, b) >= SAME_ITEM * max(len(a), len(b))


def closed_by(item: str, answer: Extraction) -> bool:
    """The answer marks this item done."""
    return any(a.status == "done" and _same(item, a.what) for a in answer.action_items)


def kept_by(item: str, answer: Extraction) -> bool:
    """The answer's summary mentions the item, or the answer lists it again as open."""
    words = content_tokens(item)
    if not words:
        return True
    if _shared(words, content_tokens(answer.summary)) >= KEPT_SHARE * len(words):
        return True
    listed = [a.what for a in answer.action_items if a.status != "done"] + answer.open_questions
    return any(_same(item, other) for other in listed)


def open_after(open_items: Iterable[str], answer: Extraction) -> list[str]:
    """The open items once this answer is folded in: the earlier ones it did not close, then
    its own open action items (the same item once)."""
    out: list[str] = []
    candidates = [i for i in open_items if not closed_by(i, answer)]
    candidates += [a.what for a in answer.action_items if a.status != "done"]
    for item in candidates:
        if not any(_same(item, seen) for seen in out):
            out.append(item)
    return out


def summary_flaws(
    answer: Extraction,
    *,
    previous: str,
    messages: Sequence[dict],
    open_items: Sequence[str] = (),
    prompts: tuple[str, ...] = PROMPT_TEXTS,
) -> list[str]:
    """What makes ``answer``'s summary unfit to replace ``previous`` (empty: accept it)."""
    flaws = []
    summary = answer.summary or ""
    words = word_count(summary)
    previous_words = word_count(previous)
    input_words = previous_words + sum(word_count(m.get("content") or "") for m in messages)
    floor = summary_floor(input_words=input_words, previous_words=previous_words)
    if words < floor:
        flaws.append(
            f"the summary is {words} word(s) for {input_words} words of input "
            f"(at least {floor} expected): {summary[:60]!r}"
        )
    if echoes_prompt(summary, prompts) or any(key in summary for key in REQUEST_KEYS):
        flaws.append(f"the summary repeats the prompt: {summary[:60]!r}")
    lost = [i for i in open_items if not closed_by(i, answer) and not kept_by(i, answer)]
    if lost:
        flaws.append(
            "the summary drops open item(s) of the version it replaces: "
            + "; ".join(repr(i[:60]) for i in lost[:5])
        )
    return flaws


def keep_open_items(answer: Extraction, open_items: Sequence[str]) -> Extraction:
    """``answer`` with a "To do:" line for each open item its summary would drop (for the
    offline fallback, which must not lose them either)."""
    lost = [i for i in open_items if not closed_by(i, answer) and not kept_by(i, answer)]
    if not lost:
        return answer
    lines = [answer.summary.rstrip()] if answer.summary.strip() else []
    lines += [f"- {OPEN_ITEM_PREFIX}{item}" for item in lost]
    answer.summary = "\n".join(lines)
    return answer
