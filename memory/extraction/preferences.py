"""Fact rules for preferences: likes and dislikes, choices, and how answers should be.

The patterns are listed in the table of ``facts`` ("I/we like/love/.../prefer X (over Y)",
"keep answers X", "answer in X", "use/don't use X", "I'd like answers X").
"""

from __future__ import annotations

import datetime
import re

from memory.extraction.subjects import STOP, FactHit, subject_of, value
from memory.extraction.text import I, sentence, third_person

_STYLE_SUBJECTS = [
    ("emojis", re.compile(r"\b(?:emojis?|emoticons?|smileys?)\b", I)),
    (
        "answer length",
        re.compile(
            r"\b(?:short|shorter|brief|briefer|concise|succinct|terse|long|longer|lengthy|"
            r"detailed|in-depth|thorough|verbose|one-liners?|to the point)\b",
            I,
        ),
    ),
    (
        "answer format",
        re.compile(
            r"\b(?:bullet|bullets|bullet points|bulleted|lists?|numbered|paragraphs?|prose|"
            r"tables?|markdown|plain text|headings?|headers?)\b",
            I,
        ),
    ),
    (
        "tone",
        re.compile(
            r"\b(?:formal|informal|casual|friendly|professional|polite|blunt|direct|humou?r|"
            r"jokes?|jargon|simple language|plain english)\b",
            I,
        ),
    ),
    (
        "answer language",
        re.compile(
            r"\b(?:english|german|french|spanish|italian|portuguese|dutch|polish|russian|"
            r"chinese|japanese|korean|arabic|hindi|turkish|swedish|norwegian|danish|finnish|"
            r"greek|hebrew|ukrainian|czech)\b",
            I,
        ),
    ),
    ("code examples", re.compile(r"\b(?:code\s+(?:examples|samples|snippets)|examples)\b", I)),
    ("units", re.compile(r"\b(?:metric|imperial|celsius|fahrenheit)\b", I)),
]
_STYLE_CONTEXT = re.compile(
    r"\b(?:answers?|responses?|replies|reply|explanations?|messages?|output|summaries|"
    r"bullet|bullets|bulleted|lists?|tables?|paragraphs?|prose|markdown|emojis?|emoticons?|"
    r"tone|formal|informal|casual|jargon|code\s+examples|examples|metric|imperial|celsius|"
    r"fahrenheit|to the point)\b",
    I,
)


def _style_subject(text: str, *, require_context: bool = True) -> str:
    if require_context and not _STYLE_CONTEXT.search(text):
        return ""
    for subject, pattern in _STYLE_SUBJECTS:
        if pattern.search(text):
            return subject
    return ""


_LIKE_VERBS = {
    "like": "likes",
    "love": "loves",
    "enjoy": "enjoys",
    "adore": "adores",
    "prefer": "prefers",
    "hate": "hates",
    "dislike": "dislikes",
    "detest": "detests",
    "loathe": "loathes",
    "cannot stand": "cannot stand",
    "can not stand": "cannot stand",
    "do not like": "does not like",
    "do not love": "does not love",
    "do not enjoy": "does not enjoy",
    "no longer like": "no longer likes",
    "no longer enjoy": "no longer enjoys",
    "am fond of": "is fond of",
    "am not fond of": "is not fond of",
    "am into": "is into",
    "am not into": "is not into",
    "am a fan of": "is a fan of",
    "am a big fan of": "is a big fan of",
    "am a huge fan of": "is a huge fan of",
    "am not a fan of": "is not a fan of",
    "am not a big fan of": "is not a big fan of",
}
# "We love X": the user and the people they speak for (family, friends, team) like it together.
_WE_VERBS = {re.sub(r"^am\b", "are", verb) for verb in _LIKE_VERBS} | {
    f"are {a}fans of" for a in ("", "big ", "huge ", "not ", "not big ")
}
_LIKE_RE = re.compile(
    r"^(?P<who>I|we)\s+(?P<adv>(?:(?:really|also|absolutely|just|do|totally|honestly|still|now|actually|"
    r"generally|usually|much|would|kind\s+of|sort\s+of|definitely|very\s+much|personally)\s+)*)"
    r"(?P<verb>"
    + "|".join(
        re.escape(v).replace(r"\ ", r"\s+")
        for v in sorted({*_LIKE_VERBS, *_WE_VERBS}, key=len, reverse=True)
    )
    + r")\s+(?P<x>.+)$",
    I,
)
_REACTION = re.compile(
    r"^(?:(?:that|this|the|your)\s+(?:idea|plan|suggestion|answer|reply|one|option|approach|"
    r"list|name|title|question|point|thought)s?\b|to\s+(?:think|say|hear|see\s+that|know)\b)",
    I,
)
_PREFER_SPLIT = re.compile(r"\s+(?:over|to|rather\s+than|instead\s+of|more\s+than)\s+", I)


def _like_fact(m: re.Match) -> FactHit | None:
    verb = re.sub(r"\s+", " ", m["verb"].lower())
    adv = (m["adv"] or "").lower()
    we = m["who"].lower() == "we"
    if verb not in (_WE_VERBS if we else _LIKE_VERBS):
        return None  # "I are fond of", "we am into"
    x = value(m["x"], 14)
    if not x:
        return None
    if re.fullmatch(r"(?:you|u)(?:\s+(?:guys|all|both|too|so\s+much|a\s+lot))*", x, I):
        return None  # "we love you": said to the assistant, nothing about the user
    if _REACTION.match(x):
        return None  # "I love that idea", "we like to think...": about the talk, not a taste
    if "would" in adv and re.match(r"^(?:to|you|it\s+if)\b", x, I):
        return None  # a wish or a request, not a standing preference
    if re.fullmatch(r"(?:it|that|this|them|those|these)(?:\s+(?:a\s+lot|so\s+much))?", x, I):
        return None  # "I love it": what "it" is lies in another sentence
    style = _style_subject(x)
    if we and re.match(r"^(?:your|yours)\b", x, I) and not style:
        return None  # "we love your app": praise for the assistant, not the user's taste
    if we:
        who, third = "The user and their group", verb.replace("can not", "cannot")
    else:
        who, third = "The user", _LIKE_VERBS[verb]
    x3 = third_person(x)
    parts = _PREFER_SPLIT.split(x, maxsplit=1) if verb == "prefer" or "fan" in verb else [x]
    if len(parts) == 2 and parts[0] and parts[1] and not style:
        a, b = sorted((subject_of(parts[0]), subject_of(parts[1])))
        subject = f"choice between {a} and {b}"
    else:
        subject = style or ("opinion of " + " ".join(subject_of(x).split()[:6]))
    return FactHit("preference", subject, sentence(f"{who} {third} {x3}"), 0.6)


_STYLE_PATTERNS = [
    (
        "keep",
        re.compile(
            r"^(?:please\s+)?(?:(?:always|try\s+to|just)\s+)*(?:keep|make)\s+(?:your\s+|the\s+|all\s+)?"
            r"(?:answers?|responses?|replies|reply|explanations?|messages?|output|summaries|it|"
            r"things)\s+(?P<x>.+)$",
            I,
        ),
    ),
    (
        "in",
        re.compile(
            r"^(?:please\s+)?(?:(?:always|only|just)\s+)*(?:answer|reply|respond|write|talk|speak|"
            r"explain\s+things|format\s+(?:your\s+)?(?:answers|responses|replies))\s+"
            r"(?:to\s+me\s+)?(?P<prep>in|with|using|as|like)\s+(?P<x>.+)$",
            I,
        ),
    ),
    (
        "want",
        re.compile(
            r"^I\s+(?:would\s+|really\s+)?(?:like|want|prefer|need)\s+(?:your\s+|the\s+|all\s+)?"
            r"(?P<x>(?:answers?|responses?|replies|explanations?|summaries)\b.+)$",
            I,
        ),
    ),
    (
        "avoid",
        re.compile(
            r"^(?P<lead>please\s+)?(?P<neg>do\s+not|never|stop|avoid|no\s+more)\s+"
            r"(?P<use>using\s+|use\s+|including\s+|include\s+|adding\s+|add\s+|giving\s+me\s+|"
            r"give\s+me\s+)?(?P<x>.+)$",
            I,
        ),
    ),
    (
        "use",
        re.compile(
            r"^(?P<lead>please\s+|always\s+|please\s+always\s+)?(?:use|include|add|give\s+me)\s+"
            r"(?P<x>.+)$",
            I,
        ),
    ),
]
_AVOID_DENY = re.compile(
    r"^(?:forget|worry|mind|know|understand|get\s+me\s+wrong|hesitate|remember|think|care|"
    r"want|need|have|like|be\s+(?:sorry|afraid))\b",
    I,
)


def _style_fact(c: str) -> FactHit | None:
    for kind, pattern in _STYLE_PATTERNS:
        m = pattern.match(c)
        if not m:
            continue
        x = value(m["x"], 12)
        if not x:
            return None
        if kind == "keep":
            subject = _style_subject(x, require_context=False) or "answer style"
            return FactHit(
                "preference", subject, sentence(f"The user wants answers to be {x}"), 0.7
            )
        if kind == "in":
            subject = _style_subject(x, require_context=False) or "answer format"
            prep = m["prep"].lower()
            return FactHit(
                "preference", subject, sentence(f"The user wants answers {prep} {x}"), 0.7
            )
        if kind == "want":
            subject = _style_subject(x, require_context=False) or "answer style"
            return FactHit(
                "preference", subject, sentence(f"The user wants {third_person(x)}"), 0.7
            )
        if kind == "avoid":
            if _AVOID_DENY.match(x):
                return None
            style = _style_subject(x, require_context=False)
            neg = m["neg"].lower()
            if not (style or m["use"] or m["lead"] or neg in ("never", "stop", "avoid", "no more")):
                return None
            use = (
                " use" if m["use"] and m["use"].lower().startswith(("us", "includ", "add")) else ""
            )
            x3 = third_person(x)
            if neg in ("stop", "avoid"):
                text = f"The user wants the assistant to {neg}{' using' if use else ''} {x3}"
            elif neg == "no more":
                text = f"The user wants no more {x3}"
            else:
                text = f"The user does not want the assistant to{use} {x3}"
            subject = style or ("use of " + subject_of(x) if use else "")
            return FactHit("preference", subject, sentence(text), 0.7)
        # use
        style = _style_subject(x, require_context=False)
        if not style and not (m["lead"] and len(x.split()) <= 6):
            return None
        if not style and not _STYLE_CONTEXT.search(x):
            return None
        return FactHit(
            "preference",
            style or "use of " + subject_of(x),
            sentence(f"The user wants the assistant to use {third_person(x)}"),
            0.7,
        )
    return None


def preference_fact(c: str, today: datetime.date) -> FactHit | None:
    if m := _LIKE_RE.match(c):
        return _like_fact(m) or STOP
    return _style_fact(c)
