"""The part of a turn's request before the history stays byte-identical while the learned
style moves (issue 42): the 25-turn conversation on llama.cpp lost its cached prefix on the
three turns where a running average crossed its band and a style line came or went in the
preferences block, which was sent before the history. The learned style is now a block of its
own after the history (``memory.context.PER_TURN_BLOCKS``); what the user stated stays before
it and changes only when they change it."""

import json
from itertools import pairwise

import pytest

from chat.services import conversation_create, message_create
from llm.messages import shape_messages
from memory.context import build
from profiles.services import profile_observe_message, profile_update_preferences
from tests.support.trip_turns import TRIP_TURNS

pytestmark = pytest.mark.django_db

# Short, quick messages (as a user types them in a chat): the learned lines appear one by one
# as each metric gets its messages and crosses its band, and "Length" comes and goes around
# its threshold.
MESSAGES = TRIP_TURNS[:20]
QUICK_REPLY_SECONDS = 2.0  # the gap since the reply: a quick exchange (the pace's evidence)


def talk(user, conversation, messages):
    """Each turn as the chat has it: the message stored, the request built, the reply stored,
    then the user's message learned from (the after-turn batch's style update)."""
    built = []
    for n, text in enumerate(messages):
        stored = message_create(conversation=conversation, role="user", content=text)
        built.append(build(conversation=conversation, user_text=text, user_message=stored))
        message_create(conversation=conversation, role="assistant", content=f"Answer {n}.")
        gap = None if n == 0 else QUICK_REPLY_SECONDS
        profile_observe_message(user=user, text=text, gap_seconds=gap)
    return built


def style_of(built) -> str:
    style = [m["content"] for m in built.messages if m["content"].startswith("How this user")]
    return style[0] if style else ""


@pytest.mark.parametrize("shape", ["single", "separate"])
def test_the_prefix_before_the_history_holds_while_the_style_moves(alice, shape):
    profile_update_preferences(user=alice, preferences={"response_format": "bullets"})
    other = conversation_create(user=alice, title="Family")
    message_create(conversation=other, role="user", content="My sister Ana lives in Porto.")
    conversation = conversation_create(user=alice, title="Visiting Ana")
    turns = talk(alice, conversation, MESSAGES)

    styles = [style_of(built) for built in turns]
    changes = sum(1 for a, b in pairwise(styles) if a != b)
    assert changes >= 3, styles  # the style moved between turns, a line at a time
    assert "Length: the user writes short" in "".join(styles)

    for before, after in pairwise(turns):
        one, two = (shape_messages(b.messages, shape=shape) for b in (before, after))
        # Everything up to the previous request's history end: system blocks and history.
        names = [b["name"] for b in before.report["blocks"]]
        head = 1 if shape == "single" else names.index("history")
        held = head + len(before.report["messages"])
        assert json.dumps(two[:held]) == json.dumps(one[:held])
        names = [b["name"] for b in after.report["blocks"]]
        assert names.index("preferences") < names.index("history")
        if style_of(after):
            assert names.index("history") < names.index("style") < names.index("message")
    leading = shape_messages(turns[-1].messages, shape="single")[0]["content"]
    assert "Format: prefer bullet points." in leading and "Pace:" not in leading
    assert "Pace: the user writes in quick short exchanges" in style_of(turns[-1])


def test_a_preference_the_user_changes_is_sent_at_once(alice):
    """The prefix changes when the user changes something: the stated block is read on
    every turn."""
    conversation = conversation_create(user=alice, title="Trip")
    first = talk(alice, conversation, MESSAGES[:1])[0]
    profile_update_preferences(user=alice, preferences={"tone": "formal"})
    second = talk(alice, conversation, MESSAGES[1:2])[0]
    one, two = (shape_messages(b.messages, shape="single")[0]["content"] for b in (first, second))
    assert "Tone: formal" not in one and "Tone: formal" in two
