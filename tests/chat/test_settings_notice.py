"""The conversation's settings form (chat:settings) tells the user's open tabs of a saved
change only: an invalid form or one that changes nothing sends them nothing."""

import asyncio

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.urls import reverse

from chat import protocol
from chat.services import conversation_create

pytestmark = pytest.mark.django_db


def _notices(user, post) -> list[dict]:
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(protocol.user_group(user.pk), channel)
    post()

    async def drain():
        heard = []
        while True:
            try:
                heard.append(await asyncio.wait_for(layer.receive(channel), 0.2))
            except TimeoutError:
                return heard

    try:
        return async_to_sync(drain)()
    finally:
        async_to_sync(layer.group_discard)(protocol.user_group(user.pk), channel)


def test_only_a_saved_change_is_told_to_the_open_tabs(alice_client, alice, settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    conversation = conversation_create(user=alice)
    url = reverse("chat:settings", args=[conversation.pk])
    same = {
        "strategy": conversation.strategy,
        "context_budget": conversation.context_budget or "",
        "model": conversation.model,
    }
    headers = {"HX-Request": "true"}

    assert not _notices(alice, lambda: alice_client.post(url, same, headers=headers))
    invalid = {**same, "strategy": "nonsense"}
    assert not _notices(alice, lambda: alice_client.post(url, invalid, headers=headers))
    changed = {**same, "strategy": "sliding_window"}
    heard = _notices(alice, lambda: alice_client.post(url, changed, headers=headers))
    assert [event["type"] for event in heard] == ["chat.conversation_settings"]
