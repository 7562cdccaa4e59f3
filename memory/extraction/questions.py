"""Open questions (user messages).

A user sentence ending in ``?`` is open when no assistant message follows it in the batch (the
next kept message is a user message or there is none; offline replies are skipped, so they do
not answer). Any user sentence saying "not sure", "still need to decide", "haven't decided",
"undecided", "open question", "TBD", "to be decided", "unclear whether/if", "don't know
whether/if/which" is open regardless. Not kept: questions of fewer than 3 words, recall and
small-talk questions ("what's my ...", "do you remember ...", "how are you"), and questions a
later decision of the batch settles (most of their content words appear in it). At most
``MAX_OPEN_QUESTIONS``, the most recent.
"""

from __future__ import annotations

import re

from memory.extraction.sentences import Sent
from memory.extraction.text import I, content_tokens, normalise_key, short, words
from memory.extraction.types import MAX_OPEN_QUESTIONS, ExtractedDecision

_UNSURE = re.compile(
    r"\b(?:not\s+sure|still\s+need\s+to\s+decide|still\s+have\s+to\s+decide|have\s+not\s+decided|"
    r"has\s+not\s+been\s+decided|undecided|open\s+question|tbd|to\s+be\s+decided|"
    r"to\s+be\s+determined|unclear\s+(?:whether|if|how|what|which)|do\s+not\s+know\s+(?:whether|if|"
    r"which|how|what)|cannot\s+decide|can\s+not\s+decide|still\s+deciding|torn\s+between)\b",
    I,
)
_RECALL_Q = re.compile(
    r"\b(?:remember|what\s+is\s+my|what\s+are\s+my|who\s+am\s+I|do\s+you\s+know\s+my|what\s+did\s+I|"
    r"what\s+do\s+I\s+like|did\s+I\s+tell|have\s+I\s+told|how\s+are\s+you|are\s+you\s+there|"
    r"who\s+are\s+you|what\s+can\s+you\s+do|are\s+you\s+(?:a|an)\s+(?:bot|ai|human))\b",
    I,
)


def extract_questions(
    sents: list[Sent], kept: list[tuple[int, str]], decisions: list[ExtractedDecision]
) -> list[str]:
    next_role: dict[int, str] = {}
    for position, (index, _) in enumerate(kept):
        next_role[index] = kept[position + 1][1] if position + 1 < len(kept) else ""
    questions: list[tuple[str, Sent]] = []
    for s in sents:
        if s.role != "user":
            continue
        is_question = s.raw.rstrip().endswith("?")
        unsure = bool(_UNSURE.search(s.text))
        if not (is_question or unsure):
            continue
        if is_question and not unsure and next_role.get(s.index) == "assistant":
            continue
        if _RECALL_Q.search(s.text) or len(words(s.raw)) < 3:
            continue
        questions.append((short(s.raw, 240), s))
    out: list[str] = []
    seen: set[str] = set()
    for text, s in questions:
        tokens = content_tokens(text)
        settled = any(
            d.message_index > s.index
            and tokens
            and len(tokens & content_tokens(f"{d.what} {' '.join(d.alternatives)}")) * 2
            >= len(tokens)
            for d in decisions
        )
        key = normalise_key(text)
        if settled or not key or key in seen:
            continue
        seen.add(key)
        s.tags.add("question")
        out.append(text)
    return out[-MAX_OPEN_QUESTIONS:]
