"""Validation of extracted memory: every field is checked and clamped before it is stored.

Pure Python (standard library only, no Django). One layer for every way memory is extracted
from a conversation: the model's structured answer (``memory.summariser.parse_extraction``) and
the offline extractor (``memory.extraction.extract``, ``extract_turn``), imported chats included
(they are summarised like any other). A small model cut off by its token cap, or confused by a
schema, answers things like a summary ``':{'``, a fact ``'The 1234567890'`` at importance 1.0,
a decision made of punctuation, or a fact ``"Python"`` or ``"summary"``; none of that may reach
the model's context later as an "important fact".

What a user writes themself does not pass through here, and keeps its words even when they are
one: a memory added or edited on the memory page or through the MCP ``remember`` tool
(``memory.services.edits``, checked by its form and model) and an import of the user's own
export (``userdata.transfer``).

The rules, field by field:

=================  ==========================================================================
field              rule
=================  ==========================================================================
text               a string (numbers are not text); control characters removed, whitespace
                   collapsed, cut at a word to the field's length; *meaningful*: at least two
                   letters, and either two words of two or more letters or letters making up
                   at least half of the non-space characters (so ``':{'``, ``'1234567890'``,
                   ``'The 1234567890'`` and ``'!!! ...'`` are rejected, ``'Deploy v2 on
                   2025-03-04'`` and ``'AI'`` are kept)
importance         a finite number (bools and numeric strings are not), clamped to 0..1;
                   anything else, ``NaN`` and infinities included, is the default 0.5
dates              a real calendar date (a ``date`` or a ``YYYY-MM-DD`` string) from
                   ``DATE_PAST_YEARS`` before today to ``DATE_FUTURE_YEARS`` after it;
                   anything else is no date
enums              one of the field's choices, else the field's default
message_index      an integer (not a bool) in ``0..count-1``, else the last message
lists of strings   each item cleaned as text; empty, meaningless and repeated items dropped;
                   at most the field's number of items
=================  ==========================================================================

A fact, decision or action item whose main text (``text``, ``what``) fails is dropped, with
the reason in ``Validated.dropped`` (``rejection``); beyond the text rule above, its main text
must not be:

=================  ==========================================================================
rejected           rule
=================  ==========================================================================
a prompt echo      it repeats the app's prompts (``memory.prompts.echoes_prompt``: "You are
                   memorychat, a helpful assistant ..."), which a small model returns as a
                   decision or an action item
chatter            a greeting, thanks, an offer to help ("Hello! How can I help you
                   today?", with at most one other content word) or bare assent ("Sure,
                   sounds good", "Yes")
a placeholder      a field's name or an empty value, what a small model writes when it has
                   nothing to say or copies the schema: ``"none"``, ``"N/A"``, ``"null"``,
                   ``"unknown"``, ``"nothing"``, ``"TBD"``, ``"No decisions were made"``,
                   ``"text"``, ``"summary"``, ``"Decision: none"``, ``"action item"``, ``"the
                   user"`` (a real statement may start so: "No deploys on Fridays" is kept)
one word           not a *statement*: fewer than two words with letters (``"Rex"``,
                   ``"Python"``, ``"AI"``); "Prefers Python", "Lives in Lisbon", "Deploy v2
                   on 2025-03-04", "Uses C" are kept. In a script written without spaces
                   (Chinese, Japanese, Thai, ...) three letters are a statement
=================  ==========================================================================

The one-word rule is the prompt's own request (a fact's text "in the third person"): a bare
word is ambiguous even beside its subject (subject "name", text "Rex": the user's name, or
their dog's?), and a confused model's subject is no better than its text (``"user"``,
``"summary"``), so it is not rebuilt into "Name: Rex"; what is lost is still in the summary.
The offline extractor, which knows the verb that framed a bare word, writes it as a statement
(``framed``: "We decided to relocate" is "Decided to relocate", "TODO: deploy" is "Task:
Deploy"). ``meaningful`` alone (topics, owners, subjects, ...) still keeps ``"AI"``.
A decision's context or rationale that repeats the prompts is left empty.
A summary that fails raises ``InvalidExtraction`` when it is required (the model's answer):
the caller falls back rather than store it.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from memory.extraction.text import STOPWORDS, wordset
from memory.extraction.types import (
    CATEGORIES,
    MAX_OPEN_QUESTIONS,
    MAX_TOPICS,
    ExtractedAction,
    ExtractedDecision,
    ExtractedFact,
    Extraction,
)
from memory.prompts import echoes_prompt

SUMMARY_MAX_CHARS = 4000
TEXT_MAX_CHARS = 1000  # a fact's text, a decision's what/context/rationale, an action's what
SHORT_MAX_CHARS = 200  # subjects, owners, topics, alternatives, stakeholders (model fields: 200)
LIST_MAX_ITEMS = 20  # alternatives, stakeholders, depends_on
MAX_FACTS = 50  # per batch: a runaway answer does not flood the memory
MAX_DECISIONS = 30
MAX_ACTIONS = 30
DEFAULT_IMPORTANCE = 0.5
DATE_PAST_YEARS = 10
DATE_FUTURE_YEARS = 50
DECISION_STATUSES = ("decided", "proposed")
ACTION_STATUSES = ("open", "done")

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_WORD = re.compile(r"[^\W\d_]{2,}")  # a run of two or more letters
_LETTER = re.compile(r"[^\W\d_]")


# Pleasantries, not content: greetings, thanks, offers of help, sign-offs (a name may follow:
# "Thanks, Sam"); and bare assent, which stands for nothing on its own ("Sure, sounds good").
_PLEASANTRY = re.compile(
    r"\b(?:hi|hello|hey|hiya|greetings|welcome|good\s+(?:morning|afternoon|evening|day|night)|"
    r"thanks?(?:\s+you)?|you(?:'|\u2019)?re\s+welcome|you\s+are\s+welcome|"
    r"nice\s+to\s+(?:meet|see)\s+you|how\s+(?:can|may)\s+i\s+(?:help|assist)(?:\s+you)?|"
    r"how\s+are\s+you(?:\s+doing)?|what\s+can\s+i\s+do\s+for\s+you|"
    r"is\s+there\s+anything\s+else|(?:i\s+am|i(?:'|\u2019)m)\s+(?:here|happy|glad)\s+to\s+help|"
    r"let\s+me\s+know\s+if\s+you\s+(?:have\s+any\s+questions|need\s+anything)|"
    r"bye|goodbye|see\s+you|cheers)\b",
    re.IGNORECASE,
)
_ASSENT = re.compile(
    r"\b(?:ok|okay|sure|of\s+course|no\s+problem|sounds\s+good|great|yes|yeah|alright)\b",
    re.IGNORECASE,
)
_CHATTER_FILLER = wordset("today there again everyone friend user assistant memorychat help assist")


def chatter(text: str) -> bool:
    """A pleasantry with at most one content word besides, or bare assent (module docs)."""
    pleasantry = bool(_PLEASANTRY.search(text))
    if not pleasantry and not _ASSENT.search(text):
        return False
    rest = _ASSENT.sub(" ", _PLEASANTRY.sub(" ", text.lower()))
    words = [
        w
        for w in re.findall(r"[^\W\d_]{2,}", rest)
        if w not in STOPWORDS and w not in _CHATTER_FILLER
    ]
    return len(words) <= (1 if pleasantry else 0)


# What a small model writes when it has nothing to say, or when it copies the schema: a field's
# name ("Summary", "action item"), an empty value ("N/A", "none", "no decisions were made").
_FIELD = (
    r"(?:text|what|summary|decisions?|action\s+items?|actions?|facts?|subjects?|category|"
    r"importance|owner|due\s+date|status|topics?|context|rationale|alternatives?|"
    r"stakeholders?|depends\s+on|message\s+index|open\s+questions?|items?|tasks?|string|"
    r"example|(?:the\s+)?(?:user|assistant))"
)
_EMPTY = (
    r"(?:none|null|nil|n/?a|unknown|nothing|tbd|tba|tbc|empty|undefined|"
    r"not\s+(?:applicable|available|specified|mentioned|provided|known|stated|given)|"
    r"none\s+(?:found|yet|mentioned|identified|so\s+far|given)|"
    r"nothing\s+(?:to\s+(?:report|note|add)|new|found|yet|mentioned)|"
    r"no\s+(?:" + _FIELD + r"|information|info|data|details)"
    r"(?:\s+(?:were|was|have\s+been|has\s+been))?"
    r"(?:\s+(?:made|found|identified|mentioned|recorded|taken|given|stated|available|yet|"
    r"so\s+far|to\s+(?:report|note)))*)"
)
_PLACEHOLDER = re.compile(rf"(?:{_FIELD}\s+)?{_EMPTY}|{_FIELD}", re.IGNORECASE)
# Scripts written without spaces between words: there, a statement is one run of letters.
_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"  # Thai, Lao, Myanmar, Khmer
    "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"  # kana, CJK ideographs
)
UNSPACED_MIN_LETTERS = 3


def placeholder(text: str) -> bool:
    """A field's name or an empty value standing in for an item (module docs)."""
    words = " ".join(re.sub(r"[^\w/\s]+", " ", text).split())
    return bool(_PLACEHOLDER.fullmatch(words))


def statement(text: str) -> bool:
    """At least two words with letters (or, in a script without spaces, a few letters):
    "Prefers Python", not "Python"."""
    words = [w for w in text.split() if _LETTER.search(w)]
    return len(words) >= 2 or len(_UNSPACED.findall(text)) >= UNSPACED_MIN_LETTERS


def framed(text: str, frame: str) -> str:
    """``text`` as a statement for the offline extractor, which knows the words that framed an
    item: a bare word that is otherwise content ("Relocate", "Kotlin") after its frame
    ("Decided to relocate", "Agreed on Kotlin"); anything else as it is."""
    cleaned = clean_text(text)
    if not cleaned or statement(cleaned) or placeholder(cleaned) or chatter(cleaned):
        return text
    return f"{frame} {text}"


def rejection(text) -> str:
    """Why ``text`` cannot be an extracted memory's main text, or "" when it can."""
    cleaned = clean_text(text)
    if not cleaned:
        return "not text"
    if echoes_prompt(cleaned):
        return "the app's prompt, not the conversation"
    if chatter(cleaned):
        return "a greeting or pleasantry, not content"
    if placeholder(cleaned):
        return "a placeholder, not content"
    if not statement(cleaned):
        return "one word, not a statement"
    return ""


class InvalidExtraction(ValueError):
    """The answer as a whole cannot be used (its summary is not text)."""


@dataclass
class Validated:
    extraction: Extraction
    dropped: list[str] = field(default_factory=list)  # what was left out, and why


# -- single values ----------------------------------------------------------------------------


def meaningful(text: str) -> bool:
    """Words, not punctuation or digits: see the module's table."""
    letters = len(_LETTER.findall(text))
    if letters < 2:
        return False
    if len(_WORD.findall(text)) >= 2:
        return True
    visible = sum(1 for ch in text if not ch.isspace())
    return letters * 2 >= visible


def _cut(text: str, max_chars: int) -> str:
    if len(text) <= max_chars:
        return text
    cut = text[: max_chars - 1].rsplit(" ", 1)[0] or text[: max_chars - 1]
    return cut.rstrip() + "…"


def clean_text(value, *, max_chars: int = TEXT_MAX_CHARS, multiline: bool = False) -> str:
    """The value as stored text, or "" when it is not a meaningful string."""
    if not isinstance(value, str):
        return ""
    text = _CONTROL.sub("", value)
    if multiline:
        text = "\n".join(" ".join(line.split()) for line in text.splitlines())
        text = re.sub(r"\n{3,}", "\n\n", text).strip()
    else:
        text = " ".join(text.split())
    if not meaningful(text):
        return ""
    return _cut(text, max_chars)


def clean_importance(value, default: float = DEFAULT_IMPORTANCE) -> float:
    """A finite float in 0..1 (clamped); the default for anything else, NaN included."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    number = float(value)
    if not math.isfinite(number):
        return default
    return min(max(number, 0.0), 1.0)


def date_range(today: datetime.date | None) -> tuple[datetime.date, datetime.date]:
    today = today or datetime.date.today()
    return (
        today.replace(year=today.year - DATE_PAST_YEARS, day=min(today.day, 28)),
        today.replace(year=today.year + DATE_FUTURE_YEARS, day=min(today.day, 28)),
    )


def clean_date(value, *, today: datetime.date | None = None) -> datetime.date | None:
    """A real date within the sane range around ``today``, or None."""
    if isinstance(value, datetime.datetime):
        value = value.date()
    elif isinstance(value, str):
        text = value.strip()
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
            return None
        try:
            value = datetime.date.fromisoformat(text)
        except ValueError:
            return None  # 2025-02-30
    if not isinstance(value, datetime.date):
        return None
    earliest, latest = date_range(today)
    return value if earliest <= value <= latest else None


def clean_choice(value, choices: Iterable[str], default: str) -> str:
    return value if isinstance(value, str) and value in tuple(choices) else default


def clean_index(value, count: int) -> int:
    """An index into the batch's messages; out of range or not an int means the last one."""
    last = max(count - 1, 0)
    if isinstance(value, bool) or not isinstance(value, int):
        return last
    return value if 0 <= value < count else last


def clean_strings(
    values, *, max_items: int = LIST_MAX_ITEMS, max_chars: int = SHORT_MAX_CHARS
) -> list[str]:
    """Cleaned, meaningful, unrepeated strings (case-insensitively), at most ``max_items``."""
    if not isinstance(values, list | tuple):
        return []
    out: list[str] = []
    seen: set[str] = set()
    for value in values:
        text = clean_text(value, max_chars=max_chars)
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            out.append(text)
            if len(out) >= max_items:
                break
    return out


def clean_subject(value) -> str:
    """A fact's subject: lowercased short text, or "" (a subject may be absent)."""
    return clean_text(value, max_chars=SHORT_MAX_CHARS).lower()


# -- items ------------------------------------------------------------------------------------


def _content(value) -> str:
    """The value as a memory's main text, or "" (see ``rejection``)."""
    return "" if rejection(value) else clean_text(value)


def _detail(value) -> str:
    """A secondary text field: cleaned, and empty when it repeats the app's prompts."""
    text = clean_text(value)
    return "" if echoes_prompt(text) else text


def validate_fact(fact: ExtractedFact, *, count: int) -> ExtractedFact | None:
    text = _content(fact.text)
    if not text:
        return None
    return replace(
        fact,
        category=clean_choice(fact.category, CATEGORIES, "other"),
        subject=clean_subject(fact.subject),
        text=text,
        importance=clean_importance(fact.importance),
        message_index=clean_index(fact.message_index, count),
    )


def validate_decision(decision: ExtractedDecision, *, count: int) -> ExtractedDecision | None:
    what = _content(decision.what)
    if not what:
        return None
    return replace(
        decision,
        what=what,
        context=_detail(decision.context),
        rationale=_detail(decision.rationale),
        alternatives=clean_strings(decision.alternatives),
        stakeholders=clean_strings(decision.stakeholders),
        status=clean_choice(decision.status, DECISION_STATUSES, "decided"),
        message_index=clean_index(decision.message_index, count),
    )


def validate_action(
    action: ExtractedAction, *, count: int, today: datetime.date | None = None
) -> ExtractedAction | None:
    what = _content(action.what)
    if not what:
        return None
    return replace(
        action,
        what=what,
        owner=clean_text(action.owner, max_chars=SHORT_MAX_CHARS),
        due_date=clean_date(action.due_date, today=today),
        status=clean_choice(action.status, ACTION_STATUSES, "open"),
        depends_on=clean_strings(action.depends_on, max_chars=TEXT_MAX_CHARS),
        message_index=clean_index(action.message_index, count),
    )


def _keep(items, check, limit: int, label: str, key, dropped: list[str]) -> list:
    kept: list = []
    for item in items:
        valid = check(item)
        if valid is None:
            dropped.append(f"{label} {_short(key(item))!r}: {rejection(key(item)) or 'not text'}")
        elif len(kept) >= limit:
            dropped.append(f"{label} {key(item)!r}: more than {limit} in one batch")
        else:
            kept.append(valid)
    return kept


def validate_extraction(
    extraction: Extraction,
    *,
    message_count: int,
    today: datetime.date | None = None,
    require_summary: bool = True,
) -> Validated:
    """Every field of ``extraction`` checked and clamped; items that fail are dropped.

    ``require_summary``: a summary that is not text raises ``InvalidExtraction`` (the model's
    answer); otherwise it becomes "" (the offline extractor, whose summary may be empty).
    """
    dropped: list[str] = []
    summary = clean_text(extraction.summary, max_chars=SUMMARY_MAX_CHARS, multiline=True)
    if not summary and require_summary:
        raise InvalidExtraction(f"the summary {_short(extraction.summary)!r} is not text")
    count = message_count
    facts = _keep(
        extraction.facts,
        lambda f: validate_fact(f, count=count),
        MAX_FACTS,
        "fact",
        lambda f: f.text,
        dropped,
    )
    decisions = _keep(
        extraction.decisions,
        lambda d: validate_decision(d, count=count),
        MAX_DECISIONS,
        "decision",
        lambda d: d.what,
        dropped,
    )
    actions = _keep(
        extraction.action_items,
        lambda a: validate_action(a, count=count, today=today),
        MAX_ACTIONS,
        "action item",
        lambda a: a.what,
        dropped,
    )
    return Validated(
        Extraction(
            summary=summary,
            topics=clean_strings(extraction.topics, max_items=MAX_TOPICS),
            decisions=decisions,
            action_items=actions,
            facts=facts,
            open_questions=clean_strings(
                extraction.open_questions, max_items=MAX_OPEN_QUESTIONS, max_chars=TEXT_MAX_CHARS
            ),
        ),
        dropped,
    )


def _short(value, limit: int = 60) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
