"""Action items (user messages; ``TODO:``, ``Action item:`` and checkboxes also from the assistant).

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

A hedge before the statement ("I wonder if I need to X", "maybe I need to X", "I think we
should X") makes it no action item.

Completion: ``done: X``, ``[x] X``, "I('ve) finished|completed|done with|wrapped up X", "X is
done/finished/completed/sent/fixed/shipped". If the finished thing's content words (cut to
six letters, so "migration" meets "migrate") are all in an open action of the same call, or
overlap it by half, that action becomes ``done``; otherwise an explicit form
(``done:``, ``[x]``, "I finished/completed X") adds a ``done`` action, and "X is done" with
nothing to match is ignored.
"""

from __future__ import annotations

import datetime
import re

from memory.extraction.dates import find_date, remove_date
from memory.extraction.sentences import FILLER, HYPOTHETICAL, Sent, clauses_of
from memory.extraction.text import (
    NAME_SEP,
    NAMES,
    I,
    cap,
    content_tokens,
    is_name,
    names_in,
    normalise_key,
    short,
    similar_tokens,
    strip_end,
    third_person,
    wordset,
)
from memory.extraction.types import ExtractedAction
from memory.extraction.validation import framed

_ACTION_VERBS = wordset(
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
            rf"(?:^|\b)(?P<who>{NAMES})\s+(?i:will|shall|is\s+going\s+to|are\s+going\s+to|"
            r"needs\s+to|need\s+to|has\s+to|have\s+to|must|should|promised\s+to|is\s+supposed\s+to|"
            r"is\s+to|is\s+responsible\s+for|are\s+responsible\s+for|is\s+in\s+charge\s+of|"
            r"owns|will\s+own|volunteered\s+to|offered\s+to)\s+(?P<what>.+)$"
        ),
    ),
]
_HEDGED = re.compile(
    r"\b(?:if|whether|wonder|wondering|maybe|perhaps|might|not\s+sure|unsure|think|guess)\b", I
)
_NEED_DENY = re.compile(
    r"^(?:say|admit|agree|ask\s+you|wonder|confess|be\s+honest|know|understand|think|"
    r"figure\s+out\s+what|tell\s+you|mention|be\s+careful|remember|decide)\b",
    I,
)
_WILL_DENY = re.compile(
    r"^(?:be|have|think|see|try|let\s+you|get\s+back|keep|probably|maybe|never|not|always|"
    r"just|go|do\s+it|do\s+that|take|use|need|want|like|love|miss)\b",
    I,
)
_IS_DONE = (
    r"\s+(?:is|are|has\s+been|have\s+been|gets|get)\s+(?:done|finished|complete|completed|merged|"
    r"ready|approved|fixed|deployed|signed|sent|in|live|out)"
)
_DEP_RES = [
    re.compile(rf"\s*,?\s*\b(?:after|once|when)\s+(?P<dep>.+?)(?:{_IS_DONE})?\s*$", I),
    re.compile(
        r"\s*,?\s*\(?(?:(?:which\s+)?depends\s+on|blocked\s+(?:by|on)|waiting\s+(?:on|for)|"
        r"pending|requires)\s+(?P<dep>.+?)\)?\s*$",
        I,
    ),
]
_DEP_DONE = re.compile(rf"{_IS_DONE}\s*$", I)
_LEAD_DEP = re.compile(r"^(?:after|once|when|as\s+soon\s+as)\s+(?P<dep>.+?)\s*,\s*$", I)
_DEP_DENY = re.compile(r"^(?:lunch|dinner|breakfast|work|school|class|that|this|it|I|we)\b", I)
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


def _owner_in_label(what: str, default: str) -> tuple[str, str]:
    m = re.match(r"^@?(?P<who>[A-Z][a-z]+)\s*(?::|\s+to|\s+will|\s+-)\s+(?P<what>.+)$", what)
    if m and is_name(m["who"]):
        return m["who"], m["what"]
    m = re.search(r"\s*[(\[]@?(?P<who>[A-Z][a-z]+)[)\]]\s*$", what)
    if m and is_name(m["who"]):
        return m["who"], what[: m.start()]
    m = re.search(r"\s*@(?P<who>[A-Za-z][\w.-]*)", what)
    if m:
        return m["who"][:1].upper() + m["who"][1:], what[: m.start()] + what[m.end() :]
    return default, what


def _clean_action(what: str, today: datetime.date) -> tuple[str, datetime.date | None, list[str]]:
    what = strip_end(what)
    what = re.sub(
        r"\s*(?:,\s*)?\b(?:please|thanks|thank\s+you|pls|if\s+possible|asap)\b\s*$",
        "",
        what,
        flags=I,
    )
    what, due = remove_date(what, today)
    deps: list[str] = []
    for dep_re in _DEP_RES:
        m = dep_re.search(what)
        if m and not _DEP_DENY.match(m["dep"]) and len(m["dep"].split()) <= 12:
            deps.append(strip_end(m["dep"]))
            what = what[: m.start()]
            break
    what = re.sub(r"\s+(?:first|too|as\s+well|also)$", "", strip_end(what), flags=I)
    what = strip_end(what)
    what = third_person(what) if re.search(r"\b(?:my|me|I|our|us|myself)\b", what) else what
    return short(cap(what), 240), due, deps


def _action_from_clause(clause: str, s: Sent, today: datetime.date) -> ExtractedAction | None:
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
        if kind not in ("label", "box") and _HEDGED.search(clause[: m.start()]):
            return None  # "I wonder if I need to ...", "maybe I need to ...": not decided

        if kind in ("label", "box"):
            owner, raw = _owner_in_label(raw, default_owner)
            if kind == "box" and m["box"].lower() == "x":
                status = "done"
        elif kind in ("need", "will", "we"):
            owner = "user" if m["who"].lower() == "i" else "team"
        elif kind == "named":
            parts = NAME_SEP.split(m["who"])
            names = names_in(m["who"])
            if not names or len(names) != len(parts):
                continue  # "Then Bob will ...": not all capitalised words are people
            owner = " and ".join(names)
            if re.search(r"(?i:responsible\s+for|in\s+charge\s+of)\s*$", lead_in):
                raw = "take care of " + raw
            elif re.search(r"(?i:\bowns?)\s*$", lead_in):
                raw = "own " + raw
        has_date = find_date(raw, today) is not None
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
            deps = [strip_end(_DEP_DONE.sub("", lead["dep"])), *deps]
        if len(what) < 3 or len(what.split()) > 40:
            return None
        # A bare word ("TODO: deploy") is kept as a statement, as the validation asks.
        return ExtractedAction(framed(what, "Task:"), owner, due, status, deps, s.index)
    return None


def _completion(clause: str, s: Sent) -> tuple[str, bool] | None:
    """(what was finished, whether the form is explicit), for a clause reporting completion."""
    if HYPOTHETICAL.match(clause) or re.match(r"(?i:after|once|as\s+soon\s+as)\b", clause):
        return None
    for kind, pattern in _DONE_PATTERNS:
        if s.role != "user" and kind != "label":
            continue
        m = pattern.search(clause)
        if not m or re.match(r"^(?:not|it|that|this)\b", m["what"].strip(), I):
            continue
        if kind == "is" and not re.match(r"^(?:the|my|our|that|this)\s+\w+", m["what"], I):
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

    def complete(self, text: str, explicit: bool, s: Sent) -> bool:
        """Close the latest open action ``text`` names; else add a done one if explicit."""
        tokens = content_tokens(text)
        for action in reversed(self.items):
            other = content_tokens(action.what)
            if (
                action.status == "open"
                and tokens
                and (tokens <= other or similar_tokens(tokens, other))
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
                tokens = content_tokens(dep)
                others = (o for o in self.items if o is not action)
                match = next(
                    (o.what for o in others if similar_tokens(tokens, content_tokens(o.what))),
                    dep,
                )
                linked.append(match)
            action.depends_on = linked


def extract_actions(sents: list[Sent], today: datetime.date) -> list[ExtractedAction]:
    actions = _Actions(today)
    for s in sents:
        clauses = clauses_of(s.text) if s.role == "user" else [FILLER.sub("", s.text)]
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
