"""Abuse limits: each refusal is a clear message and leaves nothing half-stored."""

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model

from chat import limits
from chat.models import Message
from chat.services import conversation_create
from tests.chat.helpers import connected, frames_until

pytestmark = pytest.mark.django_db(transaction=True)


async def test_too_many_messages_a_minute_are_refused(
    aconversation, alice, settings, fake_llm, monkeypatch
):
    """Past MESSAGES_PER_MINUTE the message is refused with when to retry; nothing stored."""
    monkeypatch.setattr(limits.time, "time", lambda: 1_800_000_030.0)  # mid-window, fixed
    settings.MEMORYCHAT_MESSAGES_PER_MINUTE = 2
    socket = await connected(alice, aconversation.pk)
    for n in range(2):
        await socket.send_json_to({"type": "send", "text": f"message {n}"})
        await frames_until(socket, "reply_end")
    await socket.send_json_to({"type": "send", "text": "one too many", "client_id": "x3"})
    error = await socket.receive_json_from()
    await socket.disconnect()
    assert error["code"] == "rate_limited" and error["client_id"] == "x3"
    assert "too fast" in error["message"] and "try again in" in error["message"]
    assert await Message.objects.filter(role="user").acount() == 2


async def test_concurrent_streams_per_user_are_capped(alice, settings, fake_llm):
    """A second simultaneous reply beyond MAX_CONCURRENT_STREAMS is refused."""
    settings.MEMORYCHAT_MAX_CONCURRENT_STREAMS = 1
    fake_llm.behaviour.reply = " ".join(["slow"] * 100)
    fake_llm.behaviour.interval = 0.02
    first = await sync_to_async(conversation_create)(user=alice)
    second = await sync_to_async(conversation_create)(user=alice)
    socket_one = await connected(alice, first.pk)
    socket_two = await connected(alice, second.pk)
    await socket_one.send_json_to({"type": "send", "text": "long one"})
    await frames_until(socket_one, "chunk")
    await socket_two.send_json_to({"type": "send", "text": "second"})
    error = await socket_two.receive_json_from()
    assert error["code"] == "too_many_streams" and "Wait for one to finish" in error["message"]
    await socket_one.send_json_to({"type": "stop"})
    await frames_until(socket_one, "reply_end")
    await socket_one.disconnect()
    await socket_two.disconnect()
    assert await Message.objects.filter(conversation=second).acount() == 0


@pytest.mark.django_db
def test_signups_are_throttled_per_address(client, settings):
    """Past SIGNUPS_PER_HOUR from one address the form says so and creates no account."""
    settings.MEMORYCHAT_SIGNUPS_PER_HOUR = 1
    password = "a-long-passphrase-1"
    client.post(
        "/accounts/signup/", {"username": "one", "password1": password, "password2": password}
    )
    client.logout()
    response = client.post(
        "/accounts/signup/", {"username": "two", "password1": password, "password2": password}
    )
    assert response.status_code == 200
    assert "Too many accounts" in response.content.decode()
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["one"]
