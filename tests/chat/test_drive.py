"""chat.turn.run_turn: a turn driven without a websocket (what an HTTP endpoint will call),
with a sink for its frames; a tab open on the conversation sees the same reply."""

import pytest

from chat.models import Message
from chat.services import ChatError
from chat.turn import run_turn
from tests.chat.helpers import connected, frames_until

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_turn_driven_with_a_sink_streams_and_stores_once(aconversation, alice, fake_llm):
    fake_llm.behaviour.reply = "Driven without a socket, word by word."
    frames = []

    async def sink(frame):
        frames.append(frame)

    reply = await run_turn(
        user=alice, conversation=aconversation, text="Hello, sink", client_id="s-1", sink=sink
    )
    assert reply.status == "complete" and reply.content == fake_llm.behaviour.reply
    kinds = [f["type"] for f in frames]
    assert kinds[:3] == ["user_message", "title", "reply_start"] and kinds[-1] == "reply_end"
    assert "".join(f["text"] for f in frames if f["type"] == "chunk") == reply.content
    assert [f["seq"] for f in frames if f["type"] == "chunk"] == list(
        range(1, kinds.count("chunk") + 1)
    )
    rows = [
        (m.role, m.status)
        async for m in Message.objects.filter(conversation=aconversation).order_by("id")
    ]
    assert rows == [("user", "complete"), ("assistant", "complete")]

    # The same client_id again is a resend: nothing stored, the reply that exists returned.
    again = await run_turn(
        user=alice, conversation=aconversation, text="Hello, sink", client_id="s-1", sink=sink
    )
    assert again.pk == reply.pk and len(fake_llm.chat_requests()) == 1


async def test_an_open_tab_sees_a_driven_turn_and_a_refused_one_raises(
    aconversation, alice, fake_llm
):
    fake_llm.behaviour.reply = "Seen by the tab too."
    tab = await connected(alice, aconversation.pk)

    async def sink(frame):
        pass

    reply = await run_turn(user=alice, conversation=aconversation, text="Hi", sink=sink)
    seen = await frames_until(tab, "reply_end")
    assert seen[0]["type"] == "user_message" and seen[-1]["id"] == reply.pk
    assert "".join(f["text"] for f in seen if f["type"] == "chunk") == reply.content

    fake_llm.behaviour.reply = " ".join(["slow"] * 200)
    fake_llm.behaviour.interval = 0.02
    await tab.send_json_to({"type": "send", "text": "A long one"})
    await frames_until(tab, "chunk")
    with pytest.raises(ChatError) as refused:
        await run_turn(user=alice, conversation=aconversation, text="And me?", sink=sink)
    assert refused.value.code == "busy"
    await tab.send_json_to({"type": "stop"})
    await frames_until(tab, "reply_end")
    await tab.disconnect()
