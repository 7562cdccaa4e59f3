"""Fact rules about the user's things: "my X is Y", project names, deadlines and events.

The patterns are listed in the table of ``facts``.
"""

from __future__ import annotations

import datetime
import re

from memory.extraction.dates import find_date
from memory.extraction.subjects import (
    PROJECT_NOUNS,
    SCHEDULE_NOUNS,
    FactHit,
    category_of,
    subject_of,
    value,
    with_date,
)
from memory.extraction.text import I, sentence, strip_end, third_person, wordset

_DENY_ATTRS = wordset(
    """question point guess problem issue concern understanding idea thought thoughts thinking
answer request suggestion bad apologies apology pleasure turn fault mistake code output error
plan goal hope worry fear feeling guess take view impression bet advice response reply message
first second last"""
)

_PROJECT_NAME_RES = (
    re.compile(
        rf"^(?:(?:our|my|the|this)\s+)?(?P<noun>{PROJECT_NOUNS})\s+(?:is\s+)?(?:now\s+)?"
        r"(?:called|named)\s+(?P<x>.+)$",
        I,
    ),
    re.compile(
        r"^(?:I|we)\s+(?:am|are)\s+(?:building|working\s+on|making|writing|developing|"
        r"creating|running|launching)\s+(?:a|an|the|my|our)\s+(?:\w+\s+)?"
        rf"(?P<noun>{PROJECT_NOUNS})\s+(?:called|named)\s+(?P<x>.+)$",
        I,
    ),
)


def project_name_fact(c: str, today: datetime.date) -> FactHit | None:
    for pattern in _PROJECT_NAME_RES:
        m = pattern.match(c)
        if m and (x := value(m["x"], 6)):
            noun = m["noun"].lower()
            category = "personal" if noun in ("band", "book") else "project"
            return FactHit(category, f"{noun} name", f"The user's {noun} is called {x}.", 0.7)
    return None


_DEADLINE_RE = re.compile(
    r"^(?:the|our|my)\s+(?:(?P<what>[\w'-]+(?:\s+[\w'-]+){0,3}?)\s+)?deadline"
    r"(?:\s+for\s+(?P<for>.+?))?\s+(?:is|was|will\s+be|has\s+been\s+moved\s+to|has\s+moved\s+to|"
    r"moved\s+to|was\s+moved\s+to|changed\s+to|got\s+moved\s+to|is\s+now)\s+(?P<x>.+)$",
    I,
)
_DUE_RE = re.compile(
    r"^(?:the|our|my)\s+(?P<thing>[\w'-]+(?:\s+[\w'-]+){0,3}?)\s+is\s+due\s+(?P<x>.+)$", I
)
_EVENT_RE = re.compile(
    rf"^(?P<det>the|our|my)\s+(?P<thing>(?:[\w'-]+\s+){{0,3}}?(?:{SCHEDULE_NOUNS}))\s+"
    r"(?:is|will\s+be|has\s+been\s+moved|was\s+moved|got\s+moved|moved|is\s+now)\s+"
    r"(?P<x>(?:to|on|at|in|for|scheduled\s+for|planned\s+for)\b.+)$",
    I,
)


def schedule_fact(c: str, today: datetime.date) -> FactHit | None:
    if (m := _DEADLINE_RE.match(c)) and (x := value(m["x"], 12)):
        if m["for"]:
            subject = "deadline for " + subject_of(m["for"])
        elif m["what"]:
            subject = subject_of(m["what"]) + " deadline"
        else:
            subject = "project deadline"
        label = f"deadline for {strip_end(m['for'])}" if m["for"] else subject
        text = sentence(f"The {label} is {with_date(x, today)}")
        return FactHit("schedule", subject, text, 0.7)
    if (m := _DUE_RE.match(c)) and (x := value(m["x"], 12)):
        thing = subject_of(m["thing"])
        text = sentence(f"The {thing} is due {with_date(x, today)}")
        return FactHit("schedule", f"{thing} due date", text, 0.6)
    if (m := _EVENT_RE.match(c)) and (x := value(m["x"], 14)):
        dated = find_date(x, today) is not None
        if dated or re.search(r"\d", x):
            thing = subject_of(m["thing"])
            x = re.sub(r"^to\s+", "on ", x) if dated else x
            who = "The user's" if m["det"].lower() == "my" else "The"
            text = sentence(f"{who} {thing} is {with_date(x, today)}")
            return FactHit("schedule", thing, text, 0.6)
    return None


def possessive_fact(c: str, today: datetime.date) -> FactHit | None:
    m = re.match(
        r"^(?P<det>my|our)\s+(?P<attr>[\w'-]+(?:\s+[\w'-]+){0,4}?)\s+"
        r"(?P<verb>is|are|was|were|will\s+be|has\s+become|has\s+changed\s+to|changed\s+to|=)\s+"
        r"(?P<x>.+)$",
        c,
        I,
    )
    if not m:
        m = re.match(
            r"^(?P<det>my|our)\s+(?P<attr>[\w-]+(?:\s+[\w-]+)?)'s\s+(?P<verb>)(?P<x>(?!name\b).+)$",
            c,
            I,
        )
    if not m:
        return None
    attr = m["attr"].strip()
    attr_words = attr.lower().split()
    if any(w in _DENY_ATTRS for w in attr_words) or attr_words[0] in ("own", "only", "main"):
        return None
    verb = (m["verb"] or "is").lower()
    if verb in ("has become", "has changed to", "changed to", "=", "will be"):
        verb = "is" if verb != "will be" else "will be"
    if verb == "were":
        verb = "was"
    raw = m["x"]
    named = re.match(r"^(?:now\s+|actually\s+)?(?:called|named)\s+(?P<n>.+)$", raw, I)
    if named:
        x = value(named["n"], 6)
        if not x:
            return None
        subject = subject_of(attr)
        label = attr.lower()
        if re.fullmatch(PROJECT_NOUNS, subject):
            return FactHit("project", f"{subject} name", f"The user's {label} is called {x}.", 0.7)
        return FactHit(
            category_of(subject), f"{subject}'s name", f"The user's {label}'s name is {x}.", 0.7
        )
    x = value(raw, 20)
    if not x or re.match(r"^(?:that|to|not\s+sure|unclear|a\s+secret|the\s+following)\b", x, I):
        return None
    subject = subject_of(attr)
    if not subject:
        return None
    category = category_of(subject)
    if category == "schedule" or subject == "birthday":
        x = with_date(x, today)
    importance = 0.7 if category in ("personal", "preference") else 0.6
    if subject in ("name", "birthday", "project deadline", "deadline"):
        importance = 0.8
    x3 = third_person(x)
    if x.split()[0] in ("The", "A", "An"):
        x3 = x3[:1].lower() + x3[1:]
    return FactHit(
        category, subject, sentence(f"The user's {attr.lower()} {verb} {x3}"), importance
    )
