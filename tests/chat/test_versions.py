"""Regenerate and edit over the websocket: the earlier answer is kept as a version with its
own context report; the reply row holds the newest, the one the conversation goes on from.
And what a streaming reply shows: Markdown rendered as it will be once stored."""

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import user_logged_out
from django.test import RequestFactory

from chat.consumers import CLOSE_UNAUTHENTICATED
from chat.models import Message, ReplyVersion
from chat.rendering import render_markdown
from chat.selectors import reply_version_shown
from tests.chat.helpers import connected, frames_until, turn

pytestmark = pytest.mark.django_db(transaction=True)


async def test_regenerate_keeps_the_earlier_answer_as_a_version(aconversation, alice, fake_llm):
    socket = await connected(alice, aconversation.pk)
    fake_llm.behaviour.reply = "First answer."
    first = await turn(socket, "What is two plus two?")
    reply_id, question_id = first[-1]["id"], first[-1]["reply_to"]

    fake_llm.behaviour.reply = "Second answer."
    await socket.send_json_to({"type": "regenerate", "message_id": question_id})
    frames = await frames_until(socket, "reply_end")
    await socket.disconnect()

    assert frames[0]["type"] == "reply_start" and frames[0]["id"] == reply_id
    end = frames[-1]
    assert end["status"] == "complete" and end["id"] == reply_id
    assert "Second answer." in end["html"] and "2 / 2" in end["article"]
    reply = await Message.objects.aget(pk=reply_id)
    assert reply.content == "Second answer." and reply.context_report
    version = await ReplyVersion.objects.aget(reply=reply)
    assert (version.number, version.content, version.status) == (1, "First answer.", "complete")
    assert version.context_report and version.question == "What is two plus two?"
    assert await Message.objects.filter(conversation=aconversation).acount() == 2

    shown = await sync_to_async(reply_version_shown)(
        conversation=aconversation, reply_id=reply_id, number=1
    )
    assert shown.content == "First answer." and shown.version_number == 1


async def test_edit_changes_the_last_question_and_answers_it_again(aconversation, alice, fake_llm):
    socket = await connected(alice, aconversation.pk)
    fake_llm.behaviour.reply = "About Paris."
    first = await turn(socket, "Tell me about Pariss")
    question_id = first[-1]["reply_to"]

    fake_llm.behaviour.reply = "About Lisbon."
    await socket.send_json_to(
        {"type": "edit", "message_id": question_id, "text": "Tell me about Lisbon"}
    )
    frames = await frames_until(socket, "reply_end")
    await socket.disconnect()

    assert frames[0]["type"] == "user_message" and frames[0]["id"] == question_id
    assert "Tell me about Lisbon" in frames[0]["article"]
    question = await Message.objects.aget(pk=question_id)
    assert question.content == "Tell me about Lisbon" and question.token_count > 0
    assert fake_llm.chat_requests()[-1]["body"]["messages"][-1]["content"] == (
        "Tell me about Lisbon"
    )
    version = await ReplyVersion.objects.aget(reply_id=frames[-1]["id"])
    assert version.question == "Tell me about Pariss" and version.content == "About Paris."


async def test_only_the_last_message_can_be_regenerated(aconversation, alice, fake_llm):
    """An earlier question is edited into a new branch (tests/chat/test_branches.py), never
    answered again in place."""
    socket = await connected(alice, aconversation.pk)
    first = await turn(socket, "One")
    await turn(socket, "Two")
    await socket.send_json_to({"type": "regenerate", "message_id": first[-1]["reply_to"]})
    error = await socket.receive_json_from()
    assert (error["type"], error["code"]) == ("error", "not_last")
    await socket.disconnect()
    assert await ReplyVersion.objects.acount() == 0


async def test_a_streaming_reply_comes_rendered_as_it_will_be_stored(
    aconversation, alice, fake_llm
):
    """Each chunk carries the Markdown so far, rendered by the final renderer: the blocks
    that became final (appended) and the open last block (replaced); put together at the
    end, they are the stored reply's HTML. The first chunk comes at once, the rest at most
    every ~100 ms, so a reply is a few frames, not one per token."""
    text = "# Plan\n\nFirst **bold** point.\n\n- one\n- two\n\n```python\nprint('hi')\n```\n\nDone."
    fake_llm.behaviour.reply = text
    fake_llm.behaviour.interval = 0.01
    socket = await connected(alice, aconversation.pk)
    frames = await turn(socket, "Plan it")
    await socket.disconnect()
    chunks = [f for f in frames if f["type"] == "chunk"]
    stable, tail = "", ""
    for chunk in chunks:
        stable += chunk["html"]
        tail = chunk["tail"]
    assert stable + tail == render_markdown(text) == frames[-1]["html"]
    assert '<span class="code-lang">python</span>' in frames[-1]["html"]
    assert "".join(c["text"] for c in chunks) == text
    assert len(chunks) < len(text.split()) / 2


async def test_stop_reads_stopped(aconversation, alice, fake_llm):
    fake_llm.behaviour.reply = " ".join(f"word{i}" for i in range(200))
    fake_llm.behaviour.interval = 0.02
    socket = await connected(alice, aconversation.pk)
    await socket.send_json_to({"type": "send", "text": "Talk a lot"})
    await frames_until(socket, "chunk")
    await socket.send_json_to({"type": "stop"})
    end = (await frames_until(socket, "reply_end"))[-1]
    await socket.disconnect()
    assert end["status"] == "interrupted"
    assert '<p class="reply-status" role="status">Stopped' in end["article"]
    assert "Interrupted" not in end["article"]


async def test_signing_out_closes_the_sessions_sockets(aconversation, alice):
    """Django's user_logged_out, sent by the logout of any tab, closes the sockets opened
    with that session with 4401 (the page goes to the login page)."""
    socket = await connected(alice, aconversation.pk)
    cookie = dict(socket.scope["headers"])[b"cookie"].decode().split("sessionid=")[1]
    request = RequestFactory().post("/accounts/logout/")
    request.session = type("Session", (), {"session_key": cookie})()
    await sync_to_async(user_logged_out.send)(sender=type(alice), request=request, user=alice)
    closed = await socket.receive_output(timeout=5)
    assert (closed["type"], closed["code"]) == ("websocket.close", CLOSE_UNAUTHENTICATED)
