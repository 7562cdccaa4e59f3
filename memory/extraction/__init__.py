"""Offline memory extraction: an extractive rolling summary and a pattern-based extractor.

Pure Python (standard library only, no Django). When no language model is configured, the
background job that folds a conversation's unsummarised messages into its rolling summary calls
``extract(messages, previous_summary=..., today=...)`` and gets the same structure the LLM path
returns: a summary, topics, decisions (with context, rationale, alternatives, stakeholders),
action items (with owners, due dates, dependencies), facts about the user and open questions.
Everything is deterministic: the same input gives the same output.

Each part is documented in its module:

==================  ===========================================================================
module              what it does
==================  ===========================================================================
``sentences``       input: which messages are read, sentence and clause splitting
``facts``           facts about the user (the pattern table); the rules live in ``profile``,
                    ``preferences`` and ``attributes``, subjects and categories in ``subjects``
``decisions``       decisions with context, rationale, alternatives and stakeholders
``actions``         action items with owners, due dates, dependencies and completion
``dates``           due-date phrases (``parse_date``)
``questions``       open questions
``topics``          topics
``summary``         the extractive rolling summary
``text``            shared text helpers: normalisation, contractions, names, third person
``types``           the result dataclasses and the limits
``validation``      the checks every extracted field passes before it is stored: the one layer
                    for the offline extractor, the model's answer and imports (public: other
                    packages use ``validate_extraction`` or the module's field checks)
``withhold``        derived text without the suggestions waiting for the user ("ask first")
``acceptance``      whether a model's new summary may replace the version before it (long
                    enough for its input, no echo of the prompts, keeps the open items);
                    public, like ``validation``
==================  ===========================================================================

``__all__`` below is the package's boundary: other packages import only those names, from
``memory.extraction``. The modules share their helpers by plain names (``Sent``, ``squash``,
``I``), internal to this package.

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

import datetime

from memory.extraction import acceptance, validation
from memory.extraction.actions import extract_actions
from memory.extraction.dates import parse_date
from memory.extraction.decisions import extract_decisions
from memory.extraction.facts import extract_facts
from memory.extraction.questions import extract_questions
from memory.extraction.sentences import prepare
from memory.extraction.summary import build_summary
from memory.extraction.text import content_tokens, normalise_key, similar_tokens
from memory.extraction.topics import extract_topics
from memory.extraction.types import (
    CATEGORIES,
    MAX_OPEN_QUESTIONS,
    MAX_TOPICS,
    SUMMARY_MAX_WORDS,
    ExtractedAction,
    ExtractedDecision,
    ExtractedFact,
    Extraction,
)
from memory.extraction.validation import InvalidExtraction, Validated, validate_extraction
from memory.extraction.withhold import withhold, withhold_items

__all__ = [
    "CATEGORIES",
    "MAX_OPEN_QUESTIONS",
    "MAX_TOPICS",
    "SUMMARY_MAX_WORDS",
    "ExtractedAction",
    "ExtractedDecision",
    "ExtractedFact",
    "Extraction",
    "InvalidExtraction",
    "Validated",
    "acceptance",
    "extract",
    "extract_facts_only",
    "extract_turn",
    "normalise_key",
    "parse_date",
    "same_item",
    "topics_of",
    "validate_extraction",
    "validation",
    "withhold",
    "withhold_items",
]


def topics_of(messages: list[dict]) -> list[str]:
    """The key words and phrases of ``messages``, most telling first (a title's words)."""
    sents, _ = prepare(messages)
    return extract_topics(sents)


def extract(
    messages: list[dict],
    *,
    previous_summary: str = "",
    today: datetime.date,
    prompts: tuple[str, ...] | None = None,
) -> Extraction:
    """Fold ``messages`` into ``previous_summary`` and extract what they state (module docs);
    ``prompts``: the app's prompt texts, when not the defaults (a reply echoing them is
    skipped)."""
    sents, kept = prepare(messages, prompts) if prompts else prepare(messages)
    facts = extract_facts(sents, today)
    decisions = extract_decisions(sents, kept)
    actions = extract_actions(sents, today)
    questions = extract_questions(sents, kept, decisions)
    topics = extract_topics(sents)
    summary = build_summary(previous_summary or "", sents, facts)
    result = Extraction(
        summary=summary,
        topics=topics,
        decisions=decisions,
        action_items=actions,
        facts=facts,
        open_questions=questions,
    )
    # The same checks as the model's answer: nothing unchecked is stored, whichever path.
    return validate_extraction(
        result, message_count=len(messages), today=today, require_summary=False
    ).extraction


def extract_facts_only(messages: list[dict], *, today: datetime.date) -> list[ExtractedFact]:
    """The facts ``extract`` finds in ``messages``, checked the same way, and nothing else:
    the light extractor after each reply keeps only those, so the summary, topics, decisions
    and questions (about two thirds of the work) are not made for it."""
    sents, _ = prepare(messages)
    facts = extract_facts(sents, today)
    if not facts:
        return []
    checked = validate_extraction(
        Extraction(summary="", facts=facts),
        message_count=len(messages),
        today=today,
        require_summary=False,
    )
    return checked.extraction.facts


def extract_turn(messages: list[dict], *, today: datetime.date) -> Extraction:
    """What the light extractor after each reply keeps of the user's new message: its facts,
    the decisions it states as taken (not proposals) and the action items it opens, checked
    the same way as ``extract``; no summary, topics or questions (most of the work), and no
    completions (closing an item needs the items said before, which the summary run reads)."""
    sents, kept = prepare(messages)
    facts = extract_facts(sents, today)
    decisions = [d for d in extract_decisions(sents, kept) if d.status == "decided"]
    actions = [a for a in extract_actions(sents, today) if a.status == "open"]
    if not (facts or decisions or actions):
        return Extraction(summary="")
    checked = validate_extraction(
        Extraction(summary="", facts=facts, decisions=decisions, action_items=actions),
        message_count=len(messages),
        today=today,
        require_summary=False,
    )
    return checked.extraction


def same_item(a: str, b: str) -> bool:
    """Whether two wordings of a decision or action item name the same thing: the same key,
    or content words that overlap by half or more ("Go to Porto in August" and "Travel to
    Porto in August"), so that a summary run's wording merges into the turn's."""
    if normalise_key(a) == normalise_key(b):
        return True
    return similar_tokens(content_tokens(a), content_tokens(b), 0.5)
