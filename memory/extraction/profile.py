"""Fact rules about the user: name, home and origin, work, age, birth, "I am/speak/use/have".

The patterns are listed in the table of ``facts``.
"""

from __future__ import annotations

import datetime
import re

from memory.extraction.dates import _find_date
from memory.extraction.subjects import (
    _SCHEDULE_NOUNS,
    _STOP,
    _category,
    _FactHit,
    _subject,
    _value,
    _with_date,
)
from memory.extraction.text import (
    _I,
    _NUMBER_WORDS,
    _cap,
    _is_name,
    _sentence,
    _strip_end,
    _third_person,
    _wordset,
)

_DIET = _wordset("vegetarian vegan pescatarian pescetarian teetotal")
_MARITAL = _wordset("married single divorced engaged widowed separated")
_JOB_WORDS = _wordset(
    """nurse chef student intern cto ceo cfo coo pilot doctor lawyer teacher developer engineer
designer manager consultant scientist analyst architect programmer writer researcher founder
freelancer artist accountant dentist pharmacist physician surgeon paramedic firefighter
journalist editor musician photographer carpenter plumber electrician mechanic translator
professor lecturer tutor librarian economist entrepreneur owner barista cook waiter waitress
cashier clerk farmer therapist psychologist veterinarian vet retiree pensioner dev devops sre
pm"""
)
_NOT_JOB = _wordset(
    "fan user person member lover beginner newbie customer believer idiot bit other"
)
_NATIONALITIES = _wordset(
    """American British English Scottish Welsh Irish German French Spanish Italian Portuguese
Dutch Belgian Swiss Austrian Swedish Norwegian Danish Finnish Polish Czech Slovak Hungarian
Romanian Bulgarian Greek Turkish Russian Ukrainian Chinese Japanese Korean Indian Pakistani
Bangladeshi Vietnamese Thai Filipino Indonesian Malaysian Australian Canadian Mexican Brazilian
Argentinian Argentine Chilean Colombian Peruvian Nigerian Kenyan Egyptian Moroccan Israeli
Iranian Iraqi Saudi Lebanese Croatian Serbian Slovenian Lithuanian Latvian Estonian Icelandic
Scandinavian European African Asian Cuban Jamaican Venezuelan Ghanaian Ethiopian Taiwanese
Singaporean Nepali Kiwi Catalan Basque Flemish Bavarian Texan"""
)

_NAME_RE = re.compile(
    r"^(?:my\s+(?:full\s+|first\s+)?name\s+is|my\s+name's|I\s+am\s+called|I\s+go\s+by|"
    r"I\s+am\s+named)\s+(?P<x>.+)$",
    _I,
)
_CALL_ME_RE = re.compile(
    r"^(?:(?:please|you\s+can|you\s+may|just|everyone|people|my\s+friends)\s+)*"
    r"call\s+me\s+(?P<x>.+)$",
    _I,
)
_I_AM_NAME_RE = re.compile(r"^I\s+am\s+(?P<x>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)$")


def _name_fact(c: str, today: datetime.date) -> _FactHit | None:
    if m := _NAME_RE.match(c):
        x = _value(m["x"], 4)
        if x and not re.match(r"^(?:not|a|an|the)\b", x, _I):
            return _FactHit("personal", "name", f"The user's name is {_cap(x)}.", 0.8)
        return _STOP
    if m := _CALL_ME_RE.match(c):
        x = _value(m["x"], 3)
        if x and re.fullmatch(r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*", x):
            return _FactHit(
                "preference", "preferred name", f"The user wants to be called {x}.", 0.8
            )
        return _STOP
    m = _I_AM_NAME_RE.match(_strip_end(c))
    if m and _is_name(m["x"].split()[0]) and m["x"].split()[0] not in _NATIONALITIES:
        return _FactHit("personal", "name", f"The user's name is {m['x']}.", 0.8)
    return None


_ADV = r"(?:(?:now|currently|actually|still)\s+)?"
_LIVE_RE = re.compile(
    rf"^I\s+{_ADV}(?:live|am\s+living|reside|am\s+based|am\s+located|have\s+moved|moved|"
    r"relocated|am\s+moving)\s+(?:in|near|to|at|outside|from\s+\w+\s+to)\s+(?P<x>.+)$",
    _I,
)
_FROM_RE = re.compile(r"^I\s+am\s+(?:originally\s+)?from\s+(?P<x>.+)$", _I)
_WORK_RE = re.compile(rf"^I\s+{_ADV}work\s+(?P<prep>at|for|as|in|on|from)\s+(?P<x>.+)$", _I)
_WORK_HOW_RE = re.compile(
    r"^I\s+work\s+(?P<x>remotely|from\s+home|part[- ]time|full[- ]time|nights)\b", _I
)
_AGE_RE = re.compile(r"^I\s+am\s+(?:now\s+)?(?P<n>\d{1,3})(?:\s+years?\s+old|\s+y/?o)?$", _I)
_BORN_RE = re.compile(r"^I\s+was\s+born\s+(?P<prep>on|in|at)\s+(?P<x>.+)$", _I)


def _life_fact(c: str, today: datetime.date) -> _FactHit | None:
    """Where the user lives and comes from, their work, age and birth."""
    if (m := _LIVE_RE.match(c)) and (x := _value(m["x"], 8)):
        return _FactHit("personal", "location", f"The user lives in {x}.", 0.7)
    if (m := _FROM_RE.match(c)) and (x := _value(m["x"], 8)):
        return _FactHit("personal", "origin", f"The user is from {x}.", 0.6)
    if (m := _WORK_RE.match(c)) and (x := _value(m["x"], 10)):
        prep = m["prep"].lower()
        if prep in ("at", "for"):
            return _FactHit("personal", "employer", f"The user works {prep} {x}.", 0.7)
        if prep == "as":
            return _FactHit("personal", "job", f"The user works as {x}.", 0.7)
        if prep == "on":
            return _FactHit("project", "", f"The user works on {_third_person(x)}.", 0.5)
        if prep == "from":
            return _FactHit("personal", "work arrangement", f"The user works from {x}.", 0.5)
        return _FactHit("personal", "", f"The user works in {x}.", 0.5)
    if m := _WORK_HOW_RE.match(c):
        return _FactHit("personal", "work arrangement", f"The user works {m['x'].lower()}.", 0.5)
    if (m := _AGE_RE.match(_strip_end(c))) and 3 <= int(m["n"]) <= 120:
        return _FactHit("personal", "age", f"The user is {m['n']} years old.", 0.6)
    if (m := _BORN_RE.match(c)) and (x := _value(m["x"], 8)):
        if m["prep"].lower() == "on" or _find_date(x, today):
            return _FactHit("personal", "birthday", f"The user was born on {x}.", 0.7)
        if re.fullmatch(r"\d{4}", x):
            return _FactHit("personal", "birth year", f"The user was born in {x}.", 0.6)
        return _FactHit("personal", "birthplace", f"The user was born in {x}.", 0.6)
    return None


_I_AM_RE = re.compile(r"^I\s+am\s+(?:(?:now|actually|currently|still)\s+)?(?P<x>.+)$", _I)


def _i_am_fact(raw: str) -> _FactHit | None:
    x = _value(raw, 10)
    if not x:
        return None
    low = x.lower()
    first = low.split()[0]
    if re.match(r"^(?:allergic|intolerant)\s+to\s+", low):
        return _FactHit("personal", "", f"The user is {x}.", 0.7)
    m = re.match(
        r"^(?P<verb>learning|studying|building|working\s+on|developing|writing|training\s+for|"
        r"preparing\s+for|planning\s+(?:a|an|my|our)|saving\s+(?:up\s+)?for|running)\s+(?P<y>.+)$",
        x,
        _I,
    )
    if m:
        y = _third_person(m["y"])
        category = (
            "project" if re.match(r"^(?:building|working|developing|running)", low) else "personal"
        )
        return _FactHit(category, "", f"The user is {m['verb'].lower()} {y}.", 0.5)
    if first in _DIET or (
        first in ("a", "an") and len(low.split()) == 2 and low.split()[1] in _DIET
    ):
        word = low.split()[-1]
        return _FactHit("personal", "diet", f"The user is {word}.", 0.7)
    if x in _NATIONALITIES:
        return _FactHit("personal", "nationality", f"The user is {x}.", 0.6)
    if first in _MARITAL:
        return _FactHit("personal", "marital status", f"The user is {low}.", 0.6)
    if first in ("retired", "unemployed", "self-employed", "freelancing"):
        return _FactHit("personal", "job", f"The user is {low}.", 0.6)
    m = re.match(r"^(?P<det>a|an)\s+(?P<np>[\w' -]+)$", x, _I)
    if m:
        np = m["np"].strip()
        head = re.split(r"\s+(?:at|for|in|with|on|from|who|and)\s+", np, maxsplit=1)[0].split()[-1]
        head = head.lower()
        if head in _NOT_JOB:
            return None
        job = head in _JOB_WORDS or (
            re.search(r"(?:er|or|ist|ant|ian)$", head) and head not in _DIET
        )
        if job:
            return _FactHit("personal", "job", f"The user is {m['det'].lower()} {np}.", 0.7)
        return _FactHit("personal", "", f"The user is {m['det'].lower()} {np}.", 0.45)
    return None


def _i_am_rule(c: str, today: datetime.date) -> _FactHit | None:
    m = _I_AM_RE.match(c)
    return _i_am_fact(m["x"]) if m else None


_SPEAK_RE = re.compile(r"^I\s+(?:also\s+)?speak\s+(?P<x>.+)$", _I)
_USE_RE = re.compile(
    r"^(?P<who>I|we|the\s+team|our\s+team)\s+(?:(?:mainly|mostly|currently|now|usually|"
    r"always|also|still)\s+)?(?:use|are\s+using|am\s+using|rely\s+on|run|are\s+running|"
    r"deploy\s+(?:to|on)|host\s+(?:on|with))\s+(?P<x>.+?)(?:\s+(?:for|to\s+handle|as\s+our|"
    r"as\s+the|as\s+my)\s+(?P<for>.+))?$",
    _I,
)


def _speak_use_fact(c: str, today: datetime.date) -> _FactHit | None:
    if (m := _SPEAK_RE.match(c)) and (x := _value(m["x"], 8)):
        return _FactHit("personal", "", f"The user speaks {x}.", 0.5)
    m = _USE_RE.match(c)
    if not m:
        return None
    x = _value(m["x"], 8)
    purpose = _value(m["for"], 8) if m["for"] else ""
    if not x or re.match(r"^(?:it|this|that|them|you|the\s+same)\b", x, _I):
        return None
    who = "The user uses" if m["who"].lower() == "i" else "The user's team uses"
    subject = "tool for " + _subject(purpose) if purpose else ""
    text = f"{who} {x}" + (f" for {_third_person(purpose)}" if purpose else "")
    return _FactHit("technical", subject, _sentence(text), 0.55)


_HAVE_RE = re.compile(r"^I\s+(?:also\s+|still\s+|now\s+)?(?:have|have\s+got|got)\s+(?P<x>.+)$", _I)
_HAVE_DENY = re.compile(
    r"^(?:to|been|got\s+to|a\s+(?:quick\s+)?question|questions|an?\s+idea|no\s+idea|a\s+feeling|"
    r"a\s+suggestion|a\s+doubt|a\s+look|a\s+go|fun|time|no|nothing|never|a\s+problem|"
    r"an?\s+issue|a\s+request|some\s+questions|already|just|not|finished|done|decided|"
    r"completed|sent|made|seen|heard|read|tried|used|the\s+same)\b",
    _I,
)
_COUNTABLE = re.compile(
    rf"^(?P<n>\d{{1,3}}|{'|'.join(_NUMBER_WORDS)})\s+(?P<noun>[a-z][\w-]*)$", _I
)


def _have_fact(raw: str, today: datetime.date) -> _FactHit | None:
    m = re.match(
        r"^(?P<det>a|an|one|two|three|\d+)\s+(?P<noun>[\w-]+(?:\s+[\w-]+)?)\s+"
        r"(?:called|named|whose\s+name\s+is)\s+(?P<x>.+)$",
        raw,
        _I,
    )
    if m:
        x = _value(m["x"], 4)
        if x:
            noun = _subject(m["noun"])
            subject = f"{noun}'s name"
            return _FactHit(_category(noun), subject, f"The user's {noun}'s name is {x}.", 0.7)
    x = _value(raw, 16)
    if not x:
        return None
    m = _COUNTABLE.match(x)
    if m and m["n"].lower() not in ("a", "an", "one") and m["noun"].lower().endswith("s"):
        noun = _subject(m["noun"])
        return _FactHit(_category(noun), f"number of {noun}", f"The user has {x}.", 0.6)
    if m and m["n"].lower() in ("no", "zero"):
        noun = _subject(m["noun"])
        if not noun.endswith("s"):
            noun += "s"
        return _FactHit(_category(noun), f"number of {noun}", f"The user has {x}.", 0.6)
    x3 = _third_person(x)
    text = f"The user has {_with_date(x3, today)}"
    category = _category(x)
    if _find_date(x, today) and re.search(rf"\b(?:{_SCHEDULE_NOUNS})\b", x, _I):
        category = "schedule"
    return _FactHit(category, "", _sentence(text), 0.5)


def _have_rule(c: str, today: datetime.date) -> _FactHit | None:
    m = _HAVE_RE.match(c)
    if not m or _HAVE_DENY.match(m["x"]):
        return None
    return _have_fact(m["x"], today)
