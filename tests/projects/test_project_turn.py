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


async def test_a_tab_open_before_its_conversation_moved_answers_in_the_new_project(
    alice, garden, fake_llm
):
    """The tab keeps its conversation: the move (from another tab's menu) reaches it before
    its next turn, so the project's instructions go out and what it learns is the project's."""
    from asgiref.sync import sync_to_async

    from chat.models import Conversation
    from projects.services import conversation_move

    outside = await sync_to_async(conversation_create)(user=alice)
    socket = await connected(alice, outside.pk)
    moved = await Conversation.objects.aget(pk=outside.pk)
    await sync_to_async(conversation_move)(conversation=moved, project=garden)
    await socket.send_json_to({"type": "send", "text": "How deep do I sow beans?"})
    end = (await frames_until(socket, "reply_end"))[-1]
    await socket.disconnect()
    assert end["status"] == "complete", end.get("error")
    assert "Always give quantities in metric units." in str(
        fake_llm.chat_requests()[-1]["body"]["messages"]
    )


async def test_a_frame_naming_another_users_project_is_not_heard(alice, bob, fake_llm):
    """No frame carries a project (a conversation's is its own, read from the database): a
    send naming Bob's project answers in Alice's conversation, outside any project."""
    from asgiref.sync import sync_to_async

    from projects.services import project_create

    bobs = await sync_to_async(project_create)(
        user=bob, name="Bob's", instructions="Answer only in Bob's secret code."
    )
    outside = await sync_to_async(conversation_create)(user=alice)
    socket = await connected(alice, outside.pk)
    frame = {"type": "send", "text": "Hello there", "project": bobs.pk, "project_id": bobs.pk}
    await socket.send_json_to(frame)
    end = (await frames_until(socket, "reply_end"))[-1]
    await socket.disconnect()
    assert end["status"] == "complete", end.get("error")
    assert "secret code" not in str(fake_llm.chat_requests()[-1]["body"]["messages"])
    reply = await Message.objects.aget(role="assistant")
    assert reply.context_report["scope"] == {"id": None, "name": ""}
    assert "project" not in reply.context_report
