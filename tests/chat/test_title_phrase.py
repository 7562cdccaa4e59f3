"""Offline titles read as a person would title the question (chat.title_phrase): its subject,
without the question words and fillers, cut at a word boundary, never ending on a small word."""

import time

import pytest

from chat.title_phrase import MAX_WORDS, WHOLE_WORDS, question_title


@pytest.mark.parametrize(
    ("question", "title"),
    [
        (
            "How do I configure an nginx reverse proxy in front of a Django app that uses "
            "websockets?",
            "Configure an nginx reverse proxy",
        ),
        (
            "What's the best way to learn Spanish quickly as an adult?",
            "Learn Spanish quickly as an adult",
        ),
        (
            "Can you help me plan a 3-day trip to Lisbon with two kids?",
            "Plan a 3-day trip to Lisbon",
        ),
        ("Hi! What is the difference between TCP and UDP?", "Difference between TCP and UDP"),
        ("I need a recipe for gluten-free pancakes", "Recipe for gluten-free pancakes"),
        (
            "Could you please write a cover letter for a junior data analyst job?",
            "Write a cover letter",
        ),
        ("Is it possible to run Postgres on a Raspberry Pi?", "Run Postgres on a Raspberry Pi"),
        ("Write a haiku about autumn rain", "Write a haiku about autumn rain"),
        (
            "I was wondering if you could tell me about the history of the Roman Empire",
            "History of the Roman Empire",
        ),
        (
            "Good morning! I want to learn how to bake sourdough bread at home.",
            "Bake sourdough bread at home",
        ),
        ("We love pastries and trams. Where should we go in Lisbon?", "Where to go in Lisbon"),
        (
            "My daughter is allergic to peanuts. What snacks can I pack for school?",
            "What snacks to pack for school",
        ),
        ("What do I need to bring to a job interview?", "What to bring to a job interview"),
        ("Which laptop should I buy for programming?", "Which laptop to buy for programming"),
        (
            "What are some good books on machine learning for beginners?",
            "Good books on machine learning for beginners",
        ),
        ("Do I need a visa to visit Japan from Brazil?", "Visa to visit Japan from Brazil"),
    ],
)
def test_a_question_is_titled_by_its_subject(question, title):
    assert question_title(question) == title


@pytest.mark.parametrize("said", ["hello", "Hi!", "thanks", "ok", "Hey there, how are you?", "lol"])
def test_a_greeting_has_no_title(said):
    assert question_title(said) == ""


def test_a_long_subject_is_cut_at_a_word_not_on_a_small_one():
    title = question_title(
        "Summarise the main arguments for and against nuclear power in European energy policy"
    )
    words = title.split()
    assert len(words) <= MAX_WORDS < WHOLE_WORDS
    assert words[-1].lower() not in {"for", "and", "against", "in", "the"}
    assert title[0].isupper()


@pytest.mark.parametrize("question", ["What should I do?", "What can I do?", "Who is he?"])
def test_a_question_with_no_subject_has_no_title(question):
    """Not a question word or a pronoun alone: the key words' title is tried instead."""
    assert question_title(question) == ""


@pytest.mark.parametrize("filler", [" ", "\t ", "! "])
def test_a_message_padded_with_thousands_of_blanks_is_titled_at_once(filler):
    """The longest message (16,000 characters) of blanks between words: the patterns read
    the start only, with each run of blanks as one space (unbounded, 100 s of CPU)."""
    question = "Plan a" + filler * (16000 // len(filler)) + "trip to Lisbon"
    started = time.process_time()
    question_title(question)
    assert question_title("Plan a    trip to   Lisbon") == "Plan a trip to Lisbon"
    assert time.process_time() - started < 1.0
