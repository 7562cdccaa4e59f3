"""A turn against what real model servers do (tests/support/fake_llm.py switches each behaviour on):
a strict chat template, a reply cut at max_tokens and continued, a refused request, a model
whose tokenizer is not known, the models the server lists."""

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient
from django.urls import reverse

from chat.models import Message
from chat.services import message_create
from memory.models import Summary
from memory.services import fact_remember
from tests.chat.helpers import connected, frames_until, reply_text, turn, turn_end

pytestmark = pytest.mark.django_db(transaction=True)


@sync_to_async
def with_memory_and_a_failed_reply(conversation):
    """A summary and a fact (two more system blocks), and a user message whose reply failed
    (so two user messages come in a row)."""
    earlier = message_create(conversation=conversation, role="user", content="I live in Oslo.")
    message_create(conversation=conversation, role="assistant", content="Noted, Oslo.")
    Summary.objects.create(
        conversation=conversation,
        version=1,
        text="The user lives in Oslo and plans a trip.",
        covered_through=earlier.pk,
        is_current=True,
    )
    fact_remember(
        user=conversation.user,
        conversation=conversation,
        category="personal",
        subject="home town",
        text="The user lives in Oslo.",
        importance=0.9,
    )
    message_create(conversation=conversation, role="user", content="Where do I live?")
    message_create(
        conversation=conversation, role="assistant", content="", status=Message.Status.FAILED
    )


async def test_a_strict_template_accepts_every_turn_with_memory(aconversation, alice, fake_llm):
    """One system message with the blocks as sections, then alternation: no 400, and the
    report still lists each block."""
    fake_llm.behaviour.strict_template = True
    await with_memory_and_a_failed_reply(aconversation)
    socket = await connected(alice, aconversation.pk)
    frames = await turn(socket, "Where do I live, again?")
    await socket.disconnect()

    assert frames[-1]["status"] == "complete", frames[-1]["error"]
    sent = fake_llm.chat_requests()[-1]["body"]["messages"]
    # The summary covers the first message: the window opens with the assistant's answer,
    # so a short user turn opens it; the two user messages in a row are one turn.
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert "Oslo" in sent[0]["content"]  # the summary is a section of it
    # The memory block, which changes every turn, opens the last user turn (prefix caching).
    last = sent[-1]["content"]
    assert last.startswith("Where do I live?\n\nLong-term memory about this user")
    assert last.endswith("</memory>\n\nWhere do I live, again?")
    assert "<memory>" not in sent[0]["content"]
    reply = await Message.objects.filter(role="assistant").alast()
    names = [b["name"] for b in reply.context_report["blocks"]]
    assert {"system", "summary", "memory"} <= set(names)


async def test_separate_system_messages_are_refused_by_a_strict_template(
    aconversation, alice, fake_llm, settings
):
    """MESSAGE_SHAPE=separate against a strict server: a 400 that says the server refused the
    request in plain words, no Retry, and the server's reason and body for staff."""
    settings.MEMORYCHAT_MESSAGE_SHAPE = "separate"
    fake_llm.behaviour.strict_template = True
    await with_memory_and_a_failed_reply(aconversation)
    socket = await connected(alice, aconversation.pk)
    end = await turn_end(socket, "Where do I live, again?")
    await socket.disconnect()

    assert end["status"] == "failed"
    assert end["error"].startswith("The model server refused the request (HTTP 400):")
    # The server's own words are for staff and logs, not the page (issue 40, informational).
    assert "must be at the beginning" not in end["error"] and "alternate" not in end["error"]
    assert end["retry"] is False and end["continue"] is False
    assert len(fake_llm.chat_requests()) == 1  # a 400 is not retried
    reply = await Message.objects.filter(role="assistant").alast()
    assert reply.error_kind == "refused"
    assert "HTTP 400" in reply.upstream_detail and "invalid_request_error" in reply.upstream_detail
    assert "alternate" in reply.upstream_detail or "beginning" in reply.upstream_detail


async def test_every_request_is_capped_at_the_reply_reserve(aconversation, alice, fake_llm):
    fake_llm.behaviour.reply = "Short."
    socket = await connected(alice, aconversation.pk)
    end = await turn_end(socket, "Hello")
    await socket.disconnect()
    body = fake_llm.chat_requests()[-1]["body"]
    reply = await Message.objects.filter(role="assistant").alast()
    assert body["max_tokens"] == reply.context_report["reserve"] > 0
    assert end["status"] == "complete" and end["continue"] is False


async def test_a_reply_cut_by_length_is_stored_as_such_and_continues(alice, fake_llm, settings):
    """finish_reason "length": stored truncated with Continue offered; Continue asks for the
    rest (the reply so far, then a user turn) and appends it to the same reply."""
    from tests.chat.conftest import acreate_conversation

    settings.MEMORYCHAT_REPLY_RESERVE = 5
    fake_llm.behaviour.strict_template = True
    fake_llm.behaviour.reply = "one two three four five six seven"
    conversation = await acreate_conversation(alice, context_budget=2000)
    socket = await connected(alice, conversation.pk)
    end = await turn_end(socket, "Count")
    assert end["status"] == "truncated" and end["continue"] is True and end["retry"] is True
    assert "length limit (5 tokens)" in end["error"]
    reply = await Message.objects.aget(pk=end["id"])
    assert reply.content == "one two three four five "

    fake_llm.behaviour.reply = "six seven"
    await socket.send_json_to({"type": "continue", "message_id": end["id"]})
    frames = await frames_until(socket, "reply_end")
    await socket.disconnect()
    start = next(f for f in frames if f["type"] == "reply_start")
    # The continued reply's article shows its text so far; the chunks' HTML carries it on.
    assert start["id"] == end["id"] and "one two three four five" in start["article"]
    chunks = [f for f in frames if f["type"] == "chunk"]
    assert "".join(c["html"] for c in chunks) + chunks[-1]["tail"] == (
        "<p>one two three four five six seven</p>\n"
    )
    assert reply_text(frames) == "six seven"
    assert frames[-1]["status"] == "complete"
    await reply.arefresh_from_db()
    assert reply.content == "one two three four five six seven"
    assert await Message.objects.filter(role="assistant").acount() == 1
    sent = fake_llm.chat_requests()[-1]["body"]["messages"]
    assert sent[-2] == {"role": "assistant", "content": "one two three four five "}
    assert sent[-1]["role"] == "user" and "Continue" in sent[-1]["content"]
    assert [b["name"] for b in reply.context_report["blocks"]][-1] == "continuation"


async def test_only_a_cut_reply_can_be_continued(aconversation, alice, fake_llm):
    socket = await connected(alice, aconversation.pk)
    end = await turn_end(socket, "Hello")
    await socket.send_json_to({"type": "continue", "message_id": end["id"]})
    error = await socket.receive_json_from()
    await socket.send_json_to({"type": "continue", "message_id": "x"})
    bad = await socket.receive_json_from()
    await socket.disconnect()
    assert error["type"] == "error" and "length limit" in error["message"]
    assert bad["code"] == "bad_frame"


async def test_server_errors_keep_their_retries_and_the_retry_button(
    aconversation, alice, fake_llm
):
    """A 500 after the client's retries: failed, with Retry; the body is kept for staff."""
    fake_llm.behaviour.fail_status = 500
    fake_llm.behaviour.fail_times = 10
    socket = await connected(alice, aconversation.pk)
    end = await turn_end(socket, "Hello")
    await socket.disconnect()
    assert end["status"] == "failed" and end["retry"] is True
    assert len(fake_llm.chat_requests()) == 3  # the first try and two retries
    reply = await Message.objects.filter(role="assistant").alast()
    assert reply.error_kind == "server_error" and "fake failure 500" in reply.upstream_detail


async def test_a_model_with_an_unknown_tokenizer_says_estimated_and_is_corrected(
    alice, fake_llm, settings
):
    """Counts for a non-OpenAI model are estimates; once the server reports more prompt
    tokens than estimated, the next turn's limit shrinks by that ratio."""
    from tests.chat.conftest import acreate_conversation

    fake_llm.behaviour.prompt_tokens_per_word = 8.0  # a tokenizer far finer than tiktoken
    conversation = await acreate_conversation(alice, model="gemma-3-270m", context_budget=4000)
    socket = await connected(alice, conversation.pk)
    first = await turn_end(socket, "Hello there, how are you today?")
    second = await turn_end(socket, "And tomorrow?")
    await socket.disconnect()

    assert first["context"]["estimated"] is True
    reply = await Message.objects.aget(pk=second["id"])
    scale = reply.context_report["token_scale"]
    assert scale is not None and scale > 1.5
    assert second["context"]["limit"] == int(
        (reply.context_report["budget"] - reply.context_report["reserve"]) / scale
    )
    assert second["context"]["limit"] < first["context"]["limit"]
    client = AsyncClient()
    await client.aforce_login(alice)
    shown = await client.get(
        reverse("chat:context_report", args=[conversation.pk, reply.pk]),
        headers={"HX-Request": "true"},
    )
    assert "estimated" in shown.text  # the report the reply's "What the model saw" opens


async def test_an_openai_model_is_counted_exactly(aconversation, alice, fake_llm):
    socket = await connected(alice, aconversation.pk)
    end = await turn_end(socket, "Hello")
    await socket.disconnect()
    assert end["context"]["estimated"] is False
