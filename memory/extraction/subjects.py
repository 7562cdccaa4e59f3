"""Fact subjects, categories and values, shared by the fact rules.

How subjects are normalised and categories chosen is documented in ``facts``. A rule
returns a ``FactHit``, ``None`` when it does not apply, or ``STOP`` when it recognised
the clause but rejected it (no later rule is tried).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass

from memory.extraction.dates import find_date
from memory.extraction.text import ARTICLES, I, expand, strip_end


@dataclass
class FactHit:
    category: str
    subject: str
    text: str
    importance: float = 0.6


STOP = FactHit("", "", "")  # a rule recognised the clause but rejected it: look no further

PROJECT_NOUNS = (
    "project|app|application|startup|company|product|team|repo|repository|service|tool|website|"
    "site|game|library|band|business|book|podcast|channel|blog|newsletter|shop|store|bot|plugin"
)
SCHEDULE_NOUNS = (
    r"meeting|appointment|call|interview|exam|flight|launch|release|demo|presentation|standup|"
    r"stand-up|review|wedding|party|trip|holiday|vacation|conference|workshop|sprint|kickoff|"
    r"kick-off|retro|retrospective|deadline|surgery|check-up|checkup|class|lesson|date|"
    r"go-live|cutover|offsite"
)

_SPELLING = {
    "favorite": "favourite",
    "fave": "favourite",
    "fav": "favourite",
    "color": "colour",
    "colors": "colours",
    "flavor": "flavour",
    "flavors": "flavours",
    "neighbor": "neighbour",
    "neighbors": "neighbours",
    "humor": "humour",
    "mom": "mother",
    "mum": "mother",
    "mommy": "mother",
    "mummy": "mother",
    "dad": "father",
    "daddy": "father",
    "kids": "children",
    "kid": "child",
    "hometown": "home town",
}
_SUBJECT_SYNONYMS = {
    "job title": "job",
    "occupation": "job",
    "profession": "job",
    "role": "job",
    "position": "job",
    "work": "job",
    "company": "employer",
    "workplace": "employer",
    "email": "email address",
    "e mail": "email address",
    "e-mail": "email address",
    "phone": "phone number",
    "mobile": "phone number",
    "mobile number": "phone number",
    "number": "phone number",
    "cell": "phone number",
    "birth date": "birthday",
    "date of birth": "birthday",
    "bday": "birthday",
    "first name": "name",
    "given name": "name",
    "time zone": "timezone",
    "tz": "timezone",
    "city": "location",
    "address": "home address",
}


def subject_of(text: str) -> str:
    text = expand(text).lower().replace("\u2019", "'")
    text = re.sub(r"[^\w\s'-]+", " ", text)
    words = []
    for word in text.split():
        if word in ARTICLES:
            continue
        stem, possessive = (word[:-2], "'s") if word.endswith("'s") else (word, "")
        words.append(_SPELLING.get(stem, stem) + possessive)
    words = [w for w in words if w not in ("my", "our", "your", "the", "user's")]
    subject = " ".join(words).strip(" '-")
    subject = _SUBJECT_SYNONYMS.get(subject, subject)
    return subject[:200]


_CATEGORY_WORDS = [
    (
        "preference",
        "favourite preferred preference opinion choice answer answers tone emojis style format "
        "length units examples",
    ),
    (
        "schedule",
        "deadline deadlines meeting meetings appointment appointments flight exam exams holiday "
        "holidays vacation trip launch release standup stand-up interview due schedule calendar "
        "event conference workshop demo presentation review sprint wedding party class lesson",
    ),
    (
        "project",
        "project projects app application startup product repo repository team client clients "
        "customer customers milestone feature features roadmap mvp budget codebase website site "
        "service business company's mission goal goals cto ceo pm",
    ),
    (
        "technical",
        "language languages framework frameworks database databases db stack editor ide os "
        "laptop computer server servers version python javascript tool tools library libraries "
        "api cloud hosting backend frontend ci deployment infrastructure keyboard browser shell",
    ),
    (
        "personal",
        "name wife husband partner spouse girlfriend boyfriend sister brother sibling siblings "
        "mother father parent parents son daughter children child baby dog cat pet pets friend "
        "birthday age home location address email phone nationality job employer boss manager "
        "colleague diet allergy origin timezone hobby hobbies car house marital birthplace "
        "native town family",
    ),
]
_CATEGORY_SETS = [(cat, frozenset(words.split())) for cat, words in _CATEGORY_WORDS]


def category_of(subject: str, text: str = "") -> str:
    words = set(re.findall(r"[\w'-]+", subject.lower()))
    words |= {w[:-2] for w in words if w.endswith("'s")}
    words |= {w[:-1] for w in words if w.endswith("s")}
    for cat, vocab in _CATEGORY_SETS:
        if words & vocab:
            return cat
    if text:
        return category_of(text)
    return "other"


_VALUE_CUT = re.compile(
    r"\s+(?:because|since|but|although|though|so\s+that|which\s+means)\b.*$|\s*,\s*(?:so|but)\b.*$"
    r"|\s*\((?!\d{4}-).*$",
    I,
)
_VALUE_LEAD = re.compile(r"^(?:(?:now|actually|still|really|currently|officially)\s+)+", I)
_VALUE_TAIL = re.compile(
    r"\s+(?:now|actually|these\s+days|nowadays|by\s+the\s+way|btw|though|too|as\s+well|"
    r"not\s+\w+\s+anymore|anymore|any\s+more|recently|lately|a\s+while\s+ago|"
    r"(?:last|this)\s+(?:year|month|week|summer|winter|spring|autumn)|"
    r"(?:\w+|\d+)\s+(?:years?|months?|weeks?)\s+ago)$",
    I,
)


def value(text: str, max_words: int = 20) -> str:
    text = _VALUE_CUT.sub("", text.strip())
    text = strip_end(text)
    for _ in range(2):
        text = _VALUE_LEAD.sub("", text)
        text = strip_end(_VALUE_TAIL.sub("", text))
    if not text or "?" in text or len(text.split()) > max_words:
        return ""
    if re.match(r"^(?:not\s+sure|unknown|a\s+secret|none\s+of\s+your)\b", text, I):
        return ""
    return text


def with_date(text: str, today: datetime.date) -> str:
    hit = find_date(text, today)
    if not hit or re.search(r"\d{4}-\d{2}-\d{2}", text):
        return text
    return f"{text} ({hit[0].isoformat()})"
