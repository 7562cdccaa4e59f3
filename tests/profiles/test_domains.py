"""profiles.domains: domains recognised offline, evidence of proficiency, the running level."""

import pytest

from profiles.domains import (
    DOMAIN_SLUGS,
    MIN_EVIDENCE,
    OTHER,
    STRONG_WEIGHT,
    analyse_domains,
    estimate,
    level_for,
    main_domains,
)


def reading(text, slug):
    return analyse_domains(text)[slug]


def test_the_list_is_fixed_and_ends_with_other():
    assert DOMAIN_SLUGS[-1] == OTHER
    assert {"programming", "cooking", "finance", "medicine", "law", "music"} <= set(DOMAIN_SLUGS)


def test_a_message_without_a_domain_says_nothing():
    assert analyse_domains("hi, thanks a lot!") == {}
    assert main_domains({}) == []


@pytest.mark.parametrize(
    ("text", "slug", "level"),
    [
        ("I've never cooked anything, how long do I boil pasta?", "cooking", "beginner"),
        ("I'm new to investing, where do my savings go?", "finance", "beginner"),
        (
            "I'm a doctor; how do you explain a rising creatinine to a patient?",
            "medicine",
            "expert",
        ),
        ("I work as a lawyer and review contracts all day.", "law", "expert"),
        ("I've been coding for ten years.", "programming", "expert"),
        ("I know the basics of music but chords confuse me.", "music", "intermediate"),
    ],
)
def test_self_descriptions_are_strong_evidence(text, slug, level):
    found = reading(text, slug)
    assert found.weight == STRONG_WEIGHT
    assert level in found.reason
    assert level_for(estimate(0.5, 0, found.reading, found.weight), found.weight) == level


def test_not_a_self_description():
    assert analyse_domains("I'm not a doctor, is this fever serious?")["medicine"].weight == 1


def test_jargon_reads_high_and_a_definitional_question_low():
    expert = reading(
        "When I deglaze the pan after searing, the fond burns: lower the heat first?", "cooking"
    )
    assert expert.reading >= 0.85 and "jargon" in expert.reason
    novice = reading("What is a roux? The recipe says to make one.", "cooking")
    assert novice.reading <= 0.25 and "beginner" in novice.reason


def test_the_term_asked_about_is_not_counted_as_jargon_used():
    assert reading("What does amortization mean on my loan?", "finance").reading < 0.4


def test_two_domains_in_one_message():
    found = analyse_domains("I'm a software engineer but I've never cooked; what is a roux?")
    assert found["programming"].reading > 0.9
    assert found["cooking"].reading < 0.1
    assert set(main_domains(found)) == {"programming", "cooking"}


def test_pasted_code_logs_and_quotes_are_not_the_users_vocabulary():
    paste = (
        "```\nasync def f():\n    await asyncio.gather(coroutine, mutex, deadlock)\n```\n"
        "> the ETF's expense ratio and dividend yield\n"
        "2024-01-01 12:00:00 ERROR kubernetes pod deadlock\n"
        "can you help?"
    )
    found = analyse_domains(paste)
    assert "finance" not in found
    # The code says the message is about programming, not how well the user knows it.
    assert found["programming"].reading is None


def test_a_short_mention_is_no_evidence_of_level():
    found = reading("cooking tonight", "cooking")
    assert found.reading is None and found.weight == 0


def test_a_level_needs_enough_evidence_and_moves_with_hysteresis():
    assert level_for(0.9, MIN_EVIDENCE - 1) == ""
    assert level_for(0.9, MIN_EVIDENCE) == "expert"
    # Just under the expert line: an expert stays one, an unknown level is intermediate.
    assert level_for(0.63, 10, "expert") == "expert"
    assert level_for(0.63, 10, "") == "intermediate"
    assert level_for(0.5, 10, "expert") == "intermediate"


def test_the_estimate_is_a_running_mean_from_the_prior():
    score = 0.5
    for evidence in range(5):
        score = estimate(score, evidence, 1.0)
    assert score == pytest.approx((0.5 + 5) / 6)
    with pytest.raises(TypeError):
        analyse_domains(None)


@pytest.mark.parametrize(
    "text",
    [
        "I will send it tomorrow, that is fine with me, thanks for the notes.",
        "What are my options for the trip? Zoom in on the big picture.",
        "I'm a resident of Paris and I work in Italy.",
    ],
)
def test_everyday_words_name_no_subject(text):
    assert analyse_domains(text) == {}


def test_as_a_is_a_self_description_only_at_a_sentence_start():
    assert analyse_domains("As a nurse, I see sepsis often.")["medicine"].weight == STRONG_WEIGHT
    assert analyse_domains("Buy tools such as a chef knife and a pan.")["cooking"].weight == 1
