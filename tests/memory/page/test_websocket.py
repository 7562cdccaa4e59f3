"""The chat's websocket and memory notices: a turn's notice reaches every tab; Undo over the
socket works for the owner's notice and is refused for anyone else's."""

import pytest
from asgiref.sync import sync_to_async

from chat.services import conversation_create
from memory.models import Fact, MemoryEvent
from tests.chat.helpers import connected, frames_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@sync_to_async
def _conversation(user):
    return conversation_create(user=user)


@sync_to_async
def _facts(user):
    return list(Fact.objects.filter(user=user).values_list("text", flat=True))


@sync_to_async
def _event_of(user):
    return MemoryEvent.objects.filter(user=user).order_by("-id").first()


async def test_a_fact_told_is_noticed_in_every_tab_and_undone_over_the_socket(alice):
    """Offline model: the light extractor's fact comes as memory_event to both tabs; Undo."""
    conversation = await _conversation(alice)
    first, second = await connected(alice, conversation.pk), await connected(alice, conversation.pk)
    await first.send_json_to(
        {"type": "send", "text": "My daughter's name is Ada.", "client_id": "a1"}
    )
    notice = (await frames_until(first, "memory_event"))[-1]
    assert "Remembered:" in notice["html"] and "Ada" in notice["html"]
    other = (await frames_until(second, "memory_event"))[-1]
    assert other["id"] == notice["id"]
    assert any("Ada" in text for text in await _facts(alice))
    await first.send_json_to({"type": "memory_undo", "event_id": notice["id"]})
    undone = (await frames_until(first, "memory_event"))[-1]
    assert undone["id"] == notice["id"] and "Undone." in undone["html"]
    assert "Undone." in (await frames_until(second, "memory_event"))[-1]["html"]
    assert await _facts(alice) == []
    await first.disconnect()
    await second.disconnect()


async def test_undo_of_another_users_notice_is_refused(alice, bob):
    """Bob's socket cannot undo Alice's notice (nor can Alice from another conversation)."""
    conversation = await _conversation(alice)
    socket = await connected(alice, conversation.pk)
    await socket.send_json_to(
        {"type": "send", "text": "My daughter's name is Ada.", "client_id": "a1"}
    )
    notice = (await frames_until(socket, "memory_event"))[-1]
    await socket.disconnect()
    bobs = await _conversation(bob)
    intruder = await connected(bob, bobs.pk)
    await intruder.send_json_to({"type": "memory_undo", "event_id": notice["id"]})
    refused = await intruder.receive_json_from()
    assert refused["type"] == "error" and refused["code"] == "not_found"
    assert "Ada" not in str(refused)
    await intruder.send_json_to({"type": "memory_undo", "event_id": "x"})
    assert (await intruder.receive_json_from())["code"] == "bad_frame"
    await intruder.disconnect()
    elsewhere = await connected(alice, (await _conversation(alice)).pk)
    await elsewhere.send_json_to({"type": "memory_undo", "event_id": notice["id"]})
    assert (await elsewhere.receive_json_from())["code"] == "not_found"
    await elsewhere.disconnect()
    assert (await _event_of(alice)).undone_at is None
    assert any("Ada" in text for text in await _facts(alice))


async def test_a_notice_reaches_the_users_tabs_on_other_conversations(alice, bob):
    """A tab on another of Alice's conversations gets memory_elsewhere (with a link to the
    message); the tab on the conversation gets memory_event, not both; Bob gets nothing."""
    here, there = await _conversation(alice), await _conversation(alice)
    talking = await connected(alice, here.pk)
    watching = await connected(alice, there.pk)
    bobs = await connected(bob, (await _conversation(bob)).pk)
    await talking.send_json_to(
        {"type": "send", "text": "My daughter's name is Ada.", "client_id": "a1"}
    )
    seen = await frames_until(talking, "memory_event")
    notice = seen[-1]
    elsewhere = (await frames_until(watching, "memory_elsewhere"))[-1]
    assert elsewhere["id"] == notice["id"] and elsewhere["conversation_id"] == here.pk
    assert "Ada" in elsewhere["html"] and f"/c/{here.pk}/?highlight=" in elsewhere["html"]
    await talking.send_json_to({"type": "memory_undo", "event_id": notice["id"]})
    seen += await frames_until(talking, "memory_event")
    assert "Undone." in seen[-1]["html"]
    assert "Undone" in (await frames_until(watching, "memory_elsewhere"))[-1]["html"]
    assert "memory_elsewhere" not in [frame["type"] for frame in seen]
    assert await bobs.receive_nothing(timeout=0.3)
    for socket in (talking, watching, bobs):
        await socket.disconnect()
