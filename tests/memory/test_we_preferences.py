"""The offline extractor hears a taste said for a group ("We love pastries and trams"), as it
hears "I love ...", and still keeps out what is no taste: a greeting, a question, praise for
the assistant, a reaction to its answer, an echoed system prompt."""

import datetime

import pytest

from memory.extraction import extract, extract_turn
from memory.prompts import DEFAULT_SYSTEM_PROMPT

TODAY = datetime.date(2026, 12, 7)


def facts_of(text: str, role: str = "user") -> list[str]:
    found = extract_turn([{"role": role, "content": text}], today=TODAY)
    return [fact.text for fact in found.facts]


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("We love pastries and trams.", "The user and their group love pastries and trams."),
        ("Hi! We love pastries and trams.", "The user and their group love pastries and trams."),
        ("we really enjoy hiking in Italy", "The user and their group enjoy hiking in Italy."),
        ("We prefer trains over planes.", "The user and their group prefer trains over planes."),
        ("We don't like spicy food.", "The user and their group do not like spicy food."),
        ("We hate waiting in queues.", "The user and their group hate waiting in queues."),
        ("We're big fans of jazz.", "The user and their group are big fans of jazz."),
        ("We are not into museums.", "The user and their group are not into museums."),
        ("I love pastries and trams.", "The user loves pastries and trams."),
    ],
)
def test_a_taste_said_for_a_group_is_a_preference(said, kept):
    assert facts_of(said) == [kept]


def test_two_tastes_in_one_sentence_are_two_preferences():
    assert facts_of("We love pastries and trams, and we hate rain.") == [
        "The user and their group love pastries and trams.",
        "The user and their group hate rain.",
    ]


@pytest.mark.parametrize(
    "said",
    [
        "Hi! We love you!",
        "Hello, I love you guys",
        "We like it.",
        "We love your app.",
        "We love that idea!",
        "I love that suggestion.",
        "Do we like trams?",
        "Why do we love pastries so much?",
        "We would like to know how trams work.",
        "We'd love to visit Lisbon.",
        "We hate to bother you, but can you help?",
        "We like to think we are good cooks.",
        "If we like the hotel we will book it.",
        "We am into jazz.",
    ],
)
def test_what_is_no_taste_is_not_remembered(said):
    assert facts_of(said) == []


def test_a_reply_or_an_echoed_system_prompt_teaches_nothing():
    assert facts_of("We love pastries and trams.", role="assistant") == []
    echoed = DEFAULT_SYSTEM_PROMPT + " We love long answers with emojis."
    messages = [{"role": "assistant", "content": echoed}]
    assert extract(messages, today=TODAY).facts == []


def test_a_style_wish_for_a_group_names_the_answers_subject():
    (fact,) = extract_turn(
        [{"role": "user", "content": "We prefer short answers."}], today=TODAY
    ).facts
    assert fact.subject == "answer length"
