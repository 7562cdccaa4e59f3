"""llm.pinning: on a llama.cpp server of several slots, a conversation's turns go to a slot of
their own and background requests (summaries, titles) to another, so that a summary never
evicts the conversation's cached prefix; no other server gets the field."""

import asyncio
from datetime import date

import pytest

from chat import titles
from chat.services import conversation_create
from llm.providers import OpenAIProvider
from llm.slots import background_slot
from memory import context, summariser
from tests.memory.test_llm_memory import extraction_json
from tests.support.fake_llm import Behaviour, FakeLLM

pytestmark = pytest.mark.django_db

MESSAGES = [{"role": "user", "content": "I'm Sam and I like tea."}]


@pytest.fixture
def fake_llm(fake_llm):
    """The shared model server (tests/memory/conftest.py), answering summary runs."""
    fake_llm.behaviour.json_reply = extraction_json
    return fake_llm


def llama_cpp(fake, slots):
    fake.behaviour.states_context, fake.behaviour.n_ctx = "llama.cpp", 8192
    fake.behaviour.slots = slots


def turn_body(fake, conversation) -> dict:
    """The body of one chat turn's request, as the turn sends it."""
    built = context.build(conversation=conversation, user_text="Hello")
    provider = OpenAIProvider()

    async def stream():
        reply = await provider.stream(
            built.messages, model="fake-large", server_fields=built.server_fields
        )
        return "".join([delta async for delta in reply])

    asyncio.run(stream())
    return fake.chat_requests()[-1]["body"]


def summary_body(fake) -> dict:
    summariser.summarise(
        previous_summary="", messages=MESSAGES, model="fake-large", today=date(2026, 12, 7)
    )
    return fake.chat_requests()[-1]["body"]


def title_body(fake) -> dict:
    titles.model_title("Tea or coffee?", "Tea.", "fake-large")
    return fake.chat_requests()[-1]["body"]


def test_the_chat_and_the_summaries_use_different_slots(alice, fake_llm):
    """Two slots: every conversation on slot 0, every background request on slot 1."""
    llama_cpp(fake_llm, 2)
    first, second = conversation_create(user=alice), conversation_create(user=alice)
    assert turn_body(fake_llm, first)["id_slot"] == 0
    assert turn_body(fake_llm, second)["id_slot"] == 0
    assert summary_body(fake_llm)["id_slot"] == 1
    assert title_body(fake_llm)["id_slot"] == 1


def test_a_conversation_keeps_its_slot_and_each_lease_has_its_own(alice, fake_llm, settings):
    """Four slots, two background leases: conversations spread over slots 0-1 by id, each on
    the same slot every turn; the leases on slots 2 and 3."""
    llama_cpp(fake_llm, 4)
    settings.BACKGROUND_MODEL_CONCURRENCY = 2
    conversations = [conversation_create(user=alice) for _ in range(2)]
    slots = [turn_body(fake_llm, c)["id_slot"] for c in conversations]
    assert sorted(slots) == [0, 1]
    assert [turn_body(fake_llm, c)["id_slot"] for c in conversations] == slots
    with background_slot():  # lease 0 taken: the summary holds lease 1
        assert summary_body(fake_llm)["id_slot"] == 3
    assert summary_body(fake_llm)["id_slot"] == 2


@pytest.mark.parametrize("style", ["", "vllm", "ollama"])
def test_a_server_that_states_no_slots_gets_no_field(alice, fake_llm, style):
    """OpenAI's API refuses a field it does not know; vLLM and Ollama have no such slots."""
    fake_llm.behaviour.states_context, fake_llm.behaviour.n_ctx = style, 8192
    fake_llm.behaviour.slots = 2
    conversation = conversation_create(user=alice)
    assert "id_slot" not in turn_body(fake_llm, conversation)
    assert "id_slot" not in summary_body(fake_llm)
    assert "id_slot" not in title_body(fake_llm)


def test_a_one_slot_server_gets_no_field(alice, fake_llm):
    """One slot: nothing to keep apart (the pacing of summary runs is what protects it)."""
    llama_cpp(fake_llm, 1)
    assert "id_slot" not in turn_body(fake_llm, conversation_create(user=alice))
    assert "id_slot" not in summary_body(fake_llm)


def test_a_summary_server_of_its_own_leaves_the_chat_unpinned(alice, fake_llm, settings):
    """Background requests elsewhere: the chat server's slots are all the chat's."""
    llama_cpp(fake_llm, 2)
    other = FakeLLM(Behaviour(json_reply=extraction_json)).start()
    try:
        settings.SUMMARY_BASE_URL = other.base_url
        assert "id_slot" not in turn_body(fake_llm, conversation_create(user=alice))
        assert "id_slot" not in summary_body(other)
    finally:
        other.stop()


def test_the_slot_count_is_asked_once(alice, fake_llm):
    """Cached as the context size is: later turns ask the server nothing more."""
    llama_cpp(fake_llm, 2)
    conversation = conversation_create(user=alice)
    turn_body(fake_llm, conversation)
    asked = [r["path"] for r in fake_llm.requests].count("/props")
    for _ in range(2):
        turn_body(fake_llm, conversation)
    assert [r["path"] for r in fake_llm.requests].count("/props") == asked
