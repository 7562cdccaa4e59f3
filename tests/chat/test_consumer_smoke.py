import pytest
from asgiref.sync import sync_to_async

from chat.models import Message
from chat.services import conversation_create
from tests.chat.helpers import connected, frames_until


@pytest.mark.django_db(transaction=True)
async def test_a_turn_streams_offline(alice):
    conversation = await sync_to_async(conversation_create)(user=alice)
    socket = await connected(alice, conversation.pk)
    await socket.send_json_to({"type": "send", "text": "Hello there", "client_id": "c1"})
    frames = await frames_until(socket, "reply_end")
    types = [f["type"] for f in frames]
    print(types, frames[-1])
    assert types[0] == "user_message"
    assert "chunk" in types
    assert frames[-1]["status"] == "complete"
    await socket.disconnect()
    rows = await sync_to_async(list)(Message.objects.order_by("id").values_list("role", "status"))
    assert rows == [("user", "complete"), ("assistant", "complete")]
