"""The server's cached prompt tokens are recorded in the turn's report (issue 42, item 1): a
server with a prompt cache reuses the prefix of the previous request, and the order of the
request (memory block last) keeps that prefix long."""

import pytest

from chat.models import Message
from tests.chat.helpers import connected, turn_end

pytestmark = pytest.mark.django_db(transaction=True)


async def send(socket, text):
    end = await turn_end(socket, text)
    assert end["status"] == "complete", end.get("error")


async def test_cached_tokens_are_in_the_report(aconversation, alice, fake_llm):
    fake_llm.behaviour.prompt_cache = True
    fake_llm.behaviour.reply = "Noted, the trip is in May."
    socket = await connected(alice, aconversation.pk)
    await send(socket, "I plan a trip to Porto in May.")
    await send(socket, "Which month was the trip again?")
    await socket.disconnect()
    first, second = [
        m.context_report async for m in Message.objects.filter(role="assistant").order_by("id")
    ]
    assert first["cached_tokens"] == 0  # nothing before it
    # The system prompt and the first exchange were reused: the second request began with them.
    system_words = len(fake_llm.chat_requests()[1]["body"]["messages"][0]["content"].split())
    assert second["cached_tokens"] > system_words


def test_the_report_says_what_the_cache_saved():
    from django.template.loader import render_to_string

    report = {"total_tokens": 900, "limit": 3000, "budget": 4000, "reserve": 1000}
    html = render_to_string("chat/_context_report_body.html", {"report": report, "view": {}})
    assert "reused from the server" not in html
    report["cached_tokens"] = 812
    html = render_to_string("chat/_context_report_body.html", {"report": report, "view": {}})
    assert "812 prompt tokens reused from the server's cache" in html
