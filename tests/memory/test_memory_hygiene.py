"""Memory hygiene: only the user's own words are remembered, each fact once, told at once."""

import asyncio
import datetime

import pytest
from asgiref.sync import sync_to_async

from chat.models import Message
from chat.services import conversation_create
from llm import OFFLINE_MODEL
from llm import providers as llm
from memory import services
from memory.extraction import extract
from memory.models import Fact
from memory.prompts import MEMORY_HEADER
from tests.chat.helpers import connected, turn_end

TODAY = datetime.date(2026, 1, 1)


@pytest.fixture
def offline(monkeypatch, settings):
    settings.OPENAI_API_KEY = ""
    monkeypatch.setattr(llm, "OFFLINE_WORD_DELAY", 0)


@sync_to_async
def active_facts(user):
    return list(Fact.objects.filter(user=user, status="active").values_list("text", flat=True))


@sync_to_async
def last_report(conversation_id):
    message = Message.objects.filter(conversation_id=conversation_id, role="assistant")
    return message.latest("id").context_report


async def wait_for_facts(user, tries=50):
    for _ in range(tries):
        facts = await active_facts(user)
        if facts:
            return facts
        await asyncio.sleep(0.05)
    return []


@pytest.mark.django_db(transaction=True)
async def test_a_personal_statement_is_a_fact_within_the_same_turn(alice, offline):
    """No summary run needed: the light extractor remembers it after the reply."""
    conversation = await sync_to_async(conversation_create)(user=alice)
    socket = await connected(alice, conversation.pk)
    await turn_end(socket, "By the way, my daughter's name is Ada.")
    facts = await wait_for_facts(alice)
    await socket.disconnect()
    assert any("Ada" in fact for fact in facts)


@pytest.mark.django_db(transaction=True)
async def test_a_new_conversation_sees_the_users_turns_and_none_of_the_apps_replies(alice, offline):
    """Facts among unrelated talk; asked later, the memory lists no offline reply."""
    first = await sync_to_async(conversation_create)(user=alice, title="Monday")
    socket = await connected(alice, first.pk)
    await turn_end(socket, "I live in Lyon, near the old town.")
    await turn_end(socket, "Unrelated: what's a good stretch for the back?")
    await socket.disconnect()

    second = await sync_to_async(conversation_create)(user=alice)
    socket = await connected(alice, second.pk)
    await turn_end(socket, "Which city do I live in?")
    await socket.disconnect()
    report = await last_report(second.pk)
    offline_ids = await sync_to_async(set)(
        Message.objects.filter(model=OFFLINE_MODEL).values_list("id", flat=True)
    )
    shown = {i for memory in report["memories"] for i in memory["message_ids"]}
    assert any("Lyon" in memory["text"] for memory in report["memories"])
    assert not shown & offline_ids


def test_offline_replies_and_quoted_memory_blocks_are_not_extracted():
    """The extractor reads only what the user (or a real model) said."""
    messages = [
        {"role": "assistant", "content": "My name is Offline Bot.", "model": OFFLINE_MODEL},
        {"role": "assistant", "content": f"{MEMORY_HEADER}\n<memory>\nI live in Oslo.</memory>"},
        {"role": "user", "content": "I live in Lyon."},
    ]
    facts = [f.text for f in extract(messages, today=TODAY).facts]
    assert facts == ["The user lives in Lyon."]


@pytest.mark.django_db
def test_a_resummarise_does_not_count_a_fact_as_told_again(alice):
    """The same message read twice is one mention; a new message saying it again is two."""
    conversation = conversation_create(user=alice)
    message = Message.objects.create(
        conversation=conversation, role="user", content="I live in Lyon."
    )
    services.memories_from_turn(conversation=conversation, message=message)
    services.memories_from_turn(conversation=conversation, message=message)
    assert Fact.objects.get(user=alice).mentions == 1
    again = Message.objects.create(
        conversation=conversation, role="user", content="I live in Lyon."
    )
    services.memories_from_turn(conversation=conversation, message=again)
    assert Fact.objects.get(user=alice).mentions == 2


def test_a_fact_or_decision_is_one_clause_never_glued_to_the_next():
    """Each statement is its own memory."""
    found = extract(
        [
            {
                "role": "user",
                "content": "We decided to use Postgres. The deadline is Friday. "
                "I work at Acme and my wife is called Jo; I love hiking.",
            }
        ],
        today=TODAY,
    )
    assert [d.what for d in found.decisions] == ["Use Postgres"]
    texts = [f.text for f in found.facts]
    assert "The user works at Acme." in texts and "The user's wife's name is Jo." in texts
    assert all(text.count(". ") == 0 for text in texts)


@pytest.mark.django_db
def test_the_light_extractor_keeps_every_fact_of_a_compound_sentence(alice):
    """Run after the reply, on the user's message alone: four facts from two sentences."""
    conversation = conversation_create(user=alice)
    message = Message.objects.create(
        conversation=conversation,
        role="user",
        content="Hi! My name is Alice, I live in Lyon and my daughter's name is Ada. "
        "I work as a nurse.",
    )
    counts = services.memories_from_turn(conversation=conversation, message=message)
    facts = dict(Fact.objects.filter(user=alice).values_list("subject", "text"))
    assert counts["created"] == 4
    assert facts == {
        "name": "The user's name is Alice.",
        "location": "The user lives in Lyon.",
        "daughters name": "The user's daughter's name is Ada.",
        "job": "The user works as a nurse.",
    }


@sync_to_async
def memory_page(user, query=""):
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client.get("/memory/", {"q": query} if query else {}).content.decode()


@sync_to_async
def add_by_hand(user, kind, text):
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client.post("/memory/add/", {"kind": kind, "text": text, "category": "personal"})


@pytest.mark.django_db(transaction=True)
async def test_a_new_user_sees_every_fact_the_decision_and_the_task_and_a_memory_added_by_hand(
    alice, offline
):
    """Tried as a new user: compound sentences in ordinary talk; the Memory page lists every
    statement at once, and a memory typed there is in the next reply's context."""
    first = await sync_to_async(conversation_create)(user=alice, title="Monday")
    socket = await connected(alice, first.pk)
    await turn_end(
        socket,
        "Hi! My name is Alice, I live in Lyon and my daughter's name is Ada. I work as a nurse.",
    )
    await turn_end(
        socket, "We decided to go to Porto in August, and I need to fix the fence by Friday."
    )
    await socket.disconnect()
    for _ in range(50):
        page = await memory_page(alice)
        if "Fix the fence" in page:
            break
        await asyncio.sleep(0.05)
    for shown in ("Alice", "Lyon", "Ada", "nurse", "Go to Porto in August", "Fix the fence"):
        assert shown in page, shown
    response = await add_by_hand(alice, "fact", "I am allergic to peanuts.")
    assert response.status_code == 302
    assert "allergic to peanuts" in await memory_page(alice, "peanuts allergy")

    second = await sync_to_async(conversation_create)(user=alice, title="Dinner")
    socket = await connected(alice, second.pk)
    await turn_end(socket, "Any ideas for a dinner with peanuts?")
    await socket.disconnect()
    report = await last_report(second.pk)
    assert any("allergic to peanuts" in memory["text"] for memory in report["memories"])
