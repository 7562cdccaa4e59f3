"""Input: the messages that are read, split into sentences and clauses.

``messages`` is a list of ``{"role": "user" | "assistant", "content": str}`` in order. Messages
whose stored ``model`` is ``llm.OFFLINE_MODEL`` (memorychat's own no-model answers) are skipped
entirely, as are messages that quote the memory block back (``memory.prompts.quotes_memory``),
replies that repeat the app's prompts (``memory.prompts.echoes_prompt``: a small model's
"You are memorychat, a helpful assistant ..."), other roles and empty messages; a user's
sentence that repeats them is dropped (the rest of the message is the user's). Fenced code
blocks and ``>`` quoted lines are removed; each message is cut at ``MAX_MESSAGE_CHARS``. Text
is split into sentences (at ``.!?`` followed by a space, and at line breaks) and, for facts and
actions, into clauses (at ``;``, at "and/but/so" followed by a new first-person subject: "My
name is Sam and I live in Berlin", at a comma followed by one: "My name is Alice, I live in
Lyon", and at "and" before a verb whose subject is the first clause's: "I am 34 and work as a
nurse"). Contractions are expanded before matching ("I'm" -> "I am", "don't" -> "do not"), and
matching ignores case except where a capitalised name is required. Leading fillers
("actually", "now", "oh", "btw", "hi", ...) are dropped, so corrections read like first
statements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from llm import OFFLINE_MODEL
from memory.extraction.text import I, expand, squash
from memory.extraction.types import (
    MAX_MESSAGE_CHARS,
    MAX_SENTENCE_CHARS,
    MAX_SENTENCES_PER_MESSAGE,
)
from memory.prompts import PROMPT_TEXTS, echoes_prompt, quotes_memory


@dataclass
class Sent:
    index: int  # message index in the caller's list
    role: str
    raw: str  # original wording, whitespace collapsed
    text: str  # contractions expanded
    order: int  # global position
    position: int  # position within its message
    tags: set[str] = field(default_factory=set)


_FENCE_RE = re.compile(r"(```|~~~)[\s\S]*?(?:\1|\Z)")
_SPLIT_RE = re.compile(r"(?<=[.!?\u2026])[\"')\]]*\s+|\n+")
BULLET_RE = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)]|#{1,6})\s+")


def _message_parts(message: object) -> tuple[str, str, str]:
    if isinstance(message, dict):
        role, content = message.get("role", ""), message.get("content", "")
        model = message.get("model", "")
    else:
        role, content = getattr(message, "role", ""), getattr(message, "content", "")
        model = getattr(message, "model", "")
    content = content if isinstance(content, str) else str(content or "")
    return str(role or "").lower(), content, str(model or "")


def _clean_content(content: str) -> str:
    content = _FENCE_RE.sub("\n", content[:MAX_MESSAGE_CHARS])
    lines = []
    for line in content.splitlines():
        if line.lstrip().startswith(">") or line.startswith("    "):
            continue
        line = line.replace("`", "")
        lines.append(line)
    return "\n".join(lines)


def _split_sentences(content: str) -> list[str]:
    out = []
    for piece in _SPLIT_RE.split(content):
        piece = BULLET_RE.sub("", piece or "")
        piece = re.sub(r"^\s*(?:[-*+]\s+)?", "", piece)
        piece = squash(piece.replace("**", "").replace("__", ""))
        if not piece or not re.search(r"[^\W\d_]", piece):
            continue
        out.append(piece[:MAX_SENTENCE_CHARS])
        if len(out) >= MAX_SENTENCES_PER_MESSAGE:
            break
    return out


def prepare(
    messages: list, prompts: tuple[str, ...] = PROMPT_TEXTS
) -> tuple[list[Sent], list[tuple[int, str]]]:
    """Sentences of the kept messages, and (index, role) of every kept message; ``prompts``
    are the app's prompt texts a reply must not echo (module docs)."""
    sents: list[Sent] = []
    kept: list[tuple[int, str]] = []
    for index, message in enumerate(messages or []):
        role, content, model = _message_parts(message)
        if role not in ("user", "assistant") or not content.strip() or model == OFFLINE_MODEL:
            continue
        if quotes_memory(content):  # the memory block quoted back: the app's words
            continue
        if role == "assistant" and echoes_prompt(content, prompts):  # the prompt, not a reply
            continue
        kept.append((index, role))
        pieces = _split_sentences(_clean_content(content))
        for position, raw in enumerate(p for p in pieces if not echoes_prompt(p, prompts)):
            sents.append(Sent(index, role, raw, expand(raw), len(sents), position))
    return sents, kept


CLAUSE_SPLIT = re.compile(
    r"\s*;\s*|,?\s+(?:and|but|so|also|plus)\s+(?=(?:I|my|we|our|please|remind|call\s+me)\b)"
    # a comma before a new statement: "My name is Alice, I live in Lyon"
    r"|\s*,\s+(?=(?:I|we)\s+(?:am|was|have|had|live|work|speak|use|love|like|hate|prefer|moved)\b"
    r"|(?:my|our)\s+[\w'-]+(?:\s+[\w'-]+){0,3}?\s+(?:is|are|was|were)\b)",
    I,
)
# "I am 34 and work as a nurse": the second verb's subject is left out; it is the first's.
_ELIDED_I = re.compile(
    r"^(?P<first>I\s.+?),?\s+and\s+(?P<verb>(?:also\s+)?(?:live|work|speak|have|love|like|"
    r"enjoy|hate|prefer|moved|am)\b.*)$",
    I,
)
FILLER = re.compile(
    r"^(?:(?:actually|now|oh|ah|well|ok|okay|so|also|and|but|btw|by\s+the\s+way|fyi|"
    r"just\s+so\s+you\s+know|correction|sorry|no|nope|wait|update|hey|hi|hello|yes|yeah|yep|"
    r"right|anyway|anyways|plus|as\s+I\s+said|as\s+mentioned|to\s+clarify|just\s+to\s+clarify|"
    r"in\s+fact|heads\s+up|quick\s+note|one\s+more\s+thing|oh\s+and|and\s+also|"
    r"good\s+(?:morning|afternoon|evening))\b[\s,:!.\-\u2013\u2014]*)+",
    I,
)


# The same for a relative: "my sister lives in Berlin and works as a teacher".
_ELIDED_MY = re.compile(
    r"^(?P<first>(?P<who>my\s+[\w'-]+(?:\s+[A-Z][\w'-]*)?)\s(?:lives|works|is)\b.+?),?\s+and\s+"
    r"(?P<verb>(?:lives|works|is|speaks|moved)\b.*)$",
    I,
)


def clauses_of(text: str) -> list[str]:
    out = []
    for part in CLAUSE_SPLIT.split(text):
        part = FILLER.sub("", part.strip()).strip()
        while part and (m := _ELIDED_I.match(part) or _ELIDED_MY.match(part)):
            out.append(m["first"])
            part = f"{m.groupdict().get('who') or 'I'} {m['verb']}"
        if part:
            out.append(part)
    return out


HYPOTHETICAL = re.compile(r"^(?:if|when|unless|whether|in\s+case|suppose|imagine)\b", I)
