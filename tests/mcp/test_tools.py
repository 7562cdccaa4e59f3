"""The MCP tools through the mcp SDK's own client against the real ASGI app: a user's memory
listed, searched, added to (in their memory mode), corrected and forgotten by their key, each
change in the memory's history as made through MCP and shown so on their Memory page."""

import pytest
from asgiref.sync import sync_to_async
from django.test import Client
from django.urls import reverse

from chat.services import conversation_create, message_create
from memory.models import ActionItem, Decision, Fact, MemoryState
from memory.services import fact_remember
from profiles.services import profile_set_memory_mode
from projects.models import Project
from tests.mcp.conftest import call, client, refusal, rows

pytestmark = pytest.mark.django_db(transaction=True)

TOOLS = {"search_memory", "list_memories", "remember", "update_memory", "forget_memory"}


@sync_to_async
def learned_fact(user, text="I live in Lyon with my two cats.", title="Moving house"):
    """A fact learned in a conversation, from one of its messages."""
    conversation = conversation_create(user=user, title=title)
    message = message_create(conversation=conversation, role="user", content=text)
    fact_remember(
        user=user,
        conversation=conversation,
        category="personal",
        subject="home town",
        text=text,
        importance=0.7,
        source_message=message,
    )
    return Fact.objects.get(user=user, text=text), conversation, message


@sync_to_async
def memory_page(user) -> str:
    web = Client()
    web.force_login(user)
    response = web.get(reverse("memory:page"))
    assert response.status_code == 200
    return response.content.decode()


def row_of(page: str, kind: str, pk: int) -> str:
    return page.split(f'id="{kind}-{pk}"', 1)[1].split("</li>", 1)[0]


@sync_to_async
def history(memory):
    return list(
        type(memory)
        .history.filter(id=memory.pk)
        .order_by("history_date")
        .values_list("history_type", "history_change_reason", "history_user_id")
    )


async def test_the_tools_are_listed_with_their_arguments(alice_key):
    async with client(alice_key) as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == TOOLS
    remember = tools["remember"].input_schema
    assert set(remember["required"]) == {"kind", "text"}
    assert "project" in remember["properties"] and "due_date" in remember["properties"]
    assert tools["search_memory"].annotations.read_only_hint is True


async def test_list_and_search_give_dated_items_with_their_source(alice, alice_key):
    """What the chat learned, with the conversation and message it came from."""
    fact, conversation, message = await learned_fact(alice)
    async with client(alice_key) as session:
        listed = (await call(session, "list_memories"))["memories"]
        found = (await call(session, "search_memory", query="where does she live? Lyon"))["results"]
    assert [item["id"] for item in listed] == [fact.pk]
    item = listed[0]
    assert (item["kind"], item["text"], item["state"]) == ("fact", fact.text, "learned")
    assert item["created_at"].startswith(str(fact.created_at.date()))
    assert item["source"] == {
        "conversation_id": conversation.pk,
        "conversation_title": "Moving house",
        "message_id": message.pk,
        "said_at": message.created_at.isoformat(),
        "url": f"http://localhost/c/{conversation.pk}/?highlight={message.pk}#m{message.pk}",
    }
    assert found, "the search found nothing"
    kinds = {(hit["kind"], hit["id"]) for hit in found}
    assert ("fact", fact.pk) in kinds
    for hit in found:
        assert hit["date"] and hit["source"]["conversation_id"] == conversation.pk
    hit = next(hit for hit in found if hit["kind"] == "fact")
    assert hit["source"]["message_id"] == message.pk


async def test_list_filters_by_kind_and_words(alice, alice_key):
    await learned_fact(alice)
    async with client(alice_key) as session:
        await call(session, "remember", kind="decision", text="Move to Porto in August")
        await call(session, "remember", kind="action_item", text="Book the movers")
        decisions = (await call(session, "list_memories", kind="decision"))["memories"]
        movers = (await call(session, "list_memories", query="movers"))["memories"]
        everything = (await call(session, "list_memories"))["memories"]
    assert [d["text"] for d in decisions] == ["Move to Porto in August"]
    assert [m["text"] for m in movers] == ["Book the movers"]
    assert [m["kind"] for m in everything] == ["action_item", "decision", "fact"]


async def test_remember_adds_a_memory_the_memory_page_shows_as_added_through_mcp(alice, alice_key):
    async with client(alice_key) as session:
        answer = await call(
            session, "remember", kind="fact", text="I am allergic to peanuts", category="personal"
        )
        action = await call(
            session, "remember", kind="action_item", text="Renew my passport", due_date="2027-03-01"
        )
        found = (await call(session, "search_memory", query="peanuts"))["results"]
    assert answer["outcome"] == "remembered"
    fact = (await rows(Fact, user=alice))[0]
    assert (fact.text, fact.category, fact.state) == (
        "I am allergic to peanuts",
        "personal",
        MemoryState.ADDED,
    )
    assert answer["memory"]["id"] == fact.pk and answer["memory"]["source"] is None
    item = (await rows(ActionItem, user=alice))[0]
    assert str(item.due_date) == "2027-03-01" and action["memory"]["due_date"] == "2027-03-01"
    assert [(h["kind"], h["id"]) for h in found][:1] == [("fact", fact.pk)]
    assert await history(fact) == [("+", "added by the user through MCP", alice.pk)]
    page = await memory_page(alice)
    assert "Added through MCP" in row_of(page, "fact", fact.pk)


async def test_update_and_forget_are_recorded_as_through_mcp(alice, alice_key):
    fact, _, _ = await learned_fact(alice)
    async with client(alice_key) as session:
        changed = await call(
            session, "update_memory", kind="fact", id=fact.pk, text="I live in Lyon, one cat."
        )
        item = await call(session, "remember", kind="action_item", text="Feed the cat")
        item_id = item["memory"]["id"]
        done = await call(session, "update_memory", kind="action_item", id=item_id, done=True)
        page = await memory_page(alice)
        forgotten = await call(session, "forget_memory", kind="fact", id=fact.pk)
    assert changed["memory"]["text"] == "I live in Lyon, one cat."
    assert changed["memory"]["state"] == "edited"
    assert done["memory"]["status"] == "done"
    assert "changed through MCP" in row_of(page, "fact", fact.pk)
    assert "Edited by you" in row_of(page, "fact", fact.pk)
    text = "I live in Lyon, one cat."
    assert forgotten == {"forgotten": {"kind": "fact", "id": fact.pk, "text": text}}
    assert await rows(Fact, user=alice) == []
    records = await history(fact)
    assert records[0][1] != "" and "MCP" not in (records[0][1] or "")  # learned in the chat
    assert records[-2:] == [
        ("~", "edited by the user: text, state through MCP", alice.pk),
        ("-", "deleted by the user through MCP", alice.pk),
    ]


async def test_in_ask_first_a_remembered_fact_waits_as_a_suggestion(alice, alice_key):
    await sync_to_async(profile_set_memory_mode)(user=alice, mode="ask")
    async with client(alice_key) as session:
        answer = await call(session, "remember", kind="fact", text="My sister is called Ines")
        found = (await call(session, "search_memory", query="Ines sister"))["results"]
        listed = (await call(session, "list_memories"))["memories"]
    assert answer["outcome"] == "suggested" and "ask first" in answer["note"]
    fact = (await rows(Fact, user=alice))[0]
    assert fact.state == MemoryState.SUGGESTED
    assert found == []  # a suggestion is recalled by nothing until the user keeps it
    assert [m["state"] for m in listed] == ["suggested"]
    page = await memory_page(alice)
    suggestion = row_of(page, "fact", fact.pk)
    assert "Suggested" in suggestion and "Keep" in suggestion
    assert "Added through MCP" in suggestion and "by you" in suggestion


async def test_with_memory_off_remember_is_refused_clearly(alice, alice_key):
    await sync_to_async(profile_set_memory_mode)(user=alice, mode="off")
    async with client(alice_key) as session:
        error = await refusal(session, "remember", kind="fact", text="I like tea")
    assert "Memory is off" in error and "nothing was remembered" in error
    assert await rows(Fact, user=alice) == []


async def test_bad_arguments_are_refused_in_words(alice, alice_key):
    async with client(alice_key) as session:
        tea = (await call(session, "remember", kind="fact", text="I like tea"))["memory"]
        again = await refusal(session, "remember", kind="fact", text="I like  tea")
        empty = await refusal(session, "remember", kind="fact", text="   ")
        kind = await refusal(session, "remember", kind="summary", text="x")
        due = await refusal(session, "remember", kind="action_item", text="x", due_date="soon")
        nothing = await refusal(session, "update_memory", kind="fact", id=tea["id"])
        query = await refusal(session, "search_memory", query="  ")
    assert "already have" in again
    assert "Write what the assistant should remember" in empty
    assert "kind" in kind
    assert "YYYY-MM-DD" in due
    assert "new text" in nothing
    assert "what to search" in query
    assert len(await rows(Fact, user=alice)) == 1


async def test_another_users_memory_is_not_found(alice, bob, alice_key, bob_key):
    """Bob's key reaches Bob's memory only: Alice's ids are unknown to it."""
    fact, _, _ = await learned_fact(alice)
    async with client(bob_key) as session:
        listed = (await call(session, "list_memories"))["memories"]
        found = (await call(session, "search_memory", query="Lyon cats"))["results"]
        change = await refusal(session, "update_memory", kind="fact", id=fact.pk, text="mine")
        forget = await refusal(session, "forget_memory", kind="fact", id=fact.pk)
    assert listed == [] and found == []
    for error in (change, forget):
        assert error.endswith(f": You have no fact #{fact.pk}.")
    assert (await rows(Fact, pk=fact.pk))[0].text == fact.text


async def test_a_project_scopes_remember_list_and_search(alice, bob, alice_key):
    """By id or name (any case); another user's project is not found."""
    garden = await sync_to_async(Project.objects.create)(user=alice, name="Garden")
    await sync_to_async(Project.objects.create)(user=bob, name="Kitchen")
    async with client(alice_key) as session:
        inside = await call(
            session, "remember", kind="decision", text="Plant tomatoes in May", project="garden"
        )
        await call(session, "remember", kind="decision", text="Plant nothing indoors")
        by_name = (await call(session, "list_memories", project="Garden"))["memories"]
        by_id = (await call(session, "list_memories", project=str(garden.pk)))["memories"]
        searched = (await call(session, "search_memory", query="plant", project="Garden"))[
            "results"
        ]
        everywhere = (await call(session, "search_memory", query="plant"))["results"]
        bobs = await refusal(session, "list_memories", project="Kitchen")
        bobs_remember = await refusal(
            session, "remember", kind="fact", text="x y", project="Kitchen"
        )
    assert inside["memory"]["project"] == "Garden"
    decision = (await rows(Decision, user=alice, project=garden))[0]
    assert decision.what == "Plant tomatoes in May"
    assert [m["id"] for m in by_name] == [m["id"] for m in by_id] == [decision.pk]
    assert [(h["kind"], h["id"]) for h in searched] == [("decision", decision.pk)]
    assert len(everywhere) == 2
    for error in (bobs, bobs_remember):
        assert error.endswith(": You have no project 'Kitchen'.")
