"""A title from the first question without a model, as a person would write it: the subject
of the question ("How do I configure an nginx reverse proxy…?" → "Configure an nginx reverse
proxy"), not its key words in a row. Pure: no Django.

The question's first sentence that says something (not a greeting) loses its question words
and fillers ("how do I", "can you help me", "what's the best way to", "please"), is cut
before a subordinate clause ("… that uses websockets", "… when reading a file"), then at a
word boundary to MAX_WORDS words, never ending on a small word ("for", "the", "and").
"""

from __future__ import annotations

import re

MAX_WORDS = 6
# What is read of the question: its first sentences give the title, and the clause and end
# patterns below take time quadratic in a run of blanks (hence also one space for each run).
READ_CHARS = 1000
WHOLE_WORDS = 7  # a clause this short is kept whole rather than cut to MAX_WORDS

_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
_GREETING = re.compile(
    r"^(?:hi|hello|hey|hiya|good\s+(?:morning|afternoon|evening)|greetings|thanks|thank\s+you|"
    r"ok(?:ay)?|so|well|yo|how\s+are\s+you(?:\s+doing)?(?:\s+today)?)"
    r"(?:\s+(?:there|again|all|everyone|team))?\b[\s,!.?:;-]*",
    re.IGNORECASE,
)
# Said before the subject, in any order: dropped again and again until none is left.
_LEADS = [
    r"please",
    r"(?:can|could|would|will)\s+you(?:\s+please)?(?:\s+(?:help\s+me(?:\s+(?:to|with))?|"
    r"tell\s+me(?:\s+about)?|show\s+me(?:\s+how\s+to)?|explain(?:\s+to\s+me)?|give\s+me))?",
    r"you\s+(?:can|could|would|will)(?:\s+please)?(?:\s+(?:help\s+me(?:\s+(?:to|with))?|"
    r"tell\s+me(?:\s+about)?|show\s+me(?:\s+how\s+to)?|explain(?:\s+to\s+me)?|give\s+me))?",
    r"help\s+me(?:\s+(?:to|with))?",
    r"(?:tell|show)\s+me(?:\s+(?:about|how\s+to))?",
    r"explain(?:\s+to\s+me)?",
    r"I\s+(?:would\s+like|want|need|wish|hope|am\s+trying|was\s+wondering|wonder|have\s+a\s+question)"
    r"(?:\s+(?:to\s+(?:know|learn|understand|find\s+out)|to|if|whether|how\s+to|about))*",
    r"I'm\s+(?:trying|looking|wondering)(?:\s+(?:to|for|if|whether|how\s+to))?",
    r"quick\s+question",
    r"is\s+(?:it|there)\s+(?:possible|a\s+way)\s+to",
    r"what(?:'s|\s+is)\s+the\s+(?:best|easiest|simplest|right|proper|fastest)\s+way\s+to",
    r"how\s+(?:do|can|should|would|could|might)\s+(?:I|we|you|one)",
    r"how\s+to",
    r"what\s+(?:is|are|was|were)|what's",
    r"(?:who|where|when)\s+(?:is|are|was|were)",
    r"(?:do|does|can|could|should|would|is|are)\s+(?:I|we|you)(?:\s+(?:need\s+to|have\s+to))?",
    r"why\s+(?:do|does|did|is|are|was|were|can't|won't)",
    r"(?:need|want)(?:\s+to)?",
    r"(?:a|an|the|my|our|your|some)",
]
_LEAD = re.compile(r"^(?:" + "|".join(_LEADS) + r")\b[\s,:;-]*", re.IGNORECASE)
# "Where should we go in Lisbon" → "Where to go in Lisbon", as people title such a question.
_TO_FORM = re.compile(
    r"^(?P<wh>where|when|what|which)(?P<noun>(?:\s+\w+){0,2}?)\s+(?:should|can|could|do|would|"
    r"might|shall)\s+(?:I|we|one)\s+(?:(?:need|have)\s+to\s+)?(?!(?:need|have|want)\b)",
    re.IGNORECASE,
)
# Where the subject ends: a clause of its own, a comma, a dash, an aside.
_CLAUSE = re.compile(
    r"\s*(?:[,;:(\[\u2014\u2013]|\s-\s|\s(?:that|which|who|whom|whose|so\s+that|because|since|when|"
    r"while|if|unless|without\s+having|but|so\s+I|so\s+we|as\s+I|as\s+we|where\s+I|where\s+we)\s)",
    re.IGNORECASE,
)
_SMALL_WORDS = (  # a title never ends on one
    "a an the and or but nor of to in on at by for with from into onto about as than then "
    "so my our your their his her its this that these those is are was were be do does "
    "did can could should would will i we you it me us"
)
_SMALL = frozenset(_SMALL_WORDS.split())
# Nor is a title only these: "What should I do?" left "What", "Who is he?" left "He".
_NO_SUBJECT_WORDS = "what which where when who whom why how he she they them him"
_NO_SUBJECT = _SMALL | frozenset(_NO_SUBJECT_WORDS.split())
_END = re.compile(r"[\s.?!\u2026,;:\"'\u201c\u201d\u2018\u2019)]+$")


def _first_said(text: str) -> str:
    """The first question among the first sentences that say more than a greeting, else the
    first of them ("We love trams. Where should we go?" is about where to go)."""
    said = []
    for sentence in _SENTENCES.split(text[:READ_CHARS].strip())[:6]:
        rest = _without(_GREETING, " ".join(sentence.split()))
        if len(re.findall(r"\w+", rest)) >= 2:
            said.append(rest)
    questions = [sentence for sentence in said[:3] if sentence.endswith("?")]
    return (questions or said or [""])[0]


def _without(pattern: re.Pattern, text: str) -> str:
    """``text`` without what ``pattern`` matches at its start, again and again."""
    while True:
        shorter = pattern.sub("", text, count=1).strip()
        if shorter == text:
            return text
        text = shorter


def question_title(question: str) -> str:
    """The first question's subject as a short title; "" when it has none (a greeting, a word)."""
    said = _TO_FORM.sub(lambda m: f"{m['wh']}{m['noun']} to ", _first_said(question))
    subject = said if _TO_FORM.match(_first_said(question)) else _without(_LEAD, said)
    subject = _CLAUSE.split(subject, maxsplit=1)[0]
    words = _END.sub("", subject).split()
    if len(words) > WHOLE_WORDS:
        words = words[:MAX_WORDS]
    while words and words[-1].lower().strip(".,") in _SMALL:
        words.pop()
    if not [w for w in words if w.lower() not in _NO_SUBJECT and re.search(r"\w{2}", w)]:
        return ""
    title = " ".join(words)
    return title[:1].upper() + title[1:]
