"""Offline memory extraction: an extractive rolling summary and a pattern-based extractor.

Pure Python (standard library only, no Django). When no language model is configured, the
background job that folds a conversation's unsummarised messages into its rolling summary calls
``extract(messages, previous_summary=..., today=...)`` and gets the same structure the LLM path
returns: a summary, topics, decisions (with context, rationale, alternatives, stakeholders),
action items (with owners, due dates, dependencies), facts about the user and open questions.
Everything is deterministic: the same input gives the same output.

Input
-----
``messages`` is a list of ``{"role": "user" | "assistant", "content": str}`` in order. Messages
whose content starts with ``*Offline reply`` (memorychat's own no-model answers) are skipped
entirely, as are other roles and empty messages. Fenced code blocks and ``>`` quoted lines are
removed; each message is cut at ``MAX_MESSAGE_CHARS``. Text is split into sentences (at
``.!?`` followed by a space, and at line breaks) and, for facts and actions, into clauses (at
``;`` and at "and/but/so" followed by a new first-person subject: "My name is Sam and I live in
Berlin"). Contractions are expanded before matching ("I'm" -> "I am", "don't" -> "do not"), and
matching ignores case except where a capitalised name is required. Leading fillers ("actually",
"now", "oh", "btw", "hi", ...) are dropped, so corrections read like first statements.

Facts (user messages only)
--------------------------
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
I don't like X, I'm (not) a fan of X, I'm into X      answer-style subject
I prefer X over/to/rather than Y                      choice between X and  preference
                                                      Y (sorted)
keep/make answers X; answer/reply in X; (please)      answer length, answer preference
use X; don't/never/stop/avoid X; I'd like answers X   format, tone, emojis,
                                                      answer language, ...
my/our X is/are/was Y  (X up to 5 words)              X (normalised)        by keyword
my X is called/named Y, I have a X called Y           X's name              by keyword
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

Decisions (user messages; explicit ``Decision:`` lines also from the assistant)
------------------------------------------------------------------------------
``decision: X`` / ``decided: X`` / ``agreed: X``; "<we|I|the team|Names> (have/all/finally)
decided|agreed|chose|settled|opted|committed (to|on|that|for) X"; "it was decided/agreed (that)
X"; "let's go with|use|stick with|pick|choose|switch to|move to|adopt|settle on|keep X";
"we'll / we are going to use|go with|switch to|move to|stick with|adopt X instead of|rather than|
over Y" (alternatives ``["Y"]``); proposals with status ``proposed``: "I propose/suggest (we)
X", "how about (we) X", "maybe we should X", "we should/could X", "what if we X" where X starts
with a choosing verb (use, go with, switch to, adopt, pick, choose, move to). Questions are not
decisions. Rationale: the rest of the sentence after "because (of)", "since", "due to", "given
that", "so that", "as <pronoun|the>", or the next sentence when it starts with "because", "the
reason", "that's because". Alternatives: "instead of / rather than / over / and not Y" and
"we considered A and B, but ...". Stakeholders: capitalised names before the verb ("Alice and
Bob agreed ...") and after "with" ("... with Carol", not "go with React"). Context: the
sentence before it, from the same message or (for a message's first sentence) the last sentence
of the message just before, unless that sentence is itself a decision. Told twice in one call,
a decision is returned once (by ``normalise_key(what)``), a decided one beating a proposal.

Action items (user messages; ``TODO:``/``Action item:``/checkbox lines also from the assistant)
----------------------------------------------------------------------------------------------
``TODO:`` / ``to-do:`` / ``action (item):`` / ``task:`` / ``next step:`` / ``follow-up:`` X,
Markdown checkboxes ``[ ] X`` (open) and ``[x] X`` (done); "remind me to X"; "don't (let me)
forget to X"; "remind me about X"; "I/we need to|have to|have got to|must X"; "I will|am going
to|plan to|intend to X" (with a due date or a concrete verb: send, call, email, fix, write,
...); "<Name(s)> will|is going to|needs to|has to|must X", "<Name> is responsible for / in
charge of / owns X"; any "should" form ("I should", "we should", "Bob should") and "we will|are
going to X" only with a due date. Owner: ``user`` for I/me, ``team`` for we,
the name(s) for named people; inside TODO lines "Bob to X", "Bob: X", "X (Bob)" or "@bob" name
the owner, else the owner is ``user`` for user messages and ``""`` for the assistant.
Dependencies: "after/once/when X(, ...)", "... after X is done", "depends on / blocked by /
waiting for X"; a dependency that matches another action of the same call uses that action's
``what``. The due-date phrase and dependency phrase are removed from ``what``, and "my/me"
in it become "the user's/the user". Told twice in one call, an action is returned once (by
``normalise_key(what)``), with a due date a later mention adds.

Completion: ``done: X``, ``[x] X``, "I('ve) finished|completed|done with|wrapped up X", "X is
done/finished/completed/sent/fixed/shipped". If the finished thing's content words (cut to
six letters, so "migration" meets "migrate") are all in an open action of the same call, or
overlap it by half, that action becomes ``done``; otherwise an explicit form
(``done:``, ``[x]``, "I finished/completed X") adds a ``done`` action, and "X is done" with
nothing to match is ignored.

Due dates (relative to ``today``; the first date phrase in the item wins)
-----------------------------------------------------------------------
ISO ``2025-03-07``; ``today``/``tonight``/``this morning|afternoon|evening`` = today;
``tomorrow``; ``the day after tomorrow``; a bare weekday or ``this``/``coming`` weekday = the
next such day on or after today (today counts: "by Friday" said on a Friday is today);
``next <weekday>`` = that weekday in the following Monday-to-Sunday week; ``(last <weekday>``
is ignored); ``this weekend`` = the Saturday on or after today, ``next weekend`` = the Saturday
of next week; ``next week`` = today + 7 days; ``next month`` = same day next month (clamped),
``next year`` = same day next year; ``end of (the) week`` = Friday on or after today, ``end of
(the) month/year`` = its last day; ``in/within N days|weeks|months`` (N a number or one..ten/a);
``March 3rd`` / ``on March 3`` / ``3 March`` / ``3rd of March`` / ``Mar 3, 2026`` (month names
or three-letter abbreviations) = that date this year, or next year if it is already past, unless
a year is given. Impossible dates (31 February) are ignored. Abbreviated weekdays are not read.

Open questions (user messages)
------------------------------
A user sentence ending in ``?`` is open when no assistant message follows it in the batch (the
next kept message is a user message or there is none; offline replies are skipped, so they do
not answer). Any user sentence saying "not sure", "still need to decide", "haven't decided",
"undecided", "open question", "TBD", "to be decided", "unclear whether/if", "don't know
whether/if/which" is open regardless. Not kept: questions of fewer than 3 words, recall and
small-talk questions ("what's my ...", "do you remember ...", "how are you"), and questions a
later decision of the batch settles (most of their content words appear in it). At most
``MAX_OPEN_QUESTIONS``, the most recent.

Topics
------
Words of the kept messages, lowercased, minus stopwords and chat filler, at least three
letters; user words count twice, a capitalised word in mid-sentence gets a bonus, and adjacent
word pairs seen at least twice become a phrase (taking their count from the single words). The
top ``MAX_TOPICS`` by score, ties by first appearance.

Summary
-------
Bullet lines ("- ..."), at most ``SUMMARY_MAX_WORDS`` words counting the bullets; each line at
most ``MAX_UNIT_WORDS`` words. New sentences are scored by the log-frequency of their content
words over the square root of their number, +3 when they produced a fact, decision, action or
open question, x1.5 for user sentences, x0.6 for assistant sentences; greetings, thanks and
other sentences under four words are skipped unless they produced something. They are rewritten
in the third person ("I" -> "the user", "we" -> "the team", "you" -> "the assistant" for user
messages; "I" -> "the assistant", "you" -> "the user" for assistant messages), questions as
'The user asked: "..."', checkboxes as "To do:"/"Done:"; a sentence whose content words match a
line already kept (Jaccard >= 0.8) is skipped; the best fill up to 60% of the budget (more if
the previous summary is short) and are kept in conversation order. The previous summary (split
into lines and sentences) keeps the rest of the budget: whole when it fits, otherwise its most
informative sentences (fact statements about the user, names, numbers, decision/deadline/
preference words; the first sentence gets a bonus, and among equals the more recent wins) are
kept in their order, and at least its first sentence always survives (truncated if need be).
Short previous sentences that state a subject a new fact now restates ("favourite colour") are
replaced by the new fact's text. With no new sentence and a previous summary within budget,
the previous summary is returned unchanged.

Limitations
-----------
English only: other languages pass through the summary but yield no facts, decisions or
actions. The third-person rewrite is a heuristic ("we" always becomes "the team", verbs are
conjugated by suffix rules). Patterns read single sentences: "it", "that" and other references
across sentences are not resolved, and nested or sarcastic statements are taken literally.
Subjects only match when the wording maps to the same key ("my home town" and "I'm from" do
not). Names are capitalised words, so lowercase names are missed and some capitalised nouns
("React") can look like people where a name is expected.
"""

from __future__ import annotations

import calendar
import datetime
import math
import re
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass, field

__all__ = [
    "CATEGORIES",
    "MAX_OPEN_QUESTIONS",
    "MAX_TOPICS",
    "SUMMARY_MAX_WORDS",
    "ExtractedAction",
    "ExtractedDecision",
    "ExtractedFact",
    "Extraction",
    "extract",
    "normalise_key",
    "parse_date",
]

CATEGORIES = ("preference", "personal", "project", "schedule", "technical", "other")
SUMMARY_MAX_WORDS = 300
MAX_TOPICS = 8
MAX_OPEN_QUESTIONS = 8
MAX_MESSAGE_CHARS = 8000
MAX_SENTENCES_PER_MESSAGE = 200
MAX_SENTENCE_CHARS = 600
MAX_UNIT_WORDS = 50
NEW_SHARE = 0.6  # the most of the summary budget new sentences may take
OFFLINE_PREFIX = "*offline reply"
KEY_MAX = 255


# -- public data ----------------------------------------------------------------------------


@dataclass
class ExtractedFact:
    category: str  # one of CATEGORIES
    subject: str  # what the fact is about; "" if unclear. Same subject + new text = supersedes.
    text: str  # third-person statement about the user
    importance: float  # 0..1
    message_index: int


@dataclass
class ExtractedDecision:
    what: str
    context: str = ""
    rationale: str = ""
    alternatives: list[str] = field(default_factory=list)
    stakeholders: list[str] = field(default_factory=list)
    status: str = "decided"  # "decided" or "proposed"
    message_index: int = 0


@dataclass
class ExtractedAction:
    what: str
    owner: str = ""
    due_date: datetime.date | None = None
    status: str = "open"  # "open" or "done"
    depends_on: list[str] = field(default_factory=list)
    message_index: int = 0


@dataclass
class Extraction:
    summary: str
    topics: list[str] = field(default_factory=list)
    decisions: list[ExtractedDecision] = field(default_factory=list)
    action_items: list[ExtractedAction] = field(default_factory=list)
    facts: list[ExtractedFact] = field(default_factory=list)
    open_questions: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        """JSON-serialisable dict (due dates as ISO strings or None)."""
        data = asdict(self)
        for action in data["action_items"]:
            due = action["due_date"]
            action["due_date"] = due.isoformat() if due else None
        return data


# -- small text helpers ---------------------------------------------------------------------

_I = re.IGNORECASE


def _wordset(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ARTICLES = frozenset({"a", "an", "the"})


def normalise_key(text: str) -> str:
    """Lowercase, no punctuation or articles, single spaces, at most 255 characters."""
    text = unicodedata.normalize("NFKC", text or "").lower()
    text = re.sub(r"['\u2019`]", "", text)
    text = re.sub(r"[\W_]+", " ", text)
    words = [w for w in text.split() if w not in _ARTICLES]
    return " ".join(words)[:KEY_MAX].rstrip()


def _squash(text: str) -> str:
    return " ".join(text.split())


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _strip_end(text: str) -> str:
    return text.strip().strip(" \t,;:.!-\u2013\u2014\"'()[]").strip()


def _short(text: str, limit: int) -> str:
    text = _squash(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0] if " " in text[: limit - 1] else text[: limit - 1]
    return cut.rstrip(" ,;:") + "\u2026"


def _sentence(text: str) -> str:
    """Capitalised, ending with one full stop unless it already ends a sentence."""
    text = _squash(text).rstrip(" ,;:")
    if not text:
        return ""
    if text[-1] not in ".!?\u2026":
        text += "."
    return _cap(text)


_CONTRACTIONS = {
    "i'm": "I am",
    "im": "I am",
    "i've": "I have",
    "i'd": "I would",
    "i'll": "I will",
    "we're": "we are",
    "we've": "we have",
    "we'll": "we will",
    "we'd": "we would",
    "you're": "you are",
    "you've": "you have",
    "you'll": "you will",
    "you'd": "you would",
    "they're": "they are",
    "they've": "they have",
    "they'll": "they will",
    "don't": "do not",
    "dont": "do not",
    "doesn't": "does not",
    "doesnt": "does not",
    "didn't": "did not",
    "didnt": "did not",
    "can't": "cannot",
    "won't": "will not",
    "isn't": "is not",
    "aren't": "are not",
    "wasn't": "was not",
    "weren't": "were not",
    "haven't": "have not",
    "havent": "have not",
    "hasn't": "has not",
    "hadn't": "had not",
    "shouldn't": "should not",
    "wouldn't": "would not",
    "couldn't": "could not",
    "mustn't": "must not",
    "it's": "it is",
    "that's": "that is",
    "what's": "what is",
    "where's": "where is",
    "who's": "who is",
    "there's": "there is",
    "gonna": "going to",
    "wanna": "want to",
    "gotta": "have to",
    "i": "I",
}
_CONTRACTION_RE = re.compile(
    r"(?<![\w'])("
    + "|".join(re.escape(k) for k in sorted(_CONTRACTIONS, key=len, reverse=True))
    + r")(?![\w'])",
    _I,
)


def _expand(text: str) -> str:
    """Straight quotes, expanded contractions, "i" -> "I"; everything else unchanged."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    text = text.replace("\u201d", '"')

    def repl(m: re.Match) -> str:
        word = m.group(1)
        out = _CONTRACTIONS[word.lower()]
        if word[0].isupper() and out[0].islower():
            out = _cap(out)
        return out

    return _CONTRACTION_RE.sub(repl, text)


_WORD_RE = re.compile(r"[^\W\d_][\w'-]*")


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text)


_STOPWORDS = _wordset(
    """
a about above actually after again against ago all almost along already also although always am
among an and another any anybody anyone anything anyway anyways are around as ask asked at away
back be became because become been before being below best better between both but by came can
cannot could did do does doing done down during each either else enough etc even ever every
everyone everything exactly few find first for from fine get gets getting give given go goes
going gone good got great had has have having he her here hers herself him himself his how
however i if in indeed instead into is isn it its itself just keep kind know known last later
least less let lets like likely little look looks lot lots made make makes many may maybe me
might mine more most much must my myself need needs never new next no nobody none nor not
nothing now of off often oh ok okay on once one only or other others otherwise our ours
ourselves out over own perhaps please pretty probably put quite rather really right said same
say says see seem seems set shall she should show since so some somebody someone something
sometimes soon still such sure take tell than thank thanks that the their theirs them
themselves then there these they thing things think this those though thought through thus to
today together tomorrow too took toward try trying two under until up upon us use used using
very want wanted wants was way we well went were what whatever when where whether which while
who whole whom whose why will with within without would yeah yes yet you your yours yourself
yourselves hello hi hey cool nice sounds sound guess mean means able also lol btw fyi gonna
wanna got let's that's it's i'm i've i'd i'll don't can't won't didn't doesn't isn't you're
we're they're there's what's here's would've could've should've remember tell told answer
question questions reply help call called name user assistant via per day days week weeks
time times year years month months monday tuesday wednesday thursday friday saturday sunday
morning evening night tonight afternoon decided decide decision agreed agree todo action item
items remind reminder reason finished finish done need needed task tasks deadline guess okay
sorry wait thing stuff anything something really pretty write update read send call fix try
work works help helps explain show start keep getting makes talk bit cannot example examples
"""
)

_NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "no": 0,
    "zero": 0,
}

# Capitalised words that are not people (sentence starters, pronouns, days, months, ...).
_NOT_NAMES = _wordset(
    """
I We You They He She It The A An This That These Those Then So And But Or If When Also Finally
Everyone Everybody Nobody Someone Team Today Tomorrow Yesterday Monday Tuesday Wednesday Thursday
Friday Saturday Sunday January February March April May June July August September October
November December Please Maybe Perhaps Actually Now Ok Okay Yes No Hi Hey Hello Thanks After
Before Once Next Last First Our My Your Their His Her Its Let Lets Todo TODO Action Decision
Note Remember Because Since As Both All Who What Where Why How Which There Here Well Oh Just
Still Then Later Soon Sure Great Good Fine Also Again Someone Anyone Everyone Management
Engineering Product Design Marketing Sales Legal Support
"""
)


def _is_name(word: str) -> bool:
    return bool(re.fullmatch(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?", word)) and word not in _NOT_NAMES


# -- dates ----------------------------------------------------------------------------------

_WEEKDAYS = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
}
_MONTHS = {
    "january": 1,
    "jan": 1,
    "february": 2,
    "feb": 2,
    "march": 3,
    "mar": 3,
    "april": 4,
    "apr": 4,
    "may": 5,
    "june": 6,
    "jun": 6,
    "july": 7,
    "jul": 7,
    "august": 8,
    "aug": 8,
    "september": 9,
    "sept": 9,
    "sep": 9,
    "october": 10,
    "oct": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}
_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))
_NUM_ALT = r"\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten"
_DATE_PATTERNS = [
    ("iso", re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b")),
    (
        "dmy",
        re.compile(
            rf"\b(?:the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+(?P<mon>{_MONTH_ALT})\b\.?"
            rf"(?:,?\s+(?P<y>\d{{4}})\b)?",
            _I,
        ),
    ),
    (
        "mdy",
        re.compile(
            rf"\b(?P<mon>{_MONTH_ALT})\.?\s+(?:the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b"
            rf"(?:,?\s+(?P<y>\d{{4}})\b)?",
            _I,
        ),
    ),
    (
        "rel",
        re.compile(
            r"\b(?:(?:the\s+)?day\s+after\s+tomorrow|tomorrow|today|tonight|"
            r"this\s+(?:morning|afternoon|evening))\b",
            _I,
        ),
    ),
    (
        "wd",
        re.compile(
            r"\b(?:(?P<mod>next|this|coming)\s+)?"
            r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
            _I,
        ),
    ),
    ("weekend", re.compile(r"\b(?:(?P<mod>this|next)\s+|the\s+)weekend\b", _I)),
    (
        "period",
        re.compile(
            r"\b(?:next\s+(?P<unit>week|month|year)|(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?"
            rf"(?P<eo>week|month|year)|(?:in|within)\s+(?P<n>{_NUM_ALT})\s+"
            r"(?P<u>days?|weeks?|months?))\b",
            _I,
        ),
    ),
]


def _add_months(day: datetime.date, months: int) -> datetime.date:
    month0 = day.month - 1 + months
    year, month = day.year + month0 // 12, month0 % 12 + 1
    return datetime.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _resolve(kind: str, m: re.Match, today: datetime.date) -> datetime.date | None:
    text = m.group(0).lower()
    if kind == "iso":
        try:
            return datetime.date(int(m["y"]), int(m["m"]), int(m["d"]))
        except ValueError:
            return None
    if kind in ("dmy", "mdy"):
        month, day = _MONTHS[m["mon"].lower()], int(m["d"])
        year = int(m["y"]) if m["y"] else today.year
        try:
            when = datetime.date(year, month, day)
        except ValueError:
            return None
        if not m["y"] and when < today:
            try:
                when = datetime.date(year + 1, month, day)
            except ValueError:  # 29 February
                return None
        return when
    if kind == "rel":
        if "after" in text:
            return today + datetime.timedelta(days=2)
        if "tomorrow" in text:
            return today + datetime.timedelta(days=1)
        return today
    if kind == "wd":
        before = m.string[max(0, m.start() - 12) : m.start()].lower()
        if re.search(r"\b(?:last|past|every|on\s+previous)\s*$", before):
            return None
        weekday = _WEEKDAYS[m["wd"].lower()]
        if (m["mod"] or "").lower() == "next":
            monday = today + datetime.timedelta(days=7 - today.weekday())
            return monday + datetime.timedelta(days=weekday)
        return today + datetime.timedelta(days=(weekday - today.weekday()) % 7)
    if kind == "weekend":
        saturday = today + datetime.timedelta(days=(5 - today.weekday()) % 7)
        if (m["mod"] or "").lower() == "next":
            monday = today + datetime.timedelta(days=7 - today.weekday())
            return monday + datetime.timedelta(days=5)
        return saturday
    # period
    if m["unit"]:
        unit = m["unit"].lower()
        if unit == "week":
            return today + datetime.timedelta(days=7)
        return _add_months(today, 1 if unit == "month" else 12)
    if m["eo"]:
        unit = m["eo"].lower()
        if unit == "week":
            return today + datetime.timedelta(days=(4 - today.weekday()) % 7)
        if unit == "month":
            return today.replace(day=calendar.monthrange(today.year, today.month)[1])
        return datetime.date(today.year, 12, 31)
    raw = m["n"].lower()
    n = int(raw) if raw.isdigit() else _NUMBER_WORDS.get(raw, 1)
    unit = m["u"].lower()
    if unit.startswith("day"):
        return today + datetime.timedelta(days=n)
    if unit.startswith("week"):
        return today + datetime.timedelta(days=7 * n)
    return _add_months(today, n)


def _find_date(text: str, today: datetime.date) -> tuple[datetime.date, int, int] | None:
    """The first date phrase in ``text``: (date, start, end), or None."""
    found: list[tuple[int, int, datetime.date]] = []
    for kind, pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            when = _resolve(kind, m, today)
            if when is not None:
                found.append((m.start(), -m.end(), when))
                break
    if not found:
        return None
    start, neg_end, when = min(found)
    return when, start, -neg_end


def parse_date(text: str, *, today: datetime.date) -> datetime.date | None:
    """The first date phrase in ``text`` resolved against ``today`` (see the module docs)."""
    hit = _find_date(text or "", today)
    return hit[0] if hit else None


_DATE_PREP = re.compile(
    r"(?:,?\s*\b(?:by|before|on|until|till|due|due\s+on|due\s+by|no\s+later\s+than|for|at)\s*)?$",
    _I,
)


def _remove_date(text: str, today: datetime.date) -> tuple[str, datetime.date | None]:
    """``text`` without its first date phrase (and the preposition before it), and the date."""
    hit = _find_date(text, today)
    if not hit:
        return text, None
    when, start, end = hit
    head = _DATE_PREP.sub("", text[:start])
    tail = re.sub(r"^\s*(?:at\s+the\s+latest|latest)\b", "", text[end:], flags=_I)
    return _squash(f"{head} {tail}").strip(" ,;"), when


# -- message preparation --------------------------------------------------------------------


@dataclass
class _Sent:
    index: int  # message index in the caller's list
    role: str
    raw: str  # original wording, whitespace collapsed
    text: str  # contractions expanded
    order: int  # global position
    position: int  # position within its message
    tags: set[str] = field(default_factory=set)


_FENCE_RE = re.compile(r"(```|~~~)[\s\S]*?(?:\1|\Z)")
_SPLIT_RE = re.compile(r"(?<=[.!?\u2026])[\"')\]]*\s+|\n+")
_BULLET_RE = re.compile(r"^\s*(?:[-*+\u2022]|\d{1,3}[.)]|#{1,6})\s+")


def _message_parts(message: object) -> tuple[str, str]:
    if isinstance(message, dict):
        role, content = message.get("role", ""), message.get("content", "")
    else:
        role, content = getattr(message, "role", ""), getattr(message, "content", "")
    return str(role or "").lower(), content if isinstance(content, str) else str(content or "")


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
        piece = _BULLET_RE.sub("", piece or "")
        piece = re.sub(r"^\s*(?:[-*+]\s+)?", "", piece)
        piece = _squash(piece.replace("**", "").replace("__", ""))
        if not piece or not re.search(r"[^\W\d_]", piece):
            continue
        out.append(piece[:MAX_SENTENCE_CHARS])
        if len(out) >= MAX_SENTENCES_PER_MESSAGE:
            break
    return out


def _prepare(messages: list) -> tuple[list[_Sent], list[tuple[int, str]]]:
    """Sentences of the kept messages, and (index, role) of every kept message."""
    sents: list[_Sent] = []
    kept: list[tuple[int, str]] = []
    for index, message in enumerate(messages or []):
        role, content = _message_parts(message)
        if role not in ("user", "assistant") or not content.strip():
            continue
        if content.lstrip().lower().startswith(OFFLINE_PREFIX):
            continue
        kept.append((index, role))
        for position, raw in enumerate(_split_sentences(_clean_content(content))):
            sents.append(_Sent(index, role, raw, _expand(raw), len(sents), position))
    return sents, kept


_CLAUSE_SPLIT = re.compile(
    r"\s*;\s*|,?\s+(?:and|but|so|also|plus)\s+(?=(?:I|my|we|our|please|remind|call\s+me)\b)", _I
)
_FILLER = re.compile(
    r"^(?:(?:actually|now|oh|ah|well|ok|okay|so|also|and|but|btw|by\s+the\s+way|fyi|"
    r"just\s+so\s+you\s+know|correction|sorry|no|nope|wait|update|hey|hi|hello|yes|yeah|yep|"
    r"right|anyway|anyways|plus|as\s+I\s+said|as\s+mentioned|to\s+clarify|just\s+to\s+clarify|"
    r"in\s+fact|heads\s+up|quick\s+note|one\s+more\s+thing|oh\s+and|and\s+also|"
    r"good\s+(?:morning|afternoon|evening))\b[\s,:!.\-\u2013\u2014]*)+",
    _I,
)


def _clauses(text: str) -> list[str]:
    out = []
    for part in _CLAUSE_SPLIT.split(text):
        part = _FILLER.sub("", part.strip()).strip()
        if part:
            out.append(part)
    return out


# -- third person ---------------------------------------------------------------------------

_NO_CONJ = _wordset(
    """will would can could should shall may might must did had was cannot used to and or
the a an not that this it so too both all only also never ever just always then there here
too am"""
)
_IRREGULAR = {"am": "is", "are": "is", "have": "has", "do": "does", "were": "was", "go": "goes"}
_ADVERBS = (
    r"really|also|just|still|usually|always|never|often|actually|already|definitely|absolutely|"
    r"sometimes|now|currently|only|mostly|generally|both|all|totally|honestly|no\s+longer"
)
_SUBJECT_RE = re.compile(
    rf"\b(?P<p>I|we|you)\b(?P<adv>(?:\s+(?:{_ADVERBS}))*)(?:(?P<sp>\s+)(?P<v>[a-z]+)\b)?", _I
)
_SUBJECT_BEFORE = re.compile(
    r"(?:^|[.,;:!?(\-\u2013\u2014\"]|\b(?:and|but|or|if|that|when|because|since|as|so|then|"
    r"where|which|while|until|unless|after|before|once|though|although))\s*$",
    _I,
)
_OBJECT_RE = re.compile(r"\b(me|my|mine|myself|us|our|ours|ourselves|your|yours|yourself)\b", _I)


def _conjugate(verb: str) -> str:
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    past = low.endswith("ed") and not low.endswith("eed") and low not in ("embed", "shred")
    if low in _NO_CONJ or past or len(low) < 2:
        return verb
    if re.search(r"(?:s|sh|ch|x|z|o)$", low):
        return verb + "es"
    if re.search(r"[^aeiou]y$", low):
        return verb[:-1] + "ies"
    return verb + "s"


def _third_person(text: str, role: str = "user") -> str:
    """Rewrite first/second person into third person from the point of view of ``role``."""
    me, you = ("the user", "the assistant") if role == "user" else ("the assistant", "the user")
    we = "the team" if role == "user" else "the user and the assistant"
    plural_we = role != "user"

    def subject(m: re.Match) -> str:
        pron = m.group("p").lower()
        if pron == "we" and m.group("p") == "WE":
            return m.group(0)
        noun = {"i": me, "we": we, "you": you}[pron]
        verb = m.group("v")
        is_subject = pron == "i" or bool(_SUBJECT_BEFORE.search(m.string[: m.start()]))
        if pron == "you" and not is_subject:
            return noun + (m.group("adv") or "") + ((m.group("sp") or "") + verb if verb else "")
        if verb and is_subject and not (pron == "we" and plural_we):
            verb = _conjugate(verb)
        return noun + (m.group("adv") or "") + ((m.group("sp") or "") + verb if verb else "")

    def obj(m: re.Match) -> str:
        word = m.group(1)
        low = word.lower()
        if low == "us" and word == "US":
            return word
        if low in ("me", "myself"):
            return me
        if low in ("my", "mine"):
            return me + "'s"
        if low in ("us", "ourselves"):
            return we
        if low in ("our", "ours"):
            return we + "'s" if not plural_we else "their"
        if low == "yourself":
            return you
        return you + "'s"

    text = _SUBJECT_RE.sub(subject, text)
    return _OBJECT_RE.sub(obj, text)


# -- facts ----------------------------------------------------------------------------------

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


def _subject(text: str) -> str:
    text = _expand(text).lower().replace("\u2019", "'")
    text = re.sub(r"[^\w\s'-]+", " ", text)
    words = []
    for word in text.split():
        if word in _ARTICLES:
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


def _category(subject: str, text: str = "") -> str:
    words = set(re.findall(r"[\w'-]+", subject.lower()))
    words |= {w[:-2] for w in words if w.endswith("'s")}
    words |= {w[:-1] for w in words if w.endswith("s")}
    for cat, vocab in _CATEGORY_SETS:
        if words & vocab:
            return cat
    if text:
        return _category(text)
    return "other"


_STYLE_SUBJECTS = [
    ("emojis", re.compile(r"\b(?:emojis?|emoticons?|smileys?)\b", _I)),
    (
        "answer length",
        re.compile(
            r"\b(?:short|shorter|brief|briefer|concise|succinct|terse|long|longer|lengthy|"
            r"detailed|in-depth|thorough|verbose|one-liners?|to the point)\b",
            _I,
        ),
    ),
    (
        "answer format",
        re.compile(
            r"\b(?:bullet|bullets|bullet points|bulleted|lists?|numbered|paragraphs?|prose|"
            r"tables?|markdown|plain text|headings?|headers?)\b",
            _I,
        ),
    ),
    (
        "tone",
        re.compile(
            r"\b(?:formal|informal|casual|friendly|professional|polite|blunt|direct|humou?r|"
            r"jokes?|jargon|simple language|plain english)\b",
            _I,
        ),
    ),
    (
        "answer language",
        re.compile(
            r"\b(?:english|german|french|spanish|italian|portuguese|dutch|polish|russian|"
            r"chinese|japanese|korean|arabic|hindi|turkish|swedish|norwegian|danish|finnish|"
            r"greek|hebrew|ukrainian|czech)\b",
            _I,
        ),
    ),
    ("code examples", re.compile(r"\b(?:code\s+(?:examples|samples|snippets)|examples)\b", _I)),
    ("units", re.compile(r"\b(?:metric|imperial|celsius|fahrenheit)\b", _I)),
]
_STYLE_CONTEXT = re.compile(
    r"\b(?:answers?|responses?|replies|reply|explanations?|messages?|output|summaries|"
    r"bullet|bullets|bulleted|lists?|tables?|paragraphs?|prose|markdown|emojis?|emoticons?|"
    r"tone|formal|informal|casual|jargon|code\s+examples|examples|metric|imperial|celsius|"
    r"fahrenheit|to the point)\b",
    _I,
)


def _style_subject(text: str, *, require_context: bool = True) -> str:
    if require_context and not _STYLE_CONTEXT.search(text):
        return ""
    for subject, pattern in _STYLE_SUBJECTS:
        if pattern.search(text):
            return subject
    return ""


_VALUE_CUT = re.compile(
    r"\s+(?:because|since|but|although|though|so\s+that|which\s+means)\b.*$|\s*,\s*(?:so|but)\b.*$"
    r"|\s*\((?!\d{4}-).*$",
    _I,
)
_VALUE_LEAD = re.compile(r"^(?:(?:now|actually|still|really|currently|officially)\s+)+", _I)
_VALUE_TAIL = re.compile(
    r"\s+(?:now|actually|these\s+days|nowadays|by\s+the\s+way|btw|though|too|as\s+well|"
    r"not\s+\w+\s+anymore|anymore|any\s+more|recently|lately|a\s+while\s+ago|"
    r"(?:last|this)\s+(?:year|month|week|summer|winter|spring|autumn)|"
    r"(?:\w+|\d+)\s+(?:years?|months?|weeks?)\s+ago)$",
    _I,
)


def _value(text: str, max_words: int = 20) -> str:
    text = _VALUE_CUT.sub("", text.strip())
    text = _strip_end(text)
    for _ in range(2):
        text = _VALUE_LEAD.sub("", text)
        text = _strip_end(_VALUE_TAIL.sub("", text))
    if not text or "?" in text or len(text.split()) > max_words:
        return ""
    if re.match(r"^(?:not\s+sure|unknown|a\s+secret|none\s+of\s+your)\b", text, _I):
        return ""
    return text


_QUESTION_START = re.compile(
    r"^(?:(?:what|where|who|whom|whose|why|how|which)\b|(?:do|does|did|is|are|am|was|were|can|"
    r"could|would|should|will|shall|have|has|may|might)\s+(?:you|I|we|they|he|she|it|my|our|"
    r"your|the|this|that|there)\b)",
    _I,
)
_REMEMBER = re.compile(
    r"^(?:(?:please|can\s+you|could\s+you|would\s+you|will\s+you|you\s+should|I\s+want\s+you\s+to"
    r"|make\s+sure\s+to|try\s+to|just)\s+)*(?:remember|note|keep\s+in\s+mind|do\s+not\s+forget|"
    r"make\s+a\s+note|take\s+note|bear\s+in\s+mind|for\s+the\s+record|for\s+future\s+reference|"
    r"for\s+your\s+information|note\s+to\s+self|save\s+this)\b(?!\s+to\b)(?:\s+(?:that|this))?"
    r"\s*[:,\-\u2013]?\s*",
    _I,
)
_HYPOTHETICAL = re.compile(r"^(?:if|when|unless|whether|in\s+case|suppose|imagine)\b", _I)

_DENY_ATTRS = _wordset(
    """question point guess problem issue concern understanding idea thought thoughts thinking
answer request suggestion bad apologies apology pleasure turn fault mistake code output error
plan goal hope worry fear feeling guess take view impression bet advice response reply message
first second last"""
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

_HAVE_DENY = re.compile(
    r"^(?:to|been|got\s+to|a\s+(?:quick\s+)?question|questions|an?\s+idea|no\s+idea|a\s+feeling|"
    r"a\s+suggestion|a\s+doubt|a\s+look|a\s+go|fun|time|no|nothing|never|a\s+problem|"
    r"an?\s+issue|a\s+request|some\s+questions|already|just|not|finished|done|decided|"
    r"completed|sent|made|seen|heard|read|tried|used|the\s+same)\b",
    _I,
)

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
_LIKE_RE = re.compile(
    r"^I\s+(?P<adv>(?:(?:really|also|absolutely|just|do|totally|honestly|still|now|actually|"
    r"generally|usually|much|would|kind\s+of|sort\s+of|definitely|very\s+much|personally)\s+)*)"
    r"(?P<verb>"
    + "|".join(
        re.escape(v).replace(r"\ ", r"\s+") for v in sorted(_LIKE_VERBS, key=len, reverse=True)
    )
    + r")\s+(?P<x>.+)$",
    _I,
)
_PREFER_SPLIT = re.compile(r"\s+(?:over|to|rather\s+than|instead\s+of|more\s+than)\s+", _I)

_PROJECT_NOUNS = (
    "project|app|application|startup|company|product|team|repo|repository|service|tool|website|"
    "site|game|library|band|business|book|podcast|channel|blog|newsletter|shop|store|bot|plugin"
)
_SCHEDULE_NOUNS = (
    r"meeting|appointment|call|interview|exam|flight|launch|release|demo|presentation|standup|"
    r"stand-up|review|wedding|party|trip|holiday|vacation|conference|workshop|sprint|kickoff|"
    r"kick-off|retro|retrospective|deadline|surgery|check-up|checkup|class|lesson|date|"
    r"go-live|cutover|offsite"
)


@dataclass
class _FactHit:
    category: str
    subject: str
    text: str
    importance: float = 0.6


_STOP = _FactHit("", "", "")  # a rule recognised the clause but rejected it: look no further

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


_PROJECT_NAME_RES = (
    re.compile(
        rf"^(?:(?:our|my|the|this)\s+)?(?P<noun>{_PROJECT_NOUNS})\s+(?:is\s+)?(?:now\s+)?"
        r"(?:called|named)\s+(?P<x>.+)$",
        _I,
    ),
    re.compile(
        r"^(?:I|we)\s+(?:am|are)\s+(?:building|working\s+on|making|writing|developing|"
        r"creating|running|launching)\s+(?:a|an|the|my|our)\s+(?:\w+\s+)?"
        rf"(?P<noun>{_PROJECT_NOUNS})\s+(?:called|named)\s+(?P<x>.+)$",
        _I,
    ),
)


def _project_name_fact(c: str, today: datetime.date) -> _FactHit | None:
    for pattern in _PROJECT_NAME_RES:
        m = pattern.match(c)
        if m and (x := _value(m["x"], 6)):
            noun = m["noun"].lower()
            category = "personal" if noun in ("band", "book") else "project"
            return _FactHit(category, f"{noun} name", f"The user's {noun} is called {x}.", 0.7)
    return None


_DEADLINE_RE = re.compile(
    r"^(?:the|our|my)\s+(?:(?P<what>[\w'-]+(?:\s+[\w'-]+){0,3}?)\s+)?deadline"
    r"(?:\s+for\s+(?P<for>.+?))?\s+(?:is|was|will\s+be|has\s+been\s+moved\s+to|has\s+moved\s+to|"
    r"moved\s+to|was\s+moved\s+to|changed\s+to|got\s+moved\s+to|is\s+now)\s+(?P<x>.+)$",
    _I,
)
_DUE_RE = re.compile(
    r"^(?:the|our|my)\s+(?P<thing>[\w'-]+(?:\s+[\w'-]+){0,3}?)\s+is\s+due\s+(?P<x>.+)$", _I
)
_EVENT_RE = re.compile(
    rf"^(?P<det>the|our|my)\s+(?P<thing>(?:[\w'-]+\s+){{0,3}}?(?:{_SCHEDULE_NOUNS}))\s+"
    r"(?:is|will\s+be|has\s+been\s+moved|was\s+moved|got\s+moved|moved|is\s+now)\s+"
    r"(?P<x>(?:to|on|at|in|for|scheduled\s+for|planned\s+for)\b.+)$",
    _I,
)


def _schedule_fact(c: str, today: datetime.date) -> _FactHit | None:
    if (m := _DEADLINE_RE.match(c)) and (x := _value(m["x"], 12)):
        if m["for"]:
            subject = "deadline for " + _subject(m["for"])
        elif m["what"]:
            subject = _subject(m["what"]) + " deadline"
        else:
            subject = "project deadline"
        label = f"deadline for {_strip_end(m['for'])}" if m["for"] else subject
        text = _sentence(f"The {label} is {_with_date(x, today)}")
        return _FactHit("schedule", subject, text, 0.7)
    if (m := _DUE_RE.match(c)) and (x := _value(m["x"], 12)):
        thing = _subject(m["thing"])
        text = _sentence(f"The {thing} is due {_with_date(x, today)}")
        return _FactHit("schedule", f"{thing} due date", text, 0.6)
    if (m := _EVENT_RE.match(c)) and (x := _value(m["x"], 14)):
        dated = _find_date(x, today) is not None
        if dated or re.search(r"\d", x):
            thing = _subject(m["thing"])
            x = re.sub(r"^to\s+", "on ", x) if dated else x
            who = "The user's" if m["det"].lower() == "my" else "The"
            text = _sentence(f"{who} {thing} is {_with_date(x, today)}")
            return _FactHit("schedule", thing, text, 0.6)
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


def _preference_fact(c: str, today: datetime.date) -> _FactHit | None:
    if m := _LIKE_RE.match(c):
        return _like_fact(m) or _STOP
    return _style_fact(c)


_I_AM_RE = re.compile(r"^I\s+am\s+(?:(?:now|actually|currently|still)\s+)?(?P<x>.+)$", _I)


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


def _have_rule(c: str, today: datetime.date) -> _FactHit | None:
    m = _HAVE_RE.match(c)
    if not m or _HAVE_DENY.match(m["x"]):
        return None
    return _have_fact(m["x"], today)


def _fact_from_clause(clause: str, today: datetime.date) -> _FactHit | None:
    """The first fact rule that recognises ``clause`` (first person, fillers removed)."""
    c = re.sub(r"^(?:and|but|so|also)\s+", "", clause.strip(), flags=_I)
    for rule in _FACT_RULES:
        hit = rule(c, today)
        if hit is _STOP:
            return None
        if hit is not None:
            return hit
    return None


def _with_date(text: str, today: datetime.date) -> str:
    hit = _find_date(text, today)
    if not hit or re.search(r"\d{4}-\d{2}-\d{2}", text):
        return text
    return f"{text} ({hit[0].isoformat()})"


def _like_fact(m: re.Match) -> _FactHit | None:
    verb = re.sub(r"\s+", " ", m["verb"].lower())
    adv = (m["adv"] or "").lower()
    x = _value(m["x"], 14)
    if not x:
        return None
    if "would" in adv and re.match(r"^(?:to|you|it\s+if)\b", x, _I):
        return None  # a wish or a request, not a standing preference
    third = _LIKE_VERBS[verb]
    x3 = _third_person(x)
    parts = _PREFER_SPLIT.split(x, maxsplit=1) if verb == "prefer" or "fan" in verb else [x]
    style = _style_subject(x)
    if len(parts) == 2 and parts[0] and parts[1] and not style:
        a, b = sorted((_subject(parts[0]), _subject(parts[1])))
        subject = f"choice between {a} and {b}"
    else:
        subject = style or ("opinion of " + " ".join(_subject(x).split()[:6]))
    return _FactHit("preference", subject, _sentence(f"The user {third} {x3}"), 0.6)


_STYLE_PATTERNS = [
    (
        "keep",
        re.compile(
            r"^(?:please\s+)?(?:(?:always|try\s+to|just)\s+)*(?:keep|make)\s+(?:your\s+|the\s+|all\s+)?"
            r"(?:answers?|responses?|replies|reply|explanations?|messages?|output|summaries|it|"
            r"things)\s+(?P<x>.+)$",
            _I,
        ),
    ),
    (
        "in",
        re.compile(
            r"^(?:please\s+)?(?:(?:always|only|just)\s+)*(?:answer|reply|respond|write|talk|speak|"
            r"explain\s+things|format\s+(?:your\s+)?(?:answers|responses|replies))\s+"
            r"(?:to\s+me\s+)?(?P<prep>in|with|using|as|like)\s+(?P<x>.+)$",
            _I,
        ),
    ),
    (
        "want",
        re.compile(
            r"^I\s+(?:would\s+|really\s+)?(?:like|want|prefer|need)\s+(?:your\s+|the\s+|all\s+)?"
            r"(?P<x>(?:answers?|responses?|replies|explanations?|summaries)\b.+)$",
            _I,
        ),
    ),
    (
        "avoid",
        re.compile(
            r"^(?P<lead>please\s+)?(?P<neg>do\s+not|never|stop|avoid|no\s+more)\s+"
            r"(?P<use>using\s+|use\s+|including\s+|include\s+|adding\s+|add\s+|giving\s+me\s+|"
            r"give\s+me\s+)?(?P<x>.+)$",
            _I,
        ),
    ),
    (
        "use",
        re.compile(
            r"^(?P<lead>please\s+|always\s+|please\s+always\s+)?(?:use|include|add|give\s+me)\s+"
            r"(?P<x>.+)$",
            _I,
        ),
    ),
]
_AVOID_DENY = re.compile(
    r"^(?:forget|worry|mind|know|understand|get\s+me\s+wrong|hesitate|remember|think|care|"
    r"want|need|have|like|be\s+(?:sorry|afraid))\b",
    _I,
)


def _style_fact(c: str) -> _FactHit | None:
    for kind, pattern in _STYLE_PATTERNS:
        m = pattern.match(c)
        if not m:
            continue
        x = _value(m["x"], 12)
        if not x:
            return None
        if kind == "keep":
            subject = _style_subject(x, require_context=False) or "answer style"
            return _FactHit(
                "preference", subject, _sentence(f"The user wants answers to be {x}"), 0.7
            )
        if kind == "in":
            subject = _style_subject(x, require_context=False) or "answer format"
            prep = m["prep"].lower()
            return _FactHit(
                "preference", subject, _sentence(f"The user wants answers {prep} {x}"), 0.7
            )
        if kind == "want":
            subject = _style_subject(x, require_context=False) or "answer style"
            return _FactHit(
                "preference", subject, _sentence(f"The user wants {_third_person(x)}"), 0.7
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
            x3 = _third_person(x)
            if neg in ("stop", "avoid"):
                text = f"The user wants the assistant to {neg}{' using' if use else ''} {x3}"
            elif neg == "no more":
                text = f"The user wants no more {x3}"
            else:
                text = f"The user does not want the assistant to{use} {x3}"
            subject = style or ("use of " + _subject(x) if use else "")
            return _FactHit("preference", subject, _sentence(text), 0.7)
        # use
        style = _style_subject(x, require_context=False)
        if not style and not (m["lead"] and len(x.split()) <= 6):
            return None
        if not style and not _STYLE_CONTEXT.search(x):
            return None
        return _FactHit(
            "preference",
            style or "use of " + _subject(x),
            _sentence(f"The user wants the assistant to use {_third_person(x)}"),
            0.7,
        )
    return None


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


def _possessive_fact(c: str, today: datetime.date) -> _FactHit | None:
    m = re.match(
        r"^(?P<det>my|our)\s+(?P<attr>[\w'-]+(?:\s+[\w'-]+){0,4}?)\s+"
        r"(?P<verb>is|are|was|were|will\s+be|has\s+become|has\s+changed\s+to|changed\s+to|=)\s+"
        r"(?P<x>.+)$",
        c,
        _I,
    )
    if not m:
        m = re.match(
            r"^(?P<det>my|our)\s+(?P<attr>[\w-]+(?:\s+[\w-]+)?)'s\s+(?P<verb>)(?P<x>(?!name\b).+)$",
            c,
            _I,
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
    named = re.match(r"^(?:now\s+|actually\s+)?(?:called|named)\s+(?P<n>.+)$", raw, _I)
    if named:
        x = _value(named["n"], 6)
        if not x:
            return None
        subject = _subject(attr)
        label = attr.lower()
        if re.fullmatch(_PROJECT_NOUNS, subject):
            return _FactHit("project", f"{subject} name", f"The user's {label} is called {x}.", 0.7)
        return _FactHit(
            _category(subject), f"{subject}'s name", f"The user's {label}'s name is {x}.", 0.7
        )
    x = _value(raw, 20)
    if not x or re.match(r"^(?:that|to|not\s+sure|unclear|a\s+secret|the\s+following)\b", x, _I):
        return None
    subject = _subject(attr)
    if not subject:
        return None
    category = _category(subject)
    if category == "schedule" or subject == "birthday":
        x = _with_date(x, today)
    importance = 0.7 if category in ("personal", "preference") else 0.6
    if subject in ("name", "birthday", "project deadline", "deadline"):
        importance = 0.8
    x3 = _third_person(x)
    if x.split()[0] in ("The", "A", "An"):
        x3 = x3[:1].lower() + x3[1:]
    return _FactHit(
        category, subject, _sentence(f"The user's {attr.lower()} {verb} {x3}"), importance
    )


_FACT_RULES = (
    _name_fact,
    _project_name_fact,
    _schedule_fact,
    _life_fact,
    _preference_fact,
    _i_am_rule,
    _speak_use_fact,
    _have_rule,
    _possessive_fact,
)


def _extract_facts(sents: list[_Sent], today: datetime.date) -> list[ExtractedFact]:
    facts: list[ExtractedFact] = []
    for s in sents:
        if s.role != "user":
            continue
        for clause in _clauses(s.text):
            remembered = False
            m = _REMEMBER.match(clause)
            if m and m.end() < len(clause):
                clause, remembered = clause[m.end() :], True
                clause = _FILLER.sub("", clause)
            elif clause.rstrip().endswith("?") or _QUESTION_START.match(clause):
                continue
            if _HYPOTHETICAL.match(clause) or re.search(r"\bnot\s+sure\b", clause, _I):
                continue
            clause = clause.rstrip("?").strip()
            hit = _fact_from_clause(clause, today)
            if hit is None and remembered:
                body = _strip_end(clause)
                if len(body.split()) >= 2 and len(body) <= 240:
                    text = _sentence(_third_person(body))
                    hit = _FactHit(_category(body), "", text, 0.55)
            if hit is None or len(hit.text) > 300:
                continue
            importance = hit.importance + (0.2 if remembered else 0.0)
            if re.match(r"^(?:actually|now|correction|update|no)\b", s.text, _I):
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


# -- decisions ------------------------------------------------------------------------------

_NAMES = r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?(?:(?:\s*,\s*|\s+and\s+|\s*&\s*|,\s+and\s+)[A-Z][a-z]+)*"
_DECISION_PATTERNS = [
    (
        "label",
        re.compile(
            r"^(?i:(?:final\s+|key\s+)?decision|decided|agreed|resolution|conclusion)\s*"
            r"[:\-\u2013\u2014]\s*(?P<what>.+)$"
        ),
    ),
    (
        "verb",
        re.compile(
            rf"(?:(?:^|\b)(?P<who>(?i:we|I|the\s+team|everyone|everybody|they)|{_NAMES})\s+|"
            r"(?i:\b(?:but|and|then|so)\s+))"
            r"(?i:(?:have\s+|has\s+|had\s+|all\s+|finally\s+|just\s+|both\s+|now\s+|eventually\s+|"
            r"unanimously\s+|officially\s+|already\s+)*)"
            r"(?P<verb>(?i:decided|agreed|chose|have\s+chosen|settled|opted|committed|went))\b"
            r"(?i:\s+(?P<prep>on|upon|to|that|for|with))?\s+(?P<what>.+)$"
        ),
    ),
    (
        "passive",
        re.compile(
            r"(?i:\bit\s+(?:was|has\s+been|is)\s+(?:decided|agreed)(?:\s+that)?|"
            r"\bthe\s+decision\s+(?:is|was)(?:\s+to|\s+that)?)\s+(?P<what>.+)$"
        ),
    ),
    (
        "lets",
        re.compile(
            r"(?i:\b(?:let's|lets|let\s+us)\s+(?:just\s+|definitely\s+)?"
            r"(?P<verb>go\s+with|use|stick\s+with|pick|choose|switch\s+to|move\s+to|adopt|"
            r"settle\s+on|keep|go\s+for)\s+(?P<what>.+))$"
        ),
    ),
    (
        "instead",
        re.compile(
            r"(?i:\b(?:we|I)\s+(?:will|are\s+going\s+to|am\s+going\s+to|are|am|shall|are\s+now|"
            r"have\s+switched|switched|moved)\s+)"
            r"(?P<verb>(?i:use|using|go\s+with|going\s+with|switch\s+to|switching\s+to|move\s+to|"
            r"moving\s+to|stick\s+with|sticking\s+with|adopt|to))\s+(?P<what>.+?)\s+"
            r"(?i:instead\s+of|rather\s+than|over|in\s+place\s+of)\s+(?P<alt>.+)$"
        ),
    ),
    (
        "propose",
        re.compile(
            r"(?i:\b(?:I\s+(?:would\s+)?(?:propose|suggest|recommend)(?:\s+that)?(?:\s+we)?|"
            r"how\s+about(?:\s+we)?|maybe\s+we\s+should|we\s+should|we\s+could|what\s+if\s+we|"
            r"proposal\s*:\s*(?:we\s+)?)\s+)"
            r"(?P<verb>(?i:use|go\s+with|switch\s+to|adopt|pick|choose|move\s+to|using|"
            r"going\s+with|switching\s+to))\s+(?P<what>.+)$"
        ),
    ),
]
_RATIONALE_RE = re.compile(
    r"(?:,\s*|\s+|\s+-\s+)(?:because(?:\s+of)?|since|due\s+to|given\s+that|so\s+that|"
    r"as(?=\s+(?:it|they|we|this|that|the|our|there|I|he|she|its|their|it's)\b))\s+(?P<r>.+)$",
    _I,
)
_NEXT_RATIONALE = re.compile(
    r"^(?:because|since|the\s+reason(?:\s+is|\s+being|\s+was)?(?:\s+that)?|that\s+is\s+because|"
    r"this\s+is\s+because|it\s+is\s+because|reason|rationale|why)\s*[:,\-]?\s*(?P<r>.+)$",
    _I,
)
_ALT_RE = re.compile(
    r"\s+(?:instead\s+of|rather\s+than|in\s+place\s+of|"
    r"over(?!\s+(?:the|a|an|next|this|last|time|there|here|again|it|\d)\b)|and\s+not)\s+"
    r"(?P<alt>.+)$|\s*,\s*not\s+(?P<alt2>.+)$",
    _I,
)
_CONSIDERED_RE = re.compile(
    r"\b(?:considered|looked\s+at|evaluated|compared|debated|discussed|weighed)\s+(?P<alts>.+?)"
    r"\s*,?\s*(?:but|and|then)\s+(?:we\s+|I\s+|the\s+team\s+)?(?:finally\s+|eventually\s+)?"
    r"(?:decided|chose|went|settled|picked|agreed|opted)",
    _I,
)
_WITH_NAMES = re.compile(rf"\bwith\s+(?P<names>{_NAMES})")


def _split_list(text: str) -> list[str]:
    items = re.split(r"\s*,\s*(?:or\s+|and\s+)?|\s+or\s+|\s+and\s+|\s*/\s*", text)
    out = []
    for item in items:
        item = _strip_end(re.sub(r"^(?:the|a|an|using|to)\s+", "", item.strip(), flags=_I))
        if item and len(item.split()) <= 8 and item.lower() not in ("it", "that", "this", "etc"):
            out.append(item)
    return out


def _names(text: str) -> list[str]:
    return [w for w in re.split(r"\s*,\s*and\s+|\s*,\s*|\s+and\s+|\s*&\s*", text) if _is_name(w)]


_CHOOSING = {
    "go with": "go with",
    "going with": "go with",
    "go for": "go with",
    "settle on": "go with",
    "use": "use",
    "using": "use",
    "stick with": "stick with",
    "sticking with": "stick with",
    "pick": "pick",
    "choose": "choose",
    "switch to": "switch to",
    "switching to": "switch to",
    "move to": "move to",
    "moving to": "move to",
    "adopt": "adopt",
    "keep": "keep",
}


def _clean_decision(raw: str, verb: str, prep: str) -> tuple[str, str, list[str]]:
    """(what, rationale, alternatives) from the text after the decision verb."""
    rationale = ""
    m = _RATIONALE_RE.search(raw)
    if m:
        rationale, raw = _strip_end(m["r"]), raw[: m.start()]
    alternatives: list[str] = []
    m = _ALT_RE.search(raw)
    if m:
        alternatives, raw = _split_list(m["alt"] or m["alt2"] or ""), raw[: m.start()]
    what = _strip_end(raw)
    what = re.sub(r"^(?:to|that|on|upon|for|with)\s+", "", what, flags=_I)
    what = re.sub(
        r"^(?:we|I|the\s+team|they)\s+(?:will|would|should|shall|are\s+going\s+to|are|must|can)\s+",
        "",
        what,
        flags=_I,
    )
    what = re.sub(r"^not\s+to\s+", "do not ", what, flags=_I)
    verb = re.sub(r"\s+", " ", verb.lower())
    if verb in ("chose", "have chosen") or (
        verb in ("settled", "opted", "decided", "went") and prep in ("on", "upon", "for", "with")
    ):
        what = "go with " + what
    elif verb in _CHOOSING:
        what = f"{_CHOOSING[verb]} {what}"
    return _short(_cap(what), 240), _short(rationale, 300), alternatives


def _decision_match(text: str) -> tuple[str, re.Match] | None:
    """The first decision pattern that matches ``text`` and makes sense, with its kind."""
    for kind, pattern in _DECISION_PATTERNS:
        m = pattern.search(text)
        if not m:
            continue
        if kind == "verb":
            verb, prep = m["verb"].lower(), (m["prep"] or "").lower()
            if re.match(r"(?i:with\s+(?:you|him|her|them)|to\s+disagree)", m["what"]):
                continue  # "I agree with you", "agreed to disagree"
            if (prep == "with") != (verb == "went"):
                continue  # only "went with X"; "agreed with Y" is not a choice
        return kind, m
    return None


_NOT_WITH_NAMES = re.compile(
    r"\b(?:go|goes|going|went|stick|sticking|stuck|stay|replace|integrate|start|begin|deal|work|"
    r"help|along|up|out|on|together|compatible|integrated)\s*$",
    _I,
)


def _stakeholders(kind: str, who: str, text: str) -> list[str]:
    """Names before the verb ("Alice and Bob agreed") and after "with" ("... with Carol")."""
    names = _names(who)
    if kind in ("verb", "label", "passive"):
        for m in _WITH_NAMES.finditer(text):
            if not _NOT_WITH_NAMES.search(text[: m.start()]):
                names += _names(m["names"])
    return list(dict.fromkeys(names))[:10]


def _previous_kept(kept: list[tuple[int, str]], index: int) -> int:
    previous = -1
    for i, _ in kept:
        if i >= index:
            break
        previous = i
    return previous


def _decision_context(sents: list[_Sent], pos: int, kept: list[tuple[int, str]]) -> str:
    """The sentence before, from the same message or the message just before, if no decision."""
    if pos == 0:
        return ""
    s, before = sents[pos], sents[pos - 1]
    adjacent = before.index == s.index or (
        s.position == 0 and _previous_kept(kept, s.index) == before.index
    )
    return _short(before.raw, 240) if adjacent and "decision" not in before.tags else ""


def _extract_decisions(sents: list[_Sent], kept: list[tuple[int, str]]) -> list[ExtractedDecision]:
    decisions: dict[str, ExtractedDecision] = {}
    for pos, s in enumerate(sents):
        text = _FILLER.sub("", s.text).strip()
        if s.role != "user" and not re.match(r"(?i:(?:final\s+|key\s+)?decision)\s*[:\-]", text):
            continue
        if text.endswith("?") or re.search(r"\b(?:not\s+sure|undecided|if\s+we)\b", text, _I):
            continue
        found = _decision_match(text)
        if not found:
            continue
        kind, m = found
        groups = m.groupdict()
        what, rationale, alternatives = _clean_decision(
            groups["what"], groups.get("verb") or "", (groups.get("prep") or "").lower()
        )
        if kind == "instead":
            alternatives = _split_list(_RATIONALE_RE.sub("", groups["alt"]))
            if m2 := _RATIONALE_RE.search(groups["alt"]):
                rationale = _short(_strip_end(m2["r"]), 300)
        if len(what) < 3:
            continue
        following = sents[pos + 1] if pos + 1 < len(sents) else None
        same_message = following is not None and following.index == s.index
        if not rationale and same_message and (m2 := _NEXT_RATIONALE.match(following.text)):
            rationale = _short(_strip_end(m2["r"]), 300)
        if m2 := _CONSIDERED_RE.search(text):
            for alt in _split_list(m2["alts"]):
                if normalise_key(alt) not in normalise_key(what) and alt not in alternatives:
                    alternatives.append(alt)
        decision = ExtractedDecision(
            what=what,
            context=_decision_context(sents, pos, kept),
            rationale=rationale,
            alternatives=alternatives[:6],
            stakeholders=_stakeholders(kind, groups.get("who") or "", text),
            status="proposed" if kind == "propose" else "decided",
            message_index=s.index,
        )
        s.tags.add("decision")
        key = normalise_key(what)
        if key not in decisions:
            decisions[key] = decision
            continue
        old = decisions[key]  # told again: fill what was missing, a decision beats a proposal
        old.rationale = old.rationale or decision.rationale
        old.alternatives = old.alternatives or decision.alternatives
        if decision.status == "decided":
            old.status = "decided"
    return list(decisions.values())


# -- action items ---------------------------------------------------------------------------

_ACTION_VERBS = _wordset(
    """send email mail call phone text message ping fix write finish complete review prepare
update book buy order schedule submit deploy check draft publish pay file renew cancel
contact reply respond read test merge release ship invite organise organize plan set
create build implement migrate upload download install clean print sign return pick
collect visit ask follow share post backup back document refactor close open arrange
confirm research look find get make fill"""
)
_ACTION_PATTERNS = [
    (
        "label",
        re.compile(
            r"^(?i:todo|to-do|to\s+do|action\s+items?|action|task|next\s+steps?|follow[- ]up|ai)"
            r"\s*[:\-\u2013\u2014]\s*(?P<what>.+)$"
        ),
    ),
    ("box", re.compile(r"^\[(?P<box>[ xX])\]\s+(?P<what>.+)$")),
    (
        "remind",
        re.compile(r"(?i:\bremind\s+me\s+(?:to|that\s+I\s+(?:need|have)\s+to)\s+)(?P<what>.+)$"),
    ),
    (
        "remind_about",
        re.compile(r"(?i:\bremind\s+me\s+(?:about|of)\s+)(?P<what>.+)$"),
    ),
    (
        "forget",
        re.compile(r"(?i:\b(?:do\s+not|never)\s+(?:let\s+me\s+)?forget\s+to\s+)(?P<what>.+)$"),
    ),
    (
        "need",
        re.compile(
            r"(?i:\b(?P<who>I|we)\s+(?:really\s+|still\s+|also\s+|definitely\s+|urgently\s+|"
            r"absolutely\s+)*(?:need\s+to|have\s+to|have\s+got\s+to|got\s+to|must)\s+)"
            r"(?P<what>.+)$"
        ),
    ),
    (
        "will",
        re.compile(
            r"(?i:\b(?P<who>I)\s+(?:will|am\s+going\s+to|plan\s+to|intend\s+to|promise\s+to|"
            r"should|ought\s+to)\s+)(?P<what>.+)$"
        ),
    ),
    (
        "we",
        re.compile(
            r"(?i:\b(?P<who>we)\s+(?:will|should|are\s+going\s+to|plan\s+to|intend\s+to|"
            r"ought\s+to|shall)\s+)(?P<what>.+)$"
        ),
    ),
    (
        "named",
        re.compile(
            rf"(?:^|\b)(?P<who>{_NAMES})\s+(?i:will|shall|is\s+going\s+to|are\s+going\s+to|"
            r"needs\s+to|need\s+to|has\s+to|have\s+to|must|should|promised\s+to|is\s+supposed\s+to|"
            r"is\s+to|is\s+responsible\s+for|are\s+responsible\s+for|is\s+in\s+charge\s+of|"
            r"owns|will\s+own|volunteered\s+to|offered\s+to)\s+(?P<what>.+)$"
        ),
    ),
]
_NEED_DENY = re.compile(
    r"^(?:say|admit|agree|ask\s+you|wonder|confess|be\s+honest|know|understand|think|"
    r"figure\s+out\s+what|tell\s+you|mention|be\s+careful|remember|decide)\b",
    _I,
)
_WILL_DENY = re.compile(
    r"^(?:be|have|think|see|try|let\s+you|get\s+back|keep|probably|maybe|never|not|always|"
    r"just|go|do\s+it|do\s+that|take|use|need|want|like|love|miss)\b",
    _I,
)
_DEP_RES = [
    re.compile(
        r"\s*,?\s*\b(?:after|once|when)\s+(?P<dep>.+?)(?:\s+(?:is|are|has\s+been|have\s+been|gets|get)"
        r"\s+(?:done|finished|complete|completed|merged|ready|approved|fixed|deployed|signed|"
        r"sent|in|live|out))?\s*$",
        _I,
    ),
    re.compile(
        r"\s*,?\s*\(?(?:(?:which\s+)?depends\s+on|blocked\s+(?:by|on)|waiting\s+(?:on|for)|"
        r"pending|requires)\s+(?P<dep>.+?)\)?\s*$",
        _I,
    ),
]
_DEP_DONE = re.compile(
    r"\s+(?:is|are|has\s+been|have\s+been|gets|get)\s+(?:done|finished|complete|completed|merged|"
    r"ready|approved|fixed|deployed|signed|sent|in|live|out)\s*$",
    _I,
)
_LEAD_DEP = re.compile(r"^(?:after|once|when|as\s+soon\s+as)\s+(?P<dep>.+?)\s*,\s*$", _I)
_DEP_DENY = re.compile(r"^(?:lunch|dinner|breakfast|work|school|class|that|this|it|I|we)\b", _I)
_DONE_PATTERNS = [
    (
        "label",
        re.compile(r"^(?i:done|finished|completed|closed)\s*[:\-\u2013\u2014]\s*(?P<what>.+)$"),
    ),
    (
        "i",
        re.compile(
            r"(?i:\b(?:I|we)\s+(?:have\s+|had\s+|just\s+|already\s+|finally\s+|now\s+)*"
            r"(?:finished|completed|am\s+done\s+with|are\s+done\s+with|wrapped\s+up|"
            r"have\s+done|did\s+finish))\s+(?P<what>.+)$"
        ),
    ),
    (
        "is",
        re.compile(
            r"^(?P<what>.+?)\s+(?i:is|are|has\s+been|have\s+been|was|were)\s+(?i:now\s+|finally\s+|"
            r"already\s+|all\s+)?(?i:done|finished|completed|sorted|shipped|fixed|sent|submitted|"
            r"merged|deployed|booked|paid)\b"
        ),
    ),
]


def _content_tokens(text: str) -> set[str]:
    out = set()
    for word in _words(text.lower()):
        word = word.strip("'-")
        if len(word) < 3 or word in _STOPWORDS:
            continue
        # a crude stem: "migration" and "migrate" meet at "migrat"; identifiers stay whole
        out.add(word[:6] if word.isalpha() else word)
    return out


def _owner_in_label(what: str, default: str) -> tuple[str, str]:
    m = re.match(r"^@?(?P<who>[A-Z][a-z]+)\s*(?::|\s+to|\s+will|\s+-)\s+(?P<what>.+)$", what)
    if m and _is_name(m["who"]):
        return m["who"], m["what"]
    m = re.search(r"\s*[(\[]@?(?P<who>[A-Z][a-z]+)[)\]]\s*$", what)
    if m and _is_name(m["who"]):
        return m["who"], what[: m.start()]
    m = re.search(r"\s*@(?P<who>[A-Za-z][\w.-]*)", what)
    if m:
        return m["who"][:1].upper() + m["who"][1:], what[: m.start()] + what[m.end() :]
    return default, what


def _clean_action(what: str, today: datetime.date) -> tuple[str, datetime.date | None, list[str]]:
    what = _strip_end(what)
    what = re.sub(
        r"\s*(?:,\s*)?\b(?:please|thanks|thank\s+you|pls|if\s+possible|asap)\b\s*$",
        "",
        what,
        flags=_I,
    )
    what, due = _remove_date(what, today)
    deps: list[str] = []
    for dep_re in _DEP_RES:
        m = dep_re.search(what)
        if m and not _DEP_DENY.match(m["dep"]) and len(m["dep"].split()) <= 12:
            deps.append(_strip_end(m["dep"]))
            what = what[: m.start()]
            break
    what = re.sub(r"\s+(?:first|too|as\s+well|also)$", "", _strip_end(what), flags=_I)
    what = _strip_end(what)
    what = _third_person(what) if re.search(r"\b(?:my|me|I|our|us|myself)\b", what) else what
    return _short(_cap(what), 240), due, deps


def _similar_tokens(a: set[str], b: set[str]) -> bool:
    return bool(a and b) and len(a & b) / len(a | b) >= 0.5


def _action_from_clause(clause: str, s: _Sent, today: datetime.date) -> ExtractedAction | None:
    """The action item a clause states, if any (first matching pattern decides)."""
    default_owner = "user" if s.role == "user" else ""
    for kind, pattern in _ACTION_PATTERNS:
        if s.role != "user" and kind not in ("label", "box"):
            continue
        m = pattern.search(clause)
        if not m:
            continue
        raw, owner, status = m["what"], default_owner, "open"
        lead_in = clause[m.start() : m.start("what")]
        if kind in ("label", "box"):
            owner, raw = _owner_in_label(raw, default_owner)
            if kind == "box" and m["box"].lower() == "x":
                status = "done"
        elif kind in ("need", "will", "we"):
            owner = "user" if m["who"].lower() == "i" else "team"
        elif kind == "named":
            parts = re.split(r"\s*,\s*and\s+|\s*,\s*|\s+and\s+|\s*&\s*", m["who"])
            names = _names(m["who"])
            if not names or len(names) != len(parts):
                continue  # "Then Bob will ...": not all capitalised words are people
            owner = " and ".join(names)
            if re.search(r"(?i:responsible\s+for|in\s+charge\s+of)\s*$", lead_in):
                raw = "take care of " + raw
            elif re.search(r"(?i:\bowns?)\s*$", lead_in):
                raw = "own " + raw
        has_date = _find_date(raw, today) is not None
        first = (raw.split() or [""])[0].lower()
        should = re.search(r"(?i:\b(?:should|ought)\b)", lead_in) is not None
        if kind == "need" and _NEED_DENY.match(raw):
            return None
        if kind == "will" and (_WILL_DENY.match(raw) or not (has_date or first in _ACTION_VERBS)):
            return None
        if (kind == "we" or should) and not has_date:
            return None
        what, due, deps = _clean_action(raw, today)
        lead = _LEAD_DEP.match(clause[: m.start()]) if m.start() > 0 else None
        if lead and not _DEP_DENY.match(lead["dep"]):
            deps = [_strip_end(_DEP_DONE.sub("", lead["dep"])), *deps]
        if len(what) < 3 or len(what.split()) > 40:
            return None
        return ExtractedAction(what, owner, due, status, deps, s.index)
    return None


def _completion(clause: str, s: _Sent) -> tuple[str, bool] | None:
    """(what was finished, whether the form is explicit), for a clause reporting completion."""
    if _HYPOTHETICAL.match(clause) or re.match(r"(?i:after|once|as\s+soon\s+as)\b", clause):
        return None
    for kind, pattern in _DONE_PATTERNS:
        if s.role != "user" and kind != "label":
            continue
        m = pattern.search(clause)
        if not m or re.match(r"^(?:not|it|that|this)\b", m["what"].strip(), _I):
            continue
        if kind == "is" and not re.match(r"^(?:the|my|our|that|this)\s+\w+", m["what"], _I):
            continue
        return m["what"], kind != "is"
    return None


class _Actions:
    """The action items of one call: merged by key, closed by later completions."""

    def __init__(self, today: datetime.date) -> None:
        self.today = today
        self.items: list[ExtractedAction] = []
        self.by_key: dict[str, ExtractedAction] = {}

    def add(self, action: ExtractedAction) -> None:
        key = normalise_key(action.what)
        if not key:
            return
        old = self.by_key.get(key)
        if old is None:
            self.by_key[key] = action
            self.items.append(action)
            return
        old.due_date = action.due_date or old.due_date
        old.owner = old.owner or action.owner
        old.depends_on = old.depends_on or action.depends_on
        if action.status == "done":
            old.status = "done"

    def complete(self, text: str, explicit: bool, s: _Sent) -> bool:
        """Close the latest open action ``text`` names; else add a done one if explicit."""
        tokens = _content_tokens(text)
        for action in reversed(self.items):
            other = _content_tokens(action.what)
            if (
                action.status == "open"
                and tokens
                and (tokens <= other or _similar_tokens(tokens, other))
            ):
                action.status = "done"
                return True
        if not explicit:
            return False
        what, _, _ = _clean_action(text, self.today)
        if len(what) < 3:
            return False
        owner = "user" if s.role == "user" else ""
        self.add(ExtractedAction(what, owner, None, "done", [], s.index))
        return True

    def link_dependencies(self) -> None:
        """A dependency naming another action of this call becomes that action's ``what``."""
        for action in self.items:
            linked = []
            for dep in action.depends_on:
                tokens = _content_tokens(dep)
                others = (o for o in self.items if o is not action)
                match = next(
                    (o.what for o in others if _similar_tokens(tokens, _content_tokens(o.what))),
                    dep,
                )
                linked.append(match)
            action.depends_on = linked


def _extract_actions(sents: list[_Sent], today: datetime.date) -> list[ExtractedAction]:
    actions = _Actions(today)
    for s in sents:
        clauses = _clauses(s.text) if s.role == "user" else [_FILLER.sub("", s.text)]
        for clause in clauses:
            if clause.rstrip().endswith("?") and not re.match(r"(?i:todo|action)", clause):
                continue
            done = _completion(clause, s)
            if done and actions.complete(*done, s):
                s.tags.add("action")
                continue
            if done:
                continue
            action = _action_from_clause(clause, s, today)
            if action:
                actions.add(action)
                s.tags.add("action")
    actions.link_dependencies()
    return actions.items


# -- open questions -------------------------------------------------------------------------

_UNSURE = re.compile(
    r"\b(?:not\s+sure|still\s+need\s+to\s+decide|still\s+have\s+to\s+decide|have\s+not\s+decided|"
    r"has\s+not\s+been\s+decided|undecided|open\s+question|tbd|to\s+be\s+decided|"
    r"to\s+be\s+determined|unclear\s+(?:whether|if|how|what|which)|do\s+not\s+know\s+(?:whether|if|"
    r"which|how|what)|cannot\s+decide|can\s+not\s+decide|still\s+deciding|torn\s+between)\b",
    _I,
)
_RECALL_Q = re.compile(
    r"\b(?:remember|what\s+is\s+my|what\s+are\s+my|who\s+am\s+I|do\s+you\s+know\s+my|what\s+did\s+I|"
    r"what\s+do\s+I\s+like|did\s+I\s+tell|have\s+I\s+told|how\s+are\s+you|are\s+you\s+there|"
    r"who\s+are\s+you|what\s+can\s+you\s+do|are\s+you\s+(?:a|an)\s+(?:bot|ai|human))\b",
    _I,
)


def _extract_questions(
    sents: list[_Sent], kept: list[tuple[int, str]], decisions: list[ExtractedDecision]
) -> list[str]:
    next_role: dict[int, str] = {}
    for position, (index, _) in enumerate(kept):
        next_role[index] = kept[position + 1][1] if position + 1 < len(kept) else ""
    questions: list[tuple[str, _Sent]] = []
    for s in sents:
        if s.role != "user":
            continue
        is_question = s.raw.rstrip().endswith("?")
        unsure = bool(_UNSURE.search(s.text))
        if not (is_question or unsure):
            continue
        if is_question and not unsure and next_role.get(s.index) == "assistant":
            continue
        if _RECALL_Q.search(s.text) or len(_words(s.raw)) < 3:
            continue
        questions.append((_short(s.raw, 240), s))
    out: list[str] = []
    seen: set[str] = set()
    for text, s in questions:
        tokens = _content_tokens(text)
        settled = any(
            d.message_index > s.index
            and tokens
            and len(tokens & _content_tokens(f"{d.what} {' '.join(d.alternatives)}")) * 2
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


# -- topics ---------------------------------------------------------------------------------


def _extract_topics(sents: list[_Sent]) -> list[str]:
    scores: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    forms: dict[str, Counter[str]] = {}
    pairs: Counter[tuple[str, str]] = Counter()
    order = 0
    for s in sents:
        weight = 2.0 if s.role == "user" else 1.0
        previous = None
        tokens = re.findall(r"[^\W\d_][\w'.+#-]*[\w+#]|[^\W\d_]", s.raw)
        for i, token in enumerate(tokens):
            token = re.sub(r"'s$", "", token)
            low = token.lower()
            if len(low) < 3 or low in _STOPWORDS or not re.search(r"[^\W\d_]{2}", low):
                previous = None
                continue
            scores[low] += weight + (0.25 if i > 0 and token[:1].isupper() else 0.0)
            # sentence-initial capitals say nothing about the word's own spelling
            forms.setdefault(low, Counter())[token if i > 0 else low] += 1 if i > 0 else 0.5
            first_seen.setdefault(low, order)
            order += 1
            if previous is not None and previous != low:
                pairs[(previous, low)] += 1
            previous = low

    def display(low: str) -> str:
        # the most frequent spelling, lowercase on ties (sentence starts count as lowercase)
        return min(forms[low].items(), key=lambda kv: (-kv[1], kv[0] != low, kv[0]))[0]

    candidates: dict[str, float] = {}
    position: dict[str, int] = {}
    for (a, b), count in pairs.items():
        if count >= 2:
            phrase = f"{display(a)} {display(b)}"
            candidates[phrase] = count * 2.0
            position[phrase] = first_seen[a]
            scores[a] -= count
            scores[b] -= count
    for low, score in scores.items():
        if score > 0:
            candidates.setdefault(display(low), score)
            position.setdefault(display(low), first_seen[low])
    ranked = sorted(candidates, key=lambda w: (-candidates[w], position[w], w))
    return ranked[:MAX_TOPICS]


# -- summary --------------------------------------------------------------------------------

_LOW_VALUE = re.compile(
    r"^(?:(?:hi|hello|hey|thanks|thank\s+you|ok|okay|cool|great|nice|sure|yes|no|bye|"
    r"good\s+(?:morning|night|evening))\b[\s!.,]*)+$",
    _I,
)
_INFORMATIVE = re.compile(
    r"\b(?:decided|agreed|deadline|due|prefers?|wants?|name|called|will|must|needs?|todo|"
    r"action|because|lives?|works?|project|uses?|chose|plan|launch|meeting|budget)\b",
    _I,
)


def _unit_words(text: str) -> int:
    """Words a summary line costs, its "- " bullet included."""
    return len(text.split()) + 1


def _truncate_words(text: str, limit: int) -> str:
    words = text.split()
    if len(words) <= limit:
        return text
    return " ".join(words[:limit]).rstrip(",;:") + "\u2026"


def _previous_units(previous: str) -> list[str]:
    units: list[str] = []
    seen: set[str] = set()
    for line in (previous or "").splitlines():
        line = _BULLET_RE.sub("", line).strip()
        if not line:
            continue
        for piece in re.split(r"(?<=[.!?\u2026])\s+(?=[A-Z0-9\"'(])", line):
            piece = _squash(piece)
            key = normalise_key(piece)
            if piece and key and key not in seen:
                seen.add(key)
                units.append(_truncate_words(piece, MAX_UNIT_WORDS))
    return units


_FACT_LINE = re.compile(
    r"\bthe\s+user(?:'s)?\b.*?\b(?:is|are|has|lives|works|prefers|likes|loves|hates|wants|"
    r"was\s+born|speaks|uses)\b",
    _I,
)


def _informativeness(unit: str, position: int, total: int) -> float:
    """How much a previous-summary sentence is worth keeping when the summary must shrink."""
    words = _unit_words(unit)
    score = min(len(_INFORMATIVE.findall(unit)), 3) * 1.0
    score += min(0.5 * len(re.findall(r"(?<=[a-z,;:] )[A-Z][\w-]+", unit)), 1.5)
    score += 0.7 if re.search(r"\d", unit) else 0.0
    score += 2.5 if words <= 26 and _FACT_LINE.search(unit) else 0.0
    score += 2.0 if position == 0 else 0.0
    score += 0.5 * position / max(1, total - 1)  # among equals, the more recent
    return score + min(words, 25) / 25


class _Seen:
    """Keys and content-token sets of summary lines, for "already said" checks."""

    def __init__(self) -> None:
        self.keys: set[str] = set()
        self.tokens: list[set[str]] = []

    def add(self, text: str) -> None:
        self.keys.add(normalise_key(text))
        self.tokens.append(_content_tokens(text))

    def has(self, text: str) -> bool:
        if normalise_key(text) in self.keys:
            return True
        tokens = _content_tokens(text)
        return bool(tokens) and any(
            other and len(tokens & other) / len(tokens | other) >= 0.8 for other in self.tokens
        )


def _new_units(sents: list[_Sent]) -> list[tuple[float, _Sent]]:
    freq: Counter[str] = Counter()
    token_sets = [_content_tokens(s.raw) for s in sents]
    for tokens in token_sets:
        freq.update(tokens)
    units: list[tuple[float, _Sent]] = []
    for s, tokens in zip(sents, token_sets, strict=True):
        n_words = len(s.raw.split())
        if not s.tags and (n_words < 4 or _LOW_VALUE.search(s.text)):
            continue
        if s.role == "assistant" and not s.tags and n_words < 6:
            continue
        if len(re.findall(r"[^\W\d_]", s.raw)) < len(s.raw) * 0.5:
            continue  # mostly symbols/digits: tables, code leftovers
        base = sum(math.log1p(freq[t]) for t in tokens) / math.sqrt(len(tokens) + 1)
        score = base + (3.0 if s.tags else 0.0)
        score *= 1.5 if s.role == "user" else 0.6
        units.append((score, s))
    return units


def _summary_line(s: _Sent) -> str:
    """A new sentence as a summary line: third person, checkboxes spelled out."""
    if s.raw.rstrip().endswith("?"):
        who = "The user" if s.role == "user" else "The assistant"
        return f'{who} asked: "{_truncate_words(s.raw, MAX_UNIT_WORDS)}"'
    text = _FILLER.sub("", s.text) or s.text
    text = re.sub(r"^\[\s\]\s*", "To do: ", text)
    text = re.sub(r"^\[[xX]\]\s*", "Done: ", text)
    return _sentence(_truncate_words(_third_person(text, s.role), MAX_UNIT_WORDS))


def _restated(unit: str, subject: str) -> bool:
    """Whether a short previous-summary sentence states ``subject`` (and nothing else)."""
    if _unit_words(unit) > 20 or re.search(r"\band\b|;", unit):
        return False
    return bool(re.match(rf"{re.escape(subject)}\b", _subject(unit)))


def _build_summary(previous: str, sents: list[_Sent], facts: list[ExtractedFact]) -> str:
    budget = SUMMARY_MAX_WORDS
    prev_units = _previous_units(previous)
    # previous statements of a subject a new fact restates give way to the new statement
    for fact in facts:
        if fact.subject:
            prev_units = [fact.text if _restated(u, fact.subject) else u for u in prev_units]
    prev_units = list(dict.fromkeys(prev_units))
    seen = _Seen()
    for unit in prev_units:
        seen.add(unit)
    prev_words = sum(map(_unit_words, prev_units))
    new_cap = budget - min(prev_words, int(budget * (1 - NEW_SHARE))) if prev_units else budget
    chosen: list[tuple[int, str]] = []
    used = 0
    for _, s in sorted(_new_units(sents), key=lambda c: (-c[0], c[1].order)):
        if used >= new_cap - 3:
            break
        text = _summary_line(s)
        words = _unit_words(text)
        if used + words > new_cap or seen.has(text):
            continue
        seen.add(text)
        chosen.append((s.order, text))
        used += words
    chosen.sort()
    if (
        not chosen
        and prev_words <= budget
        and previous.strip()
        and prev_units == _previous_units(previous)
    ):
        return previous.strip()
    prev_budget = budget - used
    if prev_words > prev_budget:
        ranked = sorted(
            range(len(prev_units)),
            key=lambda i: (-_informativeness(prev_units[i], i, len(prev_units)), i),
        )
        keep: set[int] = set()
        total = 0
        for i in ranked:
            words = _unit_words(prev_units[i])
            if total + words <= prev_budget:
                keep.add(i)
                total += words
        if not keep and prev_units:
            prev_units = [_truncate_words(prev_units[0], max(8, prev_budget - 1))]
        else:
            prev_units = [u for i, u in enumerate(prev_units) if i in keep]
    lines = [f"- {u}" for u in prev_units] + [f"- {t}" for _, t in chosen]
    # hard bound, whole lines (only reachable with a tiny previous budget)
    while len(lines) > 1 and sum(len(line.split()) for line in lines) > budget:
        lines.pop()
    return "\n".join(lines)


# -- entry point ----------------------------------------------------------------------------


def extract(
    messages: list[dict], *, previous_summary: str = "", today: datetime.date
) -> Extraction:
    """Fold ``messages`` into ``previous_summary`` and extract what they state (module docs)."""
    sents, kept = _prepare(messages)
    facts = _extract_facts(sents, today)
    decisions = _extract_decisions(sents, kept)
    actions = _extract_actions(sents, today)
    questions = _extract_questions(sents, kept, decisions)
    topics = _extract_topics(sents)
    summary = _build_summary(previous_summary or "", sents, facts)
    return Extraction(
        summary=summary,
        topics=topics,
        decisions=decisions,
        action_items=actions,
        facts=facts,
        open_questions=questions,
    )
