"""The request in the order a server can cache (issue 42, item 1): system prompt, preferences,
summary, history, then the per-turn memory block last before the new message, still quoted;
the part before it byte-identical from one turn to the next."""

import json

import pytest

from chat.services import conversation_create, message_create
from llm.messages import SECTION_SEPARATOR, alternates, shape_messages
from memory.context import build
from memory.models import Summary
from profiles.expertise import domains_set

pytestmark = pytest.mark.django_db


def test_a_system_block_after_the_turns_opens_the_next_user_turn():
    messages = [
        {"role": "system", "content": "PROMPT"},
        {"role": "system", "content": "SUMMARY"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "answer"},
        {"role": "system", "content": "MEMORY"},
        {"role": "user", "content": "new message"},
    ]
    single = shape_messages(messages, shape="single")
    assert single[0] == {"role": "system", "content": SECTION_SEPARATOR.join(["PROMPT", "SUMMARY"])}
    assert single[-1] == {"role": "user", "content": "MEMORY\n\nnew message"}
    assert alternates(single)
    assert shape_messages(messages, shape="separate") == messages  # OpenAI takes it there


@pytest.fixture
def talk(alice):
    """A conversation with a summary, and a fact in another conversation that each turn's
    memory search finds (the memory block changes with the question)."""
    other = conversation_create(user=alice, title="Family")
    message_create(conversation=other, role="user", content="My sister Ana lives in Porto.")
    conversation = conversation_create(user=alice, title="Trip")
    first = message_create(conversation=conversation, role="user", content="Plan a trip.")
    message_create(conversation=conversation, role="assistant", content="Where to?")
    Summary.objects.create(
        conversation=conversation,
        version=1,
        is_current=True,
        text="The user plans a trip.",
        covered_through=first.pk - 1,
    )
    return conversation


def turn(conversation, text, answer):
    """Build the turn (the new message stored first, as the chat does), then store the reply."""
    stored = message_create(conversation=conversation, role="user", content=text)
    built = build(conversation=conversation, user_text=text, user_message=stored)
    message_create(conversation=conversation, role="assistant", content=answer)
    return built


def test_the_memory_block_is_last_before_the_new_message(talk):
    built = turn(talk, "Where does my sister Ana live?", "In Porto.")
    names = [b["name"] for b in built.report["blocks"]]
    assert names == ["system", "summary", "history", "memory", "message"]
    roles = [m["role"] for m in built.messages]
    assert roles == ["system", "system", "user", "assistant", "system", "user"]
    memory = built.messages[-2]["content"]
    assert memory.startswith("Long-term memory about this user") and "<memory>" in memory
    assert "<memory>" not in "".join(m["content"] for m in built.messages[:-2])


@pytest.mark.parametrize("shape", ["single", "separate"])
def test_the_prefix_is_byte_identical_between_turns(talk, shape):
    """Turn 2's request begins with turn 1's, all but its last user turn (memory + message),
    byte for byte, as the server's prompt cache compares it."""
    one = shape_messages(turn(talk, "Does Ana live in Porto?", "Yes.").messages, shape=shape)
    two = shape_messages(turn(talk, "Is my sister Ana in Porto?", "Yes.").messages, shape=shape)
    cut = len(one) - (1 if shape == "single" else 2)  # separate: the memory block stands alone
    assert "<memory>" in json.dumps(one[cut:]) and "<memory>" in json.dumps(two[cut:])
    assert json.dumps(two[:cut]) == json.dumps(one[:cut])
    assert two[cut] == {"role": "user", "content": "Does Ana live in Porto?"}


@pytest.mark.parametrize("shape", ["single", "separate"])
def test_the_level_in_the_messages_subject_is_sent_after_the_history(talk, shape):
    """The expertise block is chosen for the message (a subject named, or none): sent after
    the history with the memory, the prefix stays the same when the subject changes."""
    domains_set(user=talk.user, settings={"cooking": "beginner", "finance": "expert"})
    cooking = turn(talk, "How long do I boil rice? My sister Ana cooks it.", "12 minutes.")
    names = [b["name"] for b in cooking.report["blocks"]]
    assert names == ["system", "summary", "history", "expertise", "memory", "message"]
    finance = turn(talk, "Is an ETF's expense ratio worth it? Ana asked.", "It depends.")
    assert "new to cooking" in cooking.report["expertise"]["text"]
    assert "finance" in finance.report["expertise"]["text"]
    one = shape_messages(cooking.messages, shape=shape)
    two = shape_messages(finance.messages, shape=shape)
    cut = len(one) - (1 if shape == "single" else 3)  # separate: expertise, memory, message
    assert json.dumps(two[:cut]) == json.dumps(one[:cut])
    assert two[cut]["content"] == "How long do I boil rice? My sister Ana cooks it."
