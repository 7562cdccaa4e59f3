"""The chat page names the model that is there: with a server listing several, a picker in
the header (chat:model, owner only) and each reply's model under it; offline, one banner and
no model named anywhere (no picker, no model in the settings)."""

import pytest
from asgiref.sync import sync_to_async
from django.urls import reverse

from chat import fanout
from chat.models import Conversation, Message
from chat.services import conversation_create, conversation_set_model, message_create
from tests.chat.conftest import acreate_conversation
from tests.chat.helpers import connected, turn_end

pytestmark = pytest.mark.django_db


def test_offline_the_page_has_one_banner_and_names_no_model(alice_client, alice, settings):
    settings.OPENAI_API_KEY = ""
    conversation = conversation_create(user=alice)
    message_create(conversation=conversation, role="user", content="Hi")
    for _ in range(2):
        message_create(conversation=conversation, role="assistant", content="Hm.", model="offline")
    page = alice_client.get(conversation.get_absolute_url()).content.decode()
    assert page.count('class="offline-banner"') == 1
    assert 'id="model-picker"' not in page
    assert settings.OPENAI_MODEL not in page  # the default model is not there to name
    assert page.count('class="badge offline" title="Written by') == 2
    assert 'class="reply-model"' not in page


def test_a_server_with_several_models_gets_a_picker_and_replies_name_theirs(
    alice_client, alice, fake_llm
):
    conversation = conversation_create(user=alice)
    message_create(conversation=conversation, role="user", content="Hi")
    message_create(conversation=conversation, role="assistant", content="Yo", model="fake-large")
    page = alice_client.get(conversation.get_absolute_url()).content.decode()
    assert 'id="model-picker"' in page and "offline-banner" not in page
    assert (
        '<span class="reply-model" title="The model that wrote this reply">fake-large</span>'
        in page
    )

    url = reverse("chat:model", args=[conversation.pk])
    response = alice_client.post(url, {"model": "fake-small"}, headers={"HX-Request": "true"})
    assert (
        response.status_code == 200 and 'value="fake-small" selected' in response.content.decode()
    )
    conversation.refresh_from_db()
    assert conversation.model == "fake-small"
    assert alice_client.post(url, {"model": "not-listed"}).status_code == 400
    assert alice_client.post(url, {"model": ""}).status_code == 302  # back to the default
    conversation.refresh_from_db()
    assert conversation.model == ""


def test_a_new_conversation_starts_with_the_model_picked(alice_client, alice, fake_llm):
    response = alice_client.post(
        reverse("chat:new"), {"model": "fake-large"}, headers={"Accept": "application/json"}
    )
    assert response.status_code == 201
    assert alice.conversations.get().model == "fake-large"


def test_another_users_conversation_is_not_theirs_to_change(client, alice, bob, fake_llm):
    conversation = conversation_create(user=alice)
    client.force_login(bob)
    response = client.post(reverse("chat:model", args=[conversation.pk]), {"model": "fake-small"})
    assert response.status_code == 404
    conversation.refresh_from_db()
    assert conversation.model == ""


def test_a_server_with_one_model_offers_no_picker(alice_client, alice, fake_llm, settings):
    fake_llm.behaviour.models = (settings.OPENAI_MODEL,)
    conversation = conversation_create(user=alice)
    page = alice_client.get(conversation.get_absolute_url()).content.decode()
    assert 'id="model-picker"' not in page
    assert Message.objects.count() == 0


@pytest.mark.django_db(transaction=True)
async def test_an_open_tab_answers_with_the_model_picked_after_it_opened(alice, fake_llm):
    """The tab keeps its conversation: a change from the page reaches it before its next
    turn."""
    conversation = await acreate_conversation(alice)
    tab = await connected(alice, conversation.pk)
    changed = await sync_to_async(conversation_set_model)(
        conversation=await Conversation.objects.aget(pk=conversation.pk), model="fake-small"
    )
    await sync_to_async(fanout.conversation_settings_changed)(changed)
    end = await turn_end(tab, "Which model?", client_id="m-1")
    await tab.disconnect()
    assert fake_llm.chat_requests()[-1]["body"]["model"] == "fake-small"
    assert 'class="reply-model"' in end["article"] and "fake-small" in end["article"]
