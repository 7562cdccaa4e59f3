"""A turn in a project's conversation over the real websocket and the real model client: the
project's instructions go out in the request and are in the stored report."""

import pytest

from chat.models import Message
from chat.services import conversation_create
from tests.chat.helpers import connected, frames_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def in_garden(alice, garden):
    return conversation_create(user=alice, project=garden)


async def test_a_turn_in_a_project_sends_its_instructions(in_garden, alice, fake_llm):
    fake_llm.behaviour.reply = "Sow beans 5 cm deep."
    socket = await connected(alice, in_garden.pk)
    await socket.send_json_to({"type": "send", "text": "How deep do I sow beans?"})
    end = (await frames_until(socket, "reply_end"))[-1]
    await socket.disconnect()
    assert end["status"] == "complete", end.get("error")
    sent = str(fake_llm.chat_requests()[-1]["body"]["messages"])
    assert "Always give quantities in metric units." in sent
    reply = await Message.objects.aget(role="assistant")
    assert reply.context_report["project"]["name"] == "Garden"
