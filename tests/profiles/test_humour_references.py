"""Humour and the kinds of references: read per message, learned, and told only when clear."""

import pytest

from profiles.instructions import build_instructions
from profiles.selectors import profile_get
from profiles.services import profile_observe_message, profile_update_preferences
from profiles.style import analyse

JOKES = [
    "haha that worked, famous last words though",
    "lol ok, and what could possibly go wrong if I deploy on a Friday?",
    "no pun intended, but the bread recipe really rose to the occasion ;)",
    "just kidding, I'll read the docs first. haha",
    "plot twist: the bug was in my own test all along lol",
]
POP = [
    "This meeting felt like the Star Wars prequels, long and full of trade negotiations.",
    "My code base is like Hogwarts: the stairs move when you are not looking.",
    "One does not simply refactor a legacy module on a Monday morning, right?",
    "Explain it like Gandalf would explain it to a hobbit, please.",
    "This bug is the Thanos of bugs, it wiped out half of my tests today.",
]
PLAIN = [
    "Please summarise the attached report in three short paragraphs for me.",
    "What is the capital of Australia, and when was it chosen as the capital?",
    "Can you list the steps to renew a passport in France next month?",
    "Compare two options for storing backups of family photographs at home.",
    "Write a short polite email declining a meeting invitation for next Tuesday.",
]


def test_a_message_is_read_for_humour_and_references():
    joke = analyse("haha that worked, famous last words though")
    assert joke.humour >= 0.8
    assert analyse("Please summarise the attached report for me today.").humour == 0.0
    assert analyse("ok").humour is None
    # Emoji alone are not humour (emoji_use is).
    assert analyse("Thanks for the detailed answer 😀 it helps").humour == 0.0
    work = analyse("Per our Q3 roadmap, the stakeholders need the KPI report.")
    assert work.references_professional == 1.0 and work.references_pop == 0.0
    study = analyse("Studies show, as Kant argued long ago, that this holds.")
    assert study.references_academic == 1.0
    assert analyse("hi there").references_pop is None


@pytest.mark.django_db
def test_humour_and_pop_references_reach_the_instructions(alice):
    for text in JOKES + POP:
        profile_observe_message(user=alice, text=text)
    text = build_instructions(profile_get(user=alice)).text
    assert "Humour: the user jokes" in text
    assert "popular culture" in text
    assert "business and work" not in text and "research and scholars" not in text


@pytest.mark.django_db
def test_no_jokes_and_no_references_say_nothing(alice):
    for text in PLAIN:
        profile_observe_message(user=alice, text=text)
    block = build_instructions(profile_get(user=alice))
    assert "Humour" not in block.text and "References:" not in block.text
    reasons = {item["name"]: item["reason"] for item in block.skipped}
    assert reasons["humour"].startswith("not frequent enough")
    assert reasons["references_pop"].startswith("not frequent enough")


@pytest.mark.django_db
def test_a_chosen_tone_decides_humour(alice):
    for text in JOKES:
        profile_observe_message(user=alice, text=text)
    profile_update_preferences(user=alice, preferences={"tone": "formal"})
    block = build_instructions(profile_get(user=alice))
    assert "Humour" not in block.text
    reasons = {item["name"]: item["reason"] for item in block.skipped}
    assert "tone preference" in reasons["humour"]
