"""Facts (user messages only).

Questions (ending in ``?`` or starting with what/where/who/how/do/is/can ...) and clauses
starting with "if/when/unless" are not facts. "remember that X", "note that X", "keep in mind
X", "for the record X" strip the prefix (and raise importance); if nothing below matches X, X
itself is kept in the third person as an ``other`` fact without a subject.

====================================================  ====================  ==================
pattern (first person)                                subject               category
====================================================  ====================  ==================
my name is X / my name's X / I am called X / I go by  name                  personal
I'm <Capitalised name>  ("Hi, I'm Sam")               name                  personal
call me X / you can call me X                         preferred name        preference
I live in/near X, I'm based in X, I moved to X        location              personal
I'm from X                                            origin                personal
I work at/for X                                       employer              personal
I work as (a) X, I'm a/an <job noun>                  job                   personal
I work remotely / from home / part-time               work arrangement      personal
I'm N (years old)                                     age                   personal
I'm British/German/... (a list of nationalities)      nationality           personal
I'm vegetarian/vegan/... ; I'm married/single/...     diet; marital status  personal
I was born on <date> / in <year> / in <place>         birthday/birth year/  personal
                                                      birthplace
I have N <things> ; I have a <noun> called X          number of <things>;   by keyword
                                                      <noun>'s name
I have X (other), I'm allergic to X, I speak X,       "" (no contradiction) by keyword
I'm learning/studying/working on/building X
I like/love/enjoy/prefer/hate/dislike/can't stand X,  opinion of X, or an   preference
I don't like X, I'm (not) a fan of X, I'm into X;     answer-style subject
the same with "we" ("We love X": the user and their
group; not "we love you/your app/that idea")
I prefer X over/to/rather than Y                      choice between X and  preference
                                                      Y (sorted)
keep/make answers X; answer/reply in X; (please)      answer length, answer preference
use X; don't/never/stop/avoid X; I'd like answers X   format, tone, emojis,
                                                      answer language, ...
my/our X is/are/was Y  (X up to 5 words)              X (normalised)        by keyword
my X is called/named Y, I have a X called Y           X's name              by keyword
my <relative> (Name) lives in / works at|as / is from  <relative>'s location personal
                                                      / employer / job /
                                                      origin
our/my/the project/app/... is called X                project name, ...     project
I'm building/working on a <noun> called X             <noun> name           project
we use / I use / we're using X (for Y)                tool for Y, or ""     technical
the/our (X) deadline (for Y) is Z                     project deadline /    schedule
                                                      X deadline / deadline
                                                      for Y
the/our/my X is due Z                                 X due date            schedule
the/our/my <meeting|launch|exam|...> is (on/at) Z     <meeting...>          schedule
====================================================  ====================  ==================

Subjects are lowercase, without articles, with spelling unified ("favorite color" ->
"favourite colour", "mom"/"mum" -> "mother") and synonyms merged ("occupation", "role",
"job title" -> "job"; "company" -> "employer"; "date of birth" -> "birthday"). Values may carry
"now/actually/still" ("my favourite colour is now green"), which is dropped, so a restatement
and a correction share the subject; the newer text supersedes the older. "by keyword" means
the category comes from the subject: favourite/preferred -> preference, deadline/meeting/
launch/... -> schedule, project/app/team/client/... -> project, language/framework/database/
stack/... -> technical, name/family/pets/birthday/job/... -> personal, else other. Schedule
facts with a parsable date get it appended in ISO form ("... Friday (2025-03-07).").
Within one call facts are deduplicated by text, and for a non-empty subject only the latest
statement is kept (the earlier one is already superseded).
"""

from __future__ import annotations

import datetime
import re

from memory.extraction.attributes import possessive_fact, project_name_fact, schedule_fact
from memory.extraction.preferences import preference_fact
from memory.extraction.profile import (
    have_rule,
    i_am_rule,
    life_fact,
    name_fact,
    relative_fact,
    speak_use_fact,
)
from memory.extraction.sentences import FILLER, HYPOTHETICAL, Sent, clauses_of
from memory.extraction.subjects import STOP, FactHit, category_of
from memory.extraction.text import I, normalise_key, sentence, strip_end, third_person
from memory.extraction.types import CATEGORIES, ExtractedFact

_QUESTION_START = re.compile(
    r"^(?:(?:what|where|who|whom|whose|why|how|which)\b|(?:do|does|did|is|are|am|was|were|can|"
    r"could|would|should|will|shall|have|has|may|might)\s+(?:you|I|we|they|he|she|it|my|our|"
    r"your|the|this|that|there)\b)",
    I,
)
_REMEMBER = re.compile(
    r"^(?:(?:please|can\s+you|could\s+you|would\s+you|will\s+you|you\s+should|I\s+want\s+you\s+to"
    r"|make\s+sure\s+to|try\s+to|just)\s+)*(?:remember|note|keep\s+in\s+mind|do\s+not\s+forget|"
    r"make\s+a\s+note|take\s+note|bear\s+in\s+mind|for\s+the\s+record|for\s+future\s+reference|"
    r"for\s+your\s+information|note\s+to\s+self|save\s+this)\b(?!\s+to\b)(?:\s+(?:that|this))?"
    r"\s*[:,\-\u2013]?\s*",
    I,
)

_FACT_RULES = (
    name_fact,
    project_name_fact,
    schedule_fact,
    life_fact,
    relative_fact,
    preference_fact,
    i_am_rule,
    speak_use_fact,
    have_rule,
    possessive_fact,
)


def _fact_from_clause(clause: str, today: datetime.date) -> FactHit | None:
    """The first fact rule that recognises ``clause`` (first person, fillers removed)."""
    c = re.sub(r"^(?:and|but|so|also)\s+", "", clause.strip(), flags=I)
    for rule in _FACT_RULES:
        hit = rule(c, today)
        if hit is STOP:
            return None
        if hit is not None:
            return hit
    return None


def extract_facts(sents: list[Sent], today: datetime.date) -> list[ExtractedFact]:
    facts: list[ExtractedFact] = []
    for s in sents:
        if s.role != "user":
            continue
        for clause in clauses_of(s.text):
            remembered = False
            m = _REMEMBER.match(clause)
            if m and m.end() < len(clause):
                clause, remembered = clause[m.end() :], True
                clause = FILLER.sub("", clause)
            elif clause.rstrip().endswith("?") or _QUESTION_START.match(clause):
                continue
            if HYPOTHETICAL.match(clause) or re.search(r"\bnot\s+sure\b", clause, I):
                continue
            clause = clause.rstrip("?").strip()
            hit = _fact_from_clause(clause, today)
            if hit is None and remembered:
                body = strip_end(clause)
                if len(body.split()) >= 2 and len(body) <= 240:
                    text = sentence(third_person(body))
                    hit = FactHit(category_of(body), "", text, 0.55)
            if hit is None or len(hit.text) > 300:
                continue
            importance = hit.importance + (0.2 if remembered else 0.0)
            if re.match(r"^(?:actually|now|correction|update|no)\b", s.text, I):
                importance += 0.05
            facts.append(
                ExtractedFact(
                    category=hit.category if hit.category in CATEGORIES else "other",
                    subject=hit.subject[:200],
                    text=hit.text,
                    importance=round(min(1.0, max(0.0, importance)), 2),
                    message_index=s.index,
                )
            )
            s.tags.add("fact")
    # dedupe: same text -> keep the last; same non-empty subject -> keep the latest only
    seen_text: set[str] = set()
    seen_subject: set[str] = set()
    kept: list[ExtractedFact] = []
    for fact in reversed(facts):
        key = normalise_key(fact.text)
        if key in seen_text or (fact.subject and fact.subject in seen_subject):
            continue
        seen_text.add(key)
        if fact.subject:
            seen_subject.add(fact.subject)
        kept.append(fact)
    kept.reverse()
    return kept
