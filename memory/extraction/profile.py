"""Fact rules about the user: name, home and origin, work, age, birth, "I am/speak/use/have".

The patterns are listed in the table of ``facts``.
"""

from __future__ import annotations

import datetime
import re

from memory.extraction.dates import find_date
from memory.extraction.subjects import (
    SCHEDULE_NOUNS,
    STOP,
    FactHit,
    category_of,
    subject_of,
    value,
    with_date,
)
from memory.extraction.text import (
    NUMBER_WORDS,
    I,
    cap,
    is_name,
    sentence,
    strip_end,
    third_person,
    wordset,
)

_DIET = wordset("vegetarian vegan pescatarian pescetarian teetotal")
_MARITAL = wordset("married single divorced engaged widowed separated")
_JOB_WORDS = wordset(
    """nurse chef student intern cto ceo cfo coo pilot doctor lawyer teacher developer engineer
designer manager consultant scientist analyst architect programmer writer researcher founder
freelancer artist accountant dentist pharmacist physician surgeon paramedic firefighter
journalist editor musician photographer carpenter plumber electrician mechanic translator
professor lecturer tutor librarian economist entrepreneur owner barista cook waiter waitress
cashier clerk farmer therapist psychologist veterinarian vet retiree pensioner dev devops sre
pm"""
)
_NOT_JOB = wordset("fan user person member lover beginner newbie customer believer idiot bit other")
_NATIONALITIES = wordset(
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
    I,
)
_CALL_ME_RE = re.compile(
    r"^(?:(?:please|you\s+can|you\s+may|just|everyone|people|my\s+friends)\s+)*"
    r"call\s+me\s+(?P<x>.+)$",
    I,
)
_I_AM_NAME_RE = re.compile(r"^I\s+am\s+(?P<x>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)$")


def name_fact(c: str, today: datetime.date) -> FactHit | None:
    if m := _NAME_RE.match(c):
        x = value(m["x"], 4)
        if x and not re.match(r"^(?:not|a|an|the)\b", x, I):
            return FactHit("personal", "name", f"The user's name is {cap(x)}.", 0.8)
        return STOP
    if m := _CALL_ME_RE.match(c):
        x = value(m["x"], 3)
        if x and re.fullmatch(r"[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*", x):
            return FactHit("preference", "preferred name", f"The user wants to be called {x}.", 0.8)
        return STOP
    m = _I_AM_NAME_RE.match(strip_end(c))
    if m and is_name(m["x"].split()[0]) and m["x"].split()[0] not in _NATIONALITIES:
        return FactHit("personal", "name", f"The user's name is {m['x']}.", 0.8)
    return None


_ADV = r"(?:(?:now|currently|actually|still)\s+)?"
_LIVE_RE = re.compile(
    rf"^I\s+{_ADV}(?:live|am\s+living|reside|am\s+based|am\s+located|have\s+moved|moved|"
    r"relocated|am\s+moving)\s+(?:in|near|to|at|outside|from\s+\w+\s+to)\s+(?P<x>.+)$",
    I,
)
_FROM_RE = re.compile(r"^I\s+am\s+(?:originally\s+)?from\s+(?P<x>.+)$", I)
_WORK_RE = re.compile(rf"^I\s+{_ADV}work\s+(?P<prep>at|for|as|in|on|from)\s+(?P<x>.+)$", I)
_WORK_HOW_RE = re.compile(
    r"^I\s+work\s+(?P<x>remotely|from\s+home|part[- ]time|full[- ]time|nights)\b", I
)
_AGE_RE = re.compile(r"^I\s+am\s+(?:now\s+)?(?P<n>\d{1,3})(?:\s+years?\s+old|\s+y/?o)?$", I)
_BORN_RE = re.compile(r"^I\s+was\s+born\s+(?P<prep>on|in|at)\s+(?P<x>.+)$", I)


def life_fact(c: str, today: datetime.date) -> FactHit | None:
    """Where the user lives and comes from, their work, age and birth."""
    if (m := _LIVE_RE.match(c)) and (x := value(m["x"], 8)):
        return FactHit("personal", "location", f"The user lives in {x}.", 0.7)
    if (m := _FROM_RE.match(c)) and (x := value(m["x"], 8)):
        return FactHit("personal", "origin", f"The user is from {x}.", 0.6)
    if (m := _WORK_RE.match(c)) and (x := value(m["x"], 10)):
        prep = m["prep"].lower()
        if prep in ("at", "for"):
            return FactHit("personal", "employer", f"The user works {prep} {x}.", 0.7)
        if prep == "as":
            return FactHit("personal", "job", f"The user works as {x}.", 0.7)
        if prep == "on":
            return FactHit("project", "", f"The user works on {third_person(x)}.", 0.5)
        if prep == "from":
            return FactHit("personal", "work arrangement", f"The user works from {x}.", 0.5)
        return FactHit("personal", "", f"The user works in {x}.", 0.5)
    if m := _WORK_HOW_RE.match(c):
        return FactHit("personal", "work arrangement", f"The user works {m['x'].lower()}.", 0.5)
    if (m := _AGE_RE.match(strip_end(c))) and 3 <= int(m["n"]) <= 120:
        return FactHit("personal", "age", f"The user is {m['n']} years old.", 0.6)
    if (m := _BORN_RE.match(c)) and (x := value(m["x"], 8)):
        if m["prep"].lower() == "on" or find_date(x, today):
            return FactHit("personal", "birthday", f"The user was born on {x}.", 0.7)
        if re.fullmatch(r"\d{4}", x):
            return FactHit("personal", "birth year", f"The user was born in {x}.", 0.6)
        return FactHit("personal", "birthplace", f"The user was born in {x}.", 0.6)
    return None


_RELATIVES = (
    r"wife|husband|partner|spouse|sister|brother|mother|father|mom|mum|dad|son|daughter|"
    r"friend|best\s+friend|boss|colleague|girlfriend|boyfriend|grandmother|grandfather|"
    r"grandma|grandpa|aunt|uncle|cousin|niece|nephew|flatmate|roommate"
)
_RELATIVE_RE = re.compile(
    rf"^my\s+(?P<who>(?:(?:older|younger|little|big|elder)\s+)?(?:{_RELATIVES}))"
    r"(?:\s+(?P<name>(?-i:[A-Z][\w'-]+)))?\s+(?:(?:now|still|currently)\s+)?"
    r"(?P<verb>lives\s+(?:in|near)|works\s+(?:at|for|as|in)|is\s+from|moved\s+to)\s+(?P<x>.+)$",
    I,
)
_RELATIVE_SUBJECT = {"lives": "location", "moved": "location", "is": "origin"}


def relative_fact(c: str, today: datetime.date) -> FactHit | None:
    """Where someone close to the user lives or works: "my sister lives in Berlin"."""
    m = _RELATIVE_RE.match(c)
    if not m or not (x := value(m["x"], 8)):
        return None
    who = " ".join(m["who"].lower().split())
    verb = " ".join(m["verb"].lower().split())
    first = verb.split()[0]
    if first == "works":
        aspect = "job" if verb.endswith(" as") else "employer"
    else:
        aspect = _RELATIVE_SUBJECT[first]
    named = f" {m['name']}" if m["name"] else ""
    text = sentence(f"The user's {who}{named} {verb} {x}")
    return FactHit("personal", f"{subject_of(who)}'s {aspect}", text, 0.6)


_I_AM_RE = re.compile(r"^I\s+am\s+(?:(?:now|actually|currently|still)\s+)?(?P<x>.+)$", I)


def _i_am_fact(raw: str) -> FactHit | None:
    x = value(raw, 10)
    if not x:
        return None
    low = x.lower()
    first = low.split()[0]
    if re.match(r"^(?:allergic|intolerant)\s+to\s+", low):
        return FactHit("personal", "", f"The user is {x}.", 0.7)
    m = re.match(
        r"^(?P<verb>learning|studying|building|working\s+on|developing|writing|training\s+for|"
        r"preparing\s+for|planning\s+(?:a|an|my|our)|saving\s+(?:up\s+)?for|running)\s+(?P<y>.+)$",
        x,
        I,
    )
    if m:
        y = third_person(m["y"])
        category = (
            "project" if re.match(r"^(?:building|working|developing|running)", low) else "personal"
        )
        return FactHit(category, "", f"The user is {m['verb'].lower()} {y}.", 0.5)
    if first in _DIET or (
        first in ("a", "an") and len(low.split()) == 2 and low.split()[1] in _DIET
    ):
        word = low.split()[-1]
        return FactHit("personal", "diet", f"The user is {word}.", 0.7)
    if x in _NATIONALITIES:
        return FactHit("personal", "nationality", f"The user is {x}.", 0.6)
    if first in _MARITAL:
        return FactHit("personal", "marital status", f"The user is {low}.", 0.6)
    if first in ("retired", "unemployed", "self-employed", "freelancing"):
        return FactHit("personal", "job", f"The user is {low}.", 0.6)
    m = re.match(r"^(?P<det>a|an)\s+(?P<np>[\w' -]+)$", x, I)
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
            return FactHit("personal", "job", f"The user is {m['det'].lower()} {np}.", 0.7)
        return FactHit("personal", "", f"The user is {m['det'].lower()} {np}.", 0.45)
    return None


def i_am_rule(c: str, today: datetime.date) -> FactHit | None:
    m = _I_AM_RE.match(c)
    return _i_am_fact(m["x"]) if m else None


_SPEAK_RE = re.compile(r"^I\s+(?:also\s+)?speak\s+(?P<x>.+)$", I)
_USE_RE = re.compile(
    r"^(?P<who>I|we|the\s+team|our\s+team)\s+(?:(?:mainly|mostly|currently|now|usually|"
    r"always|also|still)\s+)?(?:use|are\s+using|am\s+using|rely\s+on|run|are\s+running|"
    r"deploy\s+(?:to|on)|host\s+(?:on|with))\s+(?P<x>.+?)(?:\s+(?:for|to\s+handle|as\s+our|"
    r"as\s+the|as\s+my)\s+(?P<for>.+))?$",
    I,
)


def speak_use_fact(c: str, today: datetime.date) -> FactHit | None:
    if (m := _SPEAK_RE.match(c)) and (x := value(m["x"], 8)):
        return FactHit("personal", "", f"The user speaks {x}.", 0.5)
    m = _USE_RE.match(c)
    if not m:
        return None
    x = value(m["x"], 8)
    purpose = value(m["for"], 8) if m["for"] else ""
    if not x or re.match(r"^(?:it|this|that|them|you|the\s+same)\b", x, I):
        return None
    who = "The user uses" if m["who"].lower() == "i" else "The user's team uses"
    subject = "tool for " + subject_of(purpose) if purpose else ""
    text = f"{who} {x}" + (f" for {third_person(purpose)}" if purpose else "")
    return FactHit("technical", subject, sentence(text), 0.55)


_HAVE_RE = re.compile(r"^I\s+(?:also\s+|still\s+|now\s+)?(?:have|have\s+got|got)\s+(?P<x>.+)$", I)
_HAVE_DENY = re.compile(
    r"^(?:to|been|got\s+to|a\s+(?:quick\s+)?question|questions|an?\s+idea|no\s+idea|a\s+feeling|"
    r"a\s+suggestion|a\s+doubt|a\s+look|a\s+go|fun|time|no|nothing|never|a\s+problem|"
    r"an?\s+issue|a\s+request|some\s+questions|already|just|not|finished|done|decided|"
    r"completed|sent|made|seen|heard|read|tried|used|the\s+same)\b",
    I,
)
_COUNTABLE = re.compile(rf"^(?P<n>\d{{1,3}}|{'|'.join(NUMBER_WORDS)})\s+(?P<noun>[a-z][\w-]*)$", I)


def _have_fact(raw: str, today: datetime.date) -> FactHit | None:
    m = re.match(
        r"^(?P<det>a|an|one|two|three|\d+)\s+(?P<noun>[\w-]+(?:\s+[\w-]+)?)\s+"
        r"(?:called|named|whose\s+name\s+is)\s+(?P<x>.+)$",
        raw,
        I,
    )
    if m:
        x = value(m["x"], 4)
        if x:
            noun = subject_of(m["noun"])
            subject = f"{noun}'s name"
            return FactHit(category_of(noun), subject, f"The user's {noun}'s name is {x}.", 0.7)
    x = value(raw, 16)
    if not x:
        return None
    m = _COUNTABLE.match(x)
    if m and m["n"].lower() not in ("a", "an", "one") and m["noun"].lower().endswith("s"):
        noun = subject_of(m["noun"])
        return FactHit(category_of(noun), f"number of {noun}", f"The user has {x}.", 0.6)
    if m and m["n"].lower() in ("no", "zero"):
        noun = subject_of(m["noun"])
        if not noun.endswith("s"):
            noun += "s"
        return FactHit(category_of(noun), f"number of {noun}", f"The user has {x}.", 0.6)
    x3 = third_person(x)
    text = f"The user has {with_date(x3, today)}"
    category = category_of(x)
    if find_date(x, today) and re.search(rf"\b(?:{SCHEDULE_NOUNS})\b", x, I):
        category = "schedule"
    return FactHit(category, "", sentence(text), 0.5)


def have_rule(c: str, today: datetime.date) -> FactHit | None:
    m = _HAVE_RE.match(c)
    if not m or _HAVE_DENY.match(m["x"]):
        return None
    return _have_fact(m["x"], today)
