"""Decisions (user messages; explicit ``Decision:`` lines also from the assistant).

``decision: X`` / ``decided: X`` / ``agreed: X``; "<we|I|the team|Names> (have/all/finally)
decided|agreed|chose|settled|opted|committed (to|on|that|for) X"; "it was decided/agreed (that)
X"; "let's go with|use|stick with|pick|choose|switch to|move to|adopt|settle on|keep X";
"we'll / we are going to use|go with|switch to|move to|stick with|adopt X instead of|rather than|
over Y" (alternatives ``["Y"]``); proposals with status ``proposed``: "I propose/suggest (we)
X", "how about (we) X", "maybe we should X", "we should/could X", "what if we X" where X starts
with a choosing verb (use, go with, switch to, adopt, pick, choose, move to). Questions are not
decisions. Rationale: the rest of the sentence after "because (of)", "since", "due to", "given
that", "so that", "as <pronoun|the>" ("since" of time, "since then", is none), or the next
sentence of the same message when it says it is the reason: "Because ...", "The reason is ...",
"That's because ...", "Reason: ..." (never an unrelated sentence that follows). Alternatives:
"instead of / rather than / over / and not Y" and
"we considered A and B, but ...". Stakeholders: capitalised names before the verb ("Alice and
Bob agreed ...") and after "with" ("... with Carol", not "go with React"). Context: the
sentence before it, from the same message or (for a message's first sentence) the last sentence
of the message just before, unless that sentence is itself a decision. Told twice in one call,
a decision is returned once (by ``normalise_key(what)``), a decided one beating a proposal.
"""

from __future__ import annotations

import re

from memory.extraction.sentences import CLAUSE_SPLIT, FILLER, Sent
from memory.extraction.text import NAMES, I, cap, names_in, normalise_key, short, strip_end
from memory.extraction.types import ExtractedDecision
from memory.extraction.validation import framed

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
            rf"(?:(?:^|\b)(?P<who>(?i:we|I|the\s+team|everyone|everybody|they)|{NAMES})\s+|"
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
# "since" of time ("since then", "since 2020", "since last year") gives no reason.
_SINCE = (
    r"since(?!\s+(?:then|ever|\d|last|yesterday|today|early|late|childhood|the\s+(?:start|"
    r"beginning|end)|(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|march|april|may|"
    r"june|july|august|september|october|november|december)\b)"
)
_RATIONALE_RE = re.compile(
    rf"(?:,\s*|\s+|\s+-\s+)(?:because(?:\s+of)?|{_SINCE}|due\s+to|given\s+that|so\s+that|"
    r"as(?=\s+(?:it|they|we|this|that|the|our|there|I|he|she|its|their|it's)\b))\s+(?P<r>.+)$",
    I,
)
# The next sentence is the reason only when it says so: "Because ...", "The reason is ...",
# "That is because ...", "Reason: ...". Not "Since then ...", "Why ...?", "Reason I ask: ...".
_NEXT_RATIONALE = re.compile(
    r"^(?:because|the\s+reason\s+(?:is|being|was)(?:\s+that)?|(?:that|this|it)\s+is\s+because|"
    r"(?:the\s+)?(?:reason|rationale)\s*:)\s*,?\s*(?P<r>[^?]+)$",
    I,
)
_ALT_RE = re.compile(
    r"\s+(?:instead\s+of|rather\s+than|in\s+place\s+of|"
    r"over(?!\s+(?:the|a|an|next|this|last|time|there|here|again|it|\d)\b)|and\s+not)\s+"
    r"(?P<alt>.+)$|\s*,\s*not\s+(?P<alt2>.+)$",
    I,
)
_CONSIDERED_RE = re.compile(
    r"\b(?:considered|looked\s+at|evaluated|compared|debated|discussed|weighed)\s+(?P<alts>.+?)"
    r"\s*,?\s*(?:but|and|then)\s+(?:we\s+|I\s+|the\s+team\s+)?(?:finally\s+|eventually\s+)?"
    r"(?:decided|chose|went|settled|picked|agreed|opted)",
    I,
)
_WITH_NAMES = re.compile(rf"\bwith\s+(?P<names>{NAMES})")


def _split_list(text: str) -> list[str]:
    items = re.split(r"\s*,\s*(?:or\s+|and\s+)?|\s+or\s+|\s+and\s+|\s*/\s*", text)
    out = []
    for item in items:
        item = strip_end(re.sub(r"^(?:the|a|an|using|to)\s+", "", item.strip(), flags=I))
        if item and len(item.split()) <= 8 and item.lower() not in ("it", "that", "this", "etc"):
            out.append(item)
    return out


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
        rationale, raw = strip_end(m["r"]), raw[: m.start()]
    alternatives: list[str] = []
    m = _ALT_RE.search(raw)
    if m:
        alternatives, raw = _split_list(m["alt"] or m["alt2"] or ""), raw[: m.start()]
    what = strip_end(raw)
    what = re.sub(r"^(?:to|that|on|upon|for|with)\s+", "", what, flags=I)
    what = re.sub(
        r"^(?:we|I|the\s+team|they)\s+(?:will|would|should|shall|are\s+going\s+to|are|must|can)\s+",
        "",
        what,
        flags=I,
    )
    what = re.sub(r"^not\s+to\s+", "do not ", what, flags=I)
    verb = re.sub(r"\s+", " ", verb.lower())
    if verb in ("chose", "have chosen") or (
        verb in ("settled", "opted", "decided", "went") and prep in ("on", "upon", "for", "with")
    ):
        what = "go with " + what
    elif verb in _CHOOSING:
        what = f"{_CHOOSING[verb]} {what}"
    # A bare word keeps the user's verb ("We decided to relocate": "Decided to relocate"), as
    # the validation keeps statements only.
    frame = f"{verb} {prep}" if verb and prep in ("to", "on", "upon", "for") else "decision:"
    what = framed(what, frame)
    return short(cap(what), 240), short(rationale, 300), alternatives


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
    I,
)


def _stakeholders(kind: str, who: str, text: str) -> list[str]:
    """Names before the verb ("Alice and Bob agreed") and after "with" ("... with Carol")."""
    names = names_in(who)
    if kind in ("verb", "label", "passive"):
        for m in _WITH_NAMES.finditer(text):
            if not _NOT_WITH_NAMES.search(text[: m.start()]):
                names += names_in(m["names"])
    return list(dict.fromkeys(names))[:10]


def _previous_kept(kept: list[tuple[int, str]], index: int) -> int:
    previous = -1
    for i, _ in kept:
        if i >= index:
            break
        previous = i
    return previous


def _decision_context(sents: list[Sent], pos: int, kept: list[tuple[int, str]]) -> str:
    """The sentence before, from the same message or the message just before, if no decision."""
    if pos == 0:
        return ""
    s, before = sents[pos], sents[pos - 1]
    adjacent = before.index == s.index or (
        s.position == 0 and _previous_kept(kept, s.index) == before.index
    )
    return short(before.raw, 240) if adjacent and "decision" not in before.tags else ""


def _cut_at_clause(text: str) -> tuple[re.Match | None, str, str]:
    """The decision ``text`` states first, read up to the end of its clause ("We decided to
    go to Porto, and I need to fix the fence": the fence is no part of the decision); with
    the kind of pattern, and the rest of the text after that clause."""
    found = _decision_match(text)
    if not found:
        return None, "", ""
    kind, m = found
    cut = CLAUSE_SPLIT.search(text, m.start("what"))
    if cut is None:
        return m, kind, ""
    head, rest = text[: cut.start()], text[cut.end() :]
    again = _decision_match(head)
    if again is None:
        return m, kind, ""
    return again[1], again[0], rest


def _decision_of(
    m: re.Match, kind: str, text: str, sents: list[Sent], pos: int, kept, *, last: bool
) -> ExtractedDecision | None:
    s = sents[pos]
    groups = m.groupdict()
    what, rationale, alternatives = _clean_decision(
        groups["what"], groups.get("verb") or "", (groups.get("prep") or "").lower()
    )
    if kind == "instead":
        alternatives = _split_list(_RATIONALE_RE.sub("", groups["alt"]))
        if m2 := _RATIONALE_RE.search(groups["alt"]):
            rationale = short(strip_end(m2["r"]), 300)
    if len(what) < 3:
        return None
    following = sents[pos + 1] if pos + 1 < len(sents) else None
    same_message = following is not None and following.index == s.index
    if (
        last
        and not rationale
        and following is not None
        and same_message
        and (m2 := _NEXT_RATIONALE.match(following.text))
    ):
        rationale = short(strip_end(m2["r"]), 300)
    if m2 := _CONSIDERED_RE.search(text):
        for alt in _split_list(m2["alts"]):
            if normalise_key(alt) not in normalise_key(what) and alt not in alternatives:
                alternatives.append(alt)
    return ExtractedDecision(
        what=what,
        context=_decision_context(sents, pos, kept),
        rationale=rationale,
        alternatives=alternatives[:6],
        stakeholders=_stakeholders(kind, groups.get("who") or "", text),
        status="proposed" if kind == "propose" else "decided",
        message_index=s.index,
    )


def extract_decisions(sents: list[Sent], kept: list[tuple[int, str]]) -> list[ExtractedDecision]:
    decisions: dict[str, ExtractedDecision] = {}
    for pos, s in enumerate(sents):
        text = FILLER.sub("", s.text).strip()
        if s.role != "user" and not re.match(r"(?i:(?:final\s+|key\s+)?decision)\s*[:\-]", text):
            continue
        if text.endswith("?") or re.search(r"\b(?:not\s+sure|undecided|if\s+we)\b", text, I):
            continue
        rest = text
        for _ in range(4):  # a sentence's decisions, clause by clause
            m, kind, after = _cut_at_clause(rest)
            if m is None:
                break
            decision = _decision_of(m, kind, rest, sents, pos, kept, last=not after)
            rest = after
            if decision is None:
                continue
            s.tags.add("decision")
            key = normalise_key(decision.what)
            if key not in decisions:
                decisions[key] = decision
                continue
            old = decisions[key]  # told again: fill what was missing, a decision beats a proposal
            old.rationale = old.rationale or decision.rationale
            old.alternatives = old.alternatives or decision.alternatives
            if decision.status == "decided":
                old.status = "decided"
            if not rest:
                break
    return list(decisions.values())
