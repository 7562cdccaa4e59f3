"""profiles.style: the pure-Python analyser and the running average."""

import subprocess
import sys

import pytest

from profiles.style import (
    HORIZON,
    METRICS,
    PRIOR_WEIGHT,
    PRIORS,
    StyleReading,
    analyse,
    blend,
    count_emoji,
)

# The three messages of the seed chapter's personalisation example.
SEED_CASUAL = "Hey there! Can you help me with Python? 😊"
SEED_TECHNICAL = "Could you explain the technical implementation of APIs?"
SEED_FORMAL = "Dear Sir, I require assistance with programming."


# -- the seed's examples ---------------------------------------------------------------------


def test_it_reads_the_seed_greeting_as_casual_with_emoji():
    """'Hey there! ... 😊' is casual, uses an emoji, and is only mildly technical."""
    reading = analyse(SEED_CASUAL)
    assert reading.formality < 0.35
    assert reading.emoji_use > 0.5
    assert reading.technical_level < 0.3


def test_it_reads_the_seed_api_question_as_the_most_technical():
    """'...technical implementation of APIs?' outranks the other two on technical level."""
    technical = analyse(SEED_TECHNICAL).technical_level
    assert technical >= 0.5
    assert technical > analyse(SEED_CASUAL).technical_level
    assert technical > analyse(SEED_FORMAL).technical_level


def test_it_reads_the_seed_letter_as_the_most_formal():
    """'Dear Sir, I require assistance...' is formal, and more formal than the polite question."""
    formal = analyse(SEED_FORMAL).formality
    assert formal > 0.8
    assert formal > analyse(SEED_TECHNICAL).formality > 0.5 > analyse(SEED_CASUAL).formality


def test_it_finds_no_emoji_in_the_seed_messages_without_one():
    """Only the first seed message has an emoji; the other two score 0."""
    assert analyse(SEED_TECHNICAL).emoji_use == 0
    assert analyse(SEED_FORMAL).emoji_use == 0


# -- formality -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "lol yeah gonna try that",
        "thx!! u rock",
        "hey, what's up? i'm stuck :)",
        "ok cool, btw idk why it's broken tbh",
    ],
)
def test_it_reads_slang_contractions_and_emoticons_as_casual(text):
    """Slang, chat abbreviations, contractions and emoticons push formality down."""
    assert analyse(text).formality < 0.35


@pytest.mark.parametrize(
    "text",
    [
        "Good morning. Could you please send me the figures? Thank you.",
        "To whom it may concern, I hereby request a copy of the invoice.",
        "Kindly advise regarding the next steps. Best regards, Maria",
    ],
)
def test_it_reads_salutations_and_politeness_as_formal(text):
    """Salutations, sign-offs and politeness push formality up."""
    assert analyse(text).formality > 0.65


def test_it_reads_a_plain_question_as_neutral():
    """No marker either way stays near the middle."""
    assert 0.4 <= analyse("How do I reverse a list in Python?").formality <= 0.6


def test_it_treats_curly_apostrophes_like_straight_ones():
    """I\u2019m (curly) and I'm (straight) are the same contraction."""
    curly = "I\u2019m sure it\u2019s fine"
    assert analyse(curly).formality == analyse("I'm sure it's fine").formality


# -- technical level -------------------------------------------------------------------------


def test_it_scores_code_and_identifiers_as_technical():
    """Inline code, identifiers, exception names and flags raise the technical level."""
    text = "I get a KeyError from `views.py` in get_object_or_404() with --settings=test"
    assert analyse(text).technical_level > 0.7


def test_it_scores_a_fenced_code_block_as_technical():
    """A fenced code block alone is strong evidence."""
    assert analyse("why?\n```python\nfor i in range(3): print(i)\n```").technical_level >= 0.6


def test_it_scores_advanced_vocabulary_above_everyday_words():
    """'polymorphism and dependency injection' beats 'my computer and a website'."""
    expert = analyse("Should I prefer polymorphism or dependency injection here?")
    novice = analyse("My computer shows a website I do not understand at all.")
    assert expert.technical_level > 0.6
    assert novice.technical_level < 0.3 < expert.technical_level


def test_it_does_not_learn_technical_level_from_a_short_thank_you():
    """'thanks, that worked!' says nothing about expertise: no technical reading."""
    reading = analyse("thanks, that worked!")
    assert reading.technical_level is None
    assert reading.formality is not None


def test_it_reads_a_long_non_technical_message_as_non_technical():
    """A long message with no technical signal is evidence of a low technical level."""
    text = "We walked along the river this morning and the light on the water was lovely."
    assert analyse(text).technical_level == 0


# -- verbosity -------------------------------------------------------------------------------


def test_it_scores_verbosity_by_length():
    """Longer prose scores higher, on a log scale; four words or fewer score 0."""
    short = analyse("ok thanks").verbosity
    medium = analyse(" ".join(["word"] * 30)).verbosity
    long = analyse(" ".join(["word"] * 300)).verbosity
    assert short == 0
    assert 0.3 < medium < 0.6
    assert long == 1


def test_it_adds_structure_to_verbosity():
    """Paragraphs and list items add a little to the same words."""
    flat = analyse("one two three four five six seven eight nine ten").verbosity
    listed = analyse("one two three\n\n- four five\n- six seven\n- eight nine ten").verbosity
    assert listed > flat


def test_it_does_not_count_pasted_code_as_verbosity():
    """A short question with a long code block is a short message."""
    code = "\n".join(f"x_{i} = compute({i})" for i in range(100))
    reading = analyse(f"Why is this slow?\n```\n{code}\n```")
    assert reading.verbosity < 0.2


# -- emoji -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("no emoji here :)", 0),
        ("🎉", 1),
        ("🚀🔥", 2),
        ("👍🏽", 1),  # thumbs up with a skin tone: one emoji
        ("👨‍👩‍👧", 1),  # a zero-width-joined family: one emoji
        ("🇫🇷🇯🇵", 2),  # two flags
        ("❤️ ✅ ⭐ ☕", 4),  # dingbats and miscellaneous symbols
        ("🦀 🫠", 2),  # supplemental and extended-A pictographs
        ("© 2024 → café — naïve", 0),  # symbols and accents are not emoji
    ],
)
def test_it_counts_emoji_by_code_point_ranges(text, expected):
    """Emoji are found by Unicode range, one per sequence, not from a hard-coded list."""
    assert count_emoji(text) == expected


def test_it_scores_emoji_use_by_count():
    """0 emoji -> 0, 1 -> 0.6, 3 or more -> 1."""
    assert analyse("fine").emoji_use == 0
    assert analyse("fine 🙂").emoji_use == pytest.approx(0.6)
    assert analyse("fine 🙂🙂🙂🙂").emoji_use == 1


# -- general ---------------------------------------------------------------------------------


def test_it_returns_no_evidence_for_an_empty_message():
    """Blank text yields a reading with no metric at all."""
    reading = analyse("   \n ")
    assert reading == StyleReading()
    assert not reading.has_evidence


def test_it_rejects_text_that_is_not_a_string():
    """Bytes or None are a programming error, not an empty message."""
    with pytest.raises(TypeError):
        analyse(b"hello")


def test_it_keeps_every_score_between_0_and_1():
    """Whatever the input, every metric is None or in 0..1."""
    texts = [SEED_CASUAL, SEED_TECHNICAL, SEED_FORMAL, "!!!!", "😀" * 50, "a " * 5000, "```"]
    for text in texts:
        for value in analyse(text).as_dict().values():
            assert value is None or 0 <= value <= 1


def test_it_is_deterministic():
    """The same text always gives the same reading."""
    assert analyse(SEED_CASUAL) == analyse(SEED_CASUAL)


def test_it_imports_nothing_from_django():
    """profiles.style is a pure-Python engine."""
    code = "import sys, profiles.style; print(any(m.startswith('django') for m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


# -- the running average ---------------------------------------------------------------------


def test_one_reading_moves_a_metric_a_little():
    """From the prior, one extreme reading moves at most 1/(PRIOR_WEIGHT + 1) of the way."""
    moved = blend(0.5, 0, 1.0)
    assert moved == pytest.approx(0.5 + 0.5 / (PRIOR_WEIGHT + 1))
    assert moved < 0.6


def test_a_hundred_readings_move_a_metric_a_lot():
    """A hundred consistent readings bring a metric within 5% of them."""
    value = PRIORS["formality"]
    for count in range(100):
        value = blend(value, count, 1.0)
    assert value > 0.95


def test_the_running_average_is_the_mean_with_the_prior():
    """Until the horizon, the result is the prior-weighted mean of every reading."""
    readings = [0.2, 0.9, 0.4, 0.7]
    value = 0.5
    for count, reading in enumerate(readings):
        value = blend(value, count, reading)
    expected = (0.5 * PRIOR_WEIGHT + sum(readings)) / (PRIOR_WEIGHT + len(readings))
    assert value == pytest.approx(expected)


def test_after_the_horizon_new_readings_still_count():
    """Past HORIZON messages the weight of a new reading stops shrinking."""
    assert blend(0.0, HORIZON * 10, 1.0) == pytest.approx(1 / (PRIOR_WEIGHT + HORIZON + 1))


def test_the_metrics_and_their_priors_agree():
    """Every metric has a prior in 0..1."""
    assert set(PRIORS) == set(METRICS)
    assert all(0 <= PRIORS[name] <= 1 for name in METRICS)
