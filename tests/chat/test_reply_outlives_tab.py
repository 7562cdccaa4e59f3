"""A reply belongs to the conversation, not to the tab that asked for it (chat.live): it runs
to its end whatever the tabs do, a tab that opens the conversation meanwhile resumes it, and
Stop from any tab stops it. With the real channel layer (in-memory, or Redis on the second
test pass) and the real openai client against a local server."""

import asyncio

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from chat import live, protocol
from chat.models import Message
from memory.models import Fact
from tests.chat.conftest import acreate_conversation
from tests.chat.helpers import connected, frames_until, turn_end

pytestmark = pytest.mark.django_db(transaction=True)

LONG = " ".join(f"w{i}" for i in range(150))


@sync_to_async
def replies(conversation):
    return list(
        Message.objects.filter(conversation=conversation, role="assistant").values(
            "content", "status", "error"
        )
    )


def later_text(frames, after: int) -> str:
    """The text of the chunks after chunk ``after`` (their seq counts from 1)."""
    chunks = [f for f in frames if f["type"] == "chunk" and f["seq"] > after]
    assert [f["seq"] for f in chunks] == list(range(after + 1, after + 1 + len(chunks)))
    return "".join(f["text"] for f in chunks)


async def test_closing_the_tab_does_not_stop_the_reply(aconversation, alice, fake_llm):
    """The tab closes after the first chunk: the reply is written to its end, stored once
    as complete, and the after-turn work runs (what the message said is remembered)."""
    fake_llm.behaviour.reply = LONG
    fake_llm.behaviour.interval = 0.005
    socket = await connected(alice, aconversation.pk)
    await socket.send_json_to({"type": "send", "text": "My daughter's name is Ada."})
    await frames_until(socket, "chunk")
    await socket.disconnect()
    assert (await replies(aconversation))[0]["status"] == "streaming"

    await asyncio.wait_for(live.settle(), 30)
    assert await replies(aconversation) == [{"content": LONG, "status": "complete", "error": ""}]
    assert len(fake_llm.chat_requests()) == 1
    facts = [f async for f in Fact.objects.filter(user=alice).values_list("text", flat=True)]
    assert any("Ada" in text for text in facts), facts


async def test_a_tab_opened_mid_reply_resumes_it_exactly(aconversation, alice, fake_llm):
    """A reload: the sending tab closes, a new one opens while the reply streams. It gets
    ready (naming the reply), a resume with the text so far, then the chunks after it: the
    two together are the reply, without a gap or a doubled word."""
    fake_llm.behaviour.reply = LONG
    fake_llm.behaviour.interval = 0.01
    first = await connected(alice, aconversation.pk)
    await first.send_json_to({"type": "send", "text": "Go on"})
    before = await frames_until(first, "chunk")
    await first.disconnect()

    second = await connected(alice, aconversation.pk)  # its ready named the reply
    resume = await second.receive_json_from(timeout=5)
    assert resume["type"] == "resume" and resume["id"] == before[-1]["id"]
    assert resume["seq"] >= 1 and LONG.startswith(resume["text"]) and resume["text"]
    assert 'data-role="assistant"' in resume["article"]
    frames = await frames_until(second, "reply_end")
    await second.disconnect()
    assert resume["text"] + later_text(frames, resume["seq"]) == LONG
    assert frames[-1]["status"] == "complete"
    # What the page shows once the reply ends is the stored reply's render.
    assert "w149" in frames[-1]["html"]


async def test_a_second_tab_joining_mid_reply_gets_resume_then_the_rest(
    aconversation, alice, fake_llm
):
    """Both tabs open: the sender keeps its chunks, the newcomer's resume and chunks make
    the same text; the resume's HTML is what the earlier chunks built."""
    fake_llm.behaviour.reply = LONG
    fake_llm.behaviour.interval = 0.01
    sender = await connected(alice, aconversation.pk)
    await sender.send_json_to({"type": "send", "text": "Go on"})
    await frames_until(sender, "chunk")
    joiner = await connected(alice, aconversation.pk)
    resume = await joiner.receive_json_from(timeout=5)
    assert resume["type"] == "resume"
    seen = await frames_until(sender, "reply_end")
    joined = await frames_until(joiner, "reply_end")
    await sender.disconnect()
    await joiner.disconnect()
    assert resume["text"] + later_text(joined, resume["seq"]) == LONG
    # The sender's chunks up to the resume built the resume's HTML.
    chunks = [f for f in seen if f["type"] == "chunk"]
    upto = [f for f in chunks if f["seq"] <= resume["seq"]]
    if upto:
        assert "".join(f["html"] for f in upto) == resume["html"]
        assert upto[-1]["tail"] == resume["tail"]
    assert joined[-1]["id"] == seen[-1]["id"] and joined[-1]["status"] == "complete"


async def test_stop_from_a_tab_opened_after_the_sender_closed(aconversation, alice, fake_llm):
    """The reply has no tab of its own any more; Stop from a new tab still stops it."""
    fake_llm.behaviour.reply = " ".join(["more"] * 400)
    fake_llm.behaviour.interval = 0.02
    sender = await connected(alice, aconversation.pk)
    await sender.send_json_to({"type": "send", "text": "go"})
    await frames_until(sender, "chunk")
    await sender.disconnect()
    other = await connected(alice, aconversation.pk)
    await frames_until(other, "resume")
    await other.send_json_to({"type": "stop"})
    end = (await frames_until(other, "reply_end"))[-1]
    await other.disconnect()
    assert end["status"] == "interrupted" and "Stopped" in end["error"]
    (reply,) = await replies(aconversation)
    assert reply["status"] == "interrupted" and reply["content"].startswith("more")


async def test_replies_without_a_tab_count_against_the_users_limit(
    aconversation, alice, fake_llm, settings
):
    """A reply running with its tab closed is still one of the user's streams."""
    settings.MEMORYCHAT_MAX_CONCURRENT_STREAMS = 1
    fake_llm.behaviour.reply = LONG
    fake_llm.behaviour.interval = 0.02
    socket = await connected(alice, aconversation.pk)
    await socket.send_json_to({"type": "send", "text": "Go on"})
    await frames_until(socket, "chunk")
    await socket.disconnect()

    elsewhere = await acreate_conversation(alice)
    other = await connected(alice, elsewhere.pk)
    await other.send_json_to({"type": "send", "text": "And here?", "client_id": "x1"})
    refused = await frames_until(other, "error")
    assert refused[-1]["code"] == "too_many_streams"
    await asyncio.wait_for(live.settle(), 30)
    assert (await turn_end(other, "And now?", client_id="x2"))["status"] == "complete"
    await other.disconnect()


async def next_event(layer, channel, kind: str) -> dict:
    while True:
        event = await asyncio.wait_for(layer.receive(channel), 5)
        if event["type"] == "chat.frame" and event["frame"]["type"] == kind:
            return event["frame"]


async def test_another_process_resumes_and_stops_the_reply(aconversation, alice, fake_llm):
    """Another server process's room, played on the channel layer: it joins the group, says
    a tab of its own opened (``chat.join``), and gets a resume at once, then snapshots that
    never go back, then the end; its ``chat.stop`` stops the reply."""
    fake_llm.behaviour.reply = " ".join(["more"] * 400)
    fake_llm.behaviour.interval = 0.01
    layer = get_channel_layer()
    group = protocol.group_name(aconversation.pk)
    elsewhere = await layer.new_channel()
    await layer.group_add(group, elsewhere)
    try:
        sender = await connected(alice, aconversation.pk)
        await sender.send_json_to({"type": "send", "text": "go"})
        await frames_until(sender, "chunk")
        await layer.group_send(group, protocol.group_join(sender=elsewhere))
        resume = await next_event(layer, elsewhere, "resume")
        first = await next_event(layer, elsewhere, "snapshot")
        second = await next_event(layer, elsewhere, "snapshot")
        assert resume["seq"] <= first["seq"] <= second["seq"]
        assert second["text"].startswith(first["text"]) and first["text"].startswith(resume["text"])
        await layer.group_send(group, protocol.group_stop())
        end = await next_event(layer, elsewhere, "reply_end")
        assert end["status"] == "interrupted"
        await frames_until(sender, "reply_end")
        await sender.disconnect()
    finally:
        await layer.group_discard(group, elsewhere)
