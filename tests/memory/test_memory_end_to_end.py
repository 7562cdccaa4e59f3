"""The memory promise, end to end and offline: real websocket turns, the offline provider,
background jobs run by the real worker command."""

import pytest
from asgiref.sync import sync_to_async

from chat.models import Message
from chat.services import conversation_create
from llm import providers as llm
from tests.chat.helpers import connected, turn_end
from tests.support.tasks import run_pending_tasks

pytestmark = pytest.mark.django_db(transaction=True)

run_jobs = sync_to_async(run_pending_tasks)


@pytest.fixture(autouse=True)
def fast_offline(monkeypatch, settings):
    settings.OPENAI_API_KEY = ""
    monkeypatch.setattr(llm, "OFFLINE_WORD_DELAY", 0)


@sync_to_async
def last_report(conversation_id):
    return (
        Message.objects.filter(conversation_id=conversation_id, role="assistant")
        .latest("id")
        .context_report
    )


async def test_a_fact_told_in_one_conversation_reaches_a_new_one(alice):
    """Told once, asked in a fresh conversation: the memory block carries it."""
    first = await sync_to_async(conversation_create)(user=alice, title="Family")
    socket = await connected(alice, first.pk)
    await turn_end(socket, "My sister Ana lives in Porto and works as an architect.")
    await socket.disconnect()
    await run_jobs()

    second = await sync_to_async(conversation_create)(user=alice)
    socket = await connected(alice, second.pk)
    end = await turn_end(socket, "Which city does my sister Ana live in?")
    await socket.disconnect()
    report = await last_report(second.pk)
    texts = " ".join(m["text"] for m in report["memories"])
    assert "Porto" in texts
    assert "Porto" in end["html"]  # the offline reply answers from memory


async def test_a_fact_told_300_turns_ago_is_recalled_within_a_small_budget(alice):
    """A 2,000-token conversation, 300 turns later: the fact is in the context of a question
    about it, and every request stayed within the budget."""
    conversation = await sync_to_async(conversation_create)(user=alice, context_budget=2000)
    socket = await connected(alice, conversation.pk)
    await turn_end(socket, "Remember this: my locker combination is 4-8-15.")
    topics = ["gardening", "sourdough", "chess openings", "rust lifetimes", "jazz chords"]
    for i in range(299):
        await turn_end(socket, f"Tell me something about {topics[i % 5]}, part {i}.")
        if i % 25 == 24:
            await run_jobs()
    await run_jobs()
    await turn_end(socket, "What is my locker combination?")
    await socket.disconnect()

    report = await last_report(conversation.pk)
    assert any("4-8-15" in m["text"] for m in report["memories"])
    assert report["total_tokens"] <= report["limit"] < 2000

    @sync_to_async
    def largest_request():
        return max(
            r["total_tokens"]
            for r in Message.objects.filter(
                conversation=conversation, role="assistant"
            ).values_list("context_report", flat=True)
        )

    assert await largest_request() <= report["limit"]
