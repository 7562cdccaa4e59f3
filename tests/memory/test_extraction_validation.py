"""memory.extraction.validation: every extracted field checked and clamped before it is stored."""

import datetime
import math

import pytest

from memory import summariser
from memory.extraction import (
    ExtractedAction,
    ExtractedDecision,
    ExtractedFact,
    Extraction,
    extract,
)
from memory.extraction import validation as v  # the public module of field checks

TODAY = datetime.date(2026, 3, 10)


@pytest.mark.parametrize(
    "text",
    [":{", "1234567890", "The 1234567890", "!!! ...", "   ", "", "-- ** --", "x", "2025-03-04"],
)
def test_punctuation_and_digits_are_not_text(text):
    """What a cut or confused model writes is rejected, whatever the field."""
    assert v.clean_text(text) == ""


@pytest.mark.parametrize(
    "text", ["AI", "Python", "Deploy v2 on 2025-03-04", "The user is 34.", "Café au lait"]
)
def test_short_and_mixed_texts_with_words_are_kept(text):
    """Two letters or two words are enough; numbers beside words are fine."""
    assert v.clean_text(text) == text


def test_text_is_cleaned_and_cut_at_a_word():
    """Control characters go, whitespace collapses, long text is cut at a word."""
    assert v.clean_text("a\x00b  likes\n\ttea") == "ab likes tea"
    cut = v.clean_text("word " * 100, max_chars=30)
    assert len(cut) <= 30 and cut.endswith("…") and "wor…" not in cut


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.7, 0.7),
        (1, 1.0),
        (3.5, 1.0),
        (-2, 0.0),
        (float("nan"), 0.5),
        (float("inf"), 0.5),
        (float("-inf"), 0.5),
        ("NaN", 0.5),
        ("0.9", 0.5),
        (True, 0.5),
        (None, 0.5),
    ],
)
def test_importance_is_a_finite_number_clamped_to_0_1(value, expected):
    """NaN never gets through: not as a float, not as the string a model writes."""
    result = v.clean_importance(value)
    assert math.isfinite(result) and result == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-04-01", datetime.date(2026, 4, 1)),
        (datetime.date(2027, 1, 2), datetime.date(2027, 1, 2)),
        ("2026-02-30", None),
        ("0001-01-01", None),
        ("9999-12-31", None),
        ("next Friday", None),
        ("2026-4-1", None),
        (20260401, None),
        (None, None),
    ],
)
def test_dates_are_real_and_in_a_sane_range(value, expected):
    """A real calendar date within ten years before and fifty after today, or none."""
    assert v.clean_date(value, today=TODAY) == expected


def test_enums_and_indexes_fall_back_to_their_defaults():
    """A status not in the choices is the default; an index out of range is the last one."""
    assert v.clean_choice("maybe", ("open", "done"), "open") == "open"
    assert v.clean_choice("done", ("open", "done"), "open") == "done"
    assert v.clean_index(2, 5) == 2
    assert v.clean_index(7, 5) == 4
    assert v.clean_index(-1, 5) == 4
    assert v.clean_index(True, 5) == 4
    assert v.clean_index("1", 5) == 4
    assert v.clean_index(0, 0) == 0


def test_lists_drop_garbage_and_repeats_and_are_capped():
    assert v.clean_strings(["Sam", "sam", ":{", 3, "Bo", None], max_items=5) == ["Sam", "Bo"]
    assert len(v.clean_strings([f"name {i}" for i in range(50)])) == v.LIST_MAX_ITEMS
    assert v.clean_strings("not a list") == []


def test_the_garbage_run_of_the_issue_stores_nothing():
    """The run that 'succeeded' with ':{', 'The 1234567890' at importance 1.0 and a
    punctuation decision: the summary raises, so nothing of it is stored."""
    garbage = Extraction(
        summary="':{'",
        facts=[ExtractedFact("other", "", "The 1234567890", 1.0, 0)],
        decisions=[ExtractedDecision(what='".,;:!"')],
    )
    with pytest.raises(v.InvalidExtraction):
        v.validate_extraction(garbage, message_count=3, today=TODAY)
    checked = v.validate_extraction(garbage, message_count=3, today=TODAY, require_summary=False)
    assert checked.extraction.summary == ""
    assert checked.extraction.facts == [] and checked.extraction.decisions == []
    assert len(checked.dropped) == 2


def test_valid_items_are_kept_with_their_fields_clamped():
    """A good item keeps its words; its other fields are brought into range."""
    raw = Extraction(
        summary="Sam planned the launch.",
        topics=["launch", "launch", "!!"],
        facts=[ExtractedFact("nonsense", "  Home Town ", "The user lives in Oslo.", math.nan, 9)],
        decisions=[ExtractedDecision(what="Use PostgreSQL", status="final", message_index=-3)],
        action_items=[
            ExtractedAction(what="Book the venue", due_date="2026-02-30", status="later"),
            ExtractedAction(what="Email Bo", due_date="2026-04-01", owner="..."),
        ],
    )
    out = v.validate_extraction(raw, message_count=2, today=TODAY).extraction
    assert out.topics == ["launch"]
    (fact,) = out.facts
    assert (fact.category, fact.subject, fact.importance, fact.message_index) == (
        "other",
        "home town",
        0.5,
        1,
    )
    assert (out.decisions[0].status, out.decisions[0].message_index) == ("decided", 1)
    assert [(a.due_date, a.status, a.owner) for a in out.action_items] == [
        (None, "open", ""),
        (datetime.date(2026, 4, 1), "open", ""),
    ]


def test_a_runaway_answer_is_capped_per_batch():
    facts = [ExtractedFact("other", "", f"The user likes colour {i}.", 0.5, 0) for i in range(80)]
    checked = v.validate_extraction(
        Extraction(summary="Colours.", facts=facts), message_count=1, today=TODAY
    )
    assert len(checked.extraction.facts) == v.MAX_FACTS
    assert any("more than" in reason for reason in checked.dropped)


def test_the_offline_extractor_goes_through_the_same_checks():
    """extract() output is validated: a digits-only message yields no fact or topic."""
    result = extract(
        [
            {"role": "user", "content": "My favourite number is 1234567890."},
            {"role": "user", "content": "1234567890 !!! 1234567890"},
        ],
        today=TODAY,
    )
    for fact in result.facts:
        assert v.meaningful(fact.text) and 0.0 <= fact.importance <= 1.0
    assert all(v.meaningful(topic) for topic in result.topics)


# -- statements, not bare words (issue 42, "Never worse") -------------------------------------

# Items SmolLM2-135M and Gemma 3 270M on llama.cpp returned in their JSON answers: a field's
# name, an empty value or one word, which then reached later prompts as "important facts".
SMALL_MODEL_FACTS = ["summary", "Rex", "user", "Yes", "Python"]
SMALL_MODEL_ITEMS = ["Summary", "Decision", "none", "N/A"]
PLACEHOLDERS = [
    "null",
    "unknown",
    "no decisions",
    "No decisions were made.",
    "nothing",
    "TBD",
    "text",
    "what",
    "action item",
    "Decision: none",
    "The user",
]


@pytest.mark.parametrize("text", SMALL_MODEL_FACTS + SMALL_MODEL_ITEMS + PLACEHOLDERS + ["AI"])
def test_a_bare_word_or_placeholder_is_no_memory(text):
    """Whatever the field (fact, decision, action item), it is rejected with a reason."""
    assert v.rejection(text)
    fact = ExtractedFact("other", "", text, 0.9, 0)
    assert v.validate_fact(fact, count=1) is None
    assert v.validate_decision(ExtractedDecision(what=text), count=1) is None
    assert v.validate_action(ExtractedAction(what=text), count=1) is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Python", "one word, not a statement"),
        ("Rex", "one word, not a statement"),
        ("N/A", "a placeholder, not content"),
        ("summary", "a placeholder, not content"),
        ("No action items yet", "a placeholder, not content"),
    ],
)
def test_the_reason_says_what_is_wrong(text, reason):
    assert v.rejection(text) == reason


@pytest.mark.parametrize(
    "text",
    [
        "Prefers Python",
        "Lives in Lisbon",
        "Deploy v2 on 2025-03-04",
        "Uses C",
        "The user is vegetarian.",
        "No deploys on Fridays",
        "Nothing but tea before noon",
        "我喜欢咖啡",
    ],
)
def test_a_statement_is_kept(text):
    """Two words with letters make a statement, numbers beside them or not; a sentence that
    starts like a placeholder is still one; a script without spaces needs no space."""
    assert v.rejection(text) == ""


def test_a_model_answer_keeps_its_statements_and_drops_its_bare_words():
    """The model's JSON answer, as a small model writes it: the one-word and placeholder items
    are dropped, each with its reason; the good facts of the same answer are kept."""
    answer = {
        "summary": "The user talked about their dog and their job.",
        "facts": [
            {"category": "personal", "subject": "dog", "text": "Rex", "importance": 0.9},
            {"category": "personal", "subject": "dog", "text": "The user's dog is called Rex."},
            {"category": "other", "subject": "summary", "text": "summary", "importance": 1.0},
            {"category": "work", "subject": "language", "text": "The user codes in Python."},
            {"category": "preference", "subject": "user", "text": "Python"},
        ],
        "decisions": [{"what": "Decision"}, {"what": "Adopt a second dog"}],
        "action_items": [{"what": "N/A"}, {"what": "Book the vet for Rex"}],
    }
    out = summariser.parse_extraction(answer, 2, today=TODAY)
    assert [f.text for f in out.facts] == [
        "The user's dog is called Rex.",
        "The user codes in Python.",
    ]
    assert [d.what for d in out.decisions] == ["Adopt a second dog"]
    assert [a.what for a in out.action_items] == ["Book the vet for Rex"]
    raw = Extraction(
        summary=answer["summary"],
        facts=[
            ExtractedFact(f["category"], f["subject"], f["text"], 0.5, 0) for f in answer["facts"]
        ],
        decisions=[ExtractedDecision(what=d["what"]) for d in answer["decisions"]],
        action_items=[ExtractedAction(what=a["what"]) for a in answer["action_items"]],
    )
    assert v.validate_extraction(raw, message_count=2, today=TODAY).dropped == [
        "fact 'Rex': one word, not a statement",
        "fact 'summary': a placeholder, not content",
        "fact 'Python': one word, not a statement",
        "decision 'Decision': a placeholder, not content",
        "action item 'N/A': a placeholder, not content",
    ]


def test_the_offline_extractor_says_a_bare_word_with_its_verb():
    """The offline extractor knows what framed a bare word: it keeps it as a statement
    ("We decided to relocate": "Decided to relocate"); a placeholder it still leaves out."""
    result = extract(
        [
            {"role": "user", "content": "We decided to relocate."},
            {"role": "user", "content": "We agreed on Kotlin."},
            {"role": "user", "content": "TODO: deploy"},
            {"role": "user", "content": "Decision: none"},
            {"role": "user", "content": "TODO: N/A"},
        ],
        today=TODAY,
    )
    assert [d.what for d in result.decisions] == ["Decided to relocate", "Agreed on Kotlin"]
    assert [a.what for a in result.action_items] == ["Task: Deploy"]
