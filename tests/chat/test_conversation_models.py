"""The conversation settings offer the models the server lists (GET /v1/models, cached)."""

import pytest
from django.urls import reverse

from chat.models import Conversation
from llm.catalogue import model_choices, server_models

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_the_settings_list_the_servers_models_default_first(alice_client, conversation, fake_llm):
    html = alice_client.get(conversation.get_absolute_url()).content.decode()
    assert html.index("gpt-4o (default)") < html.index("fake-large") < html.index("fake-small")


def test_a_model_from_the_list_is_saved(alice_client, conversation, fake_llm):
    response = alice_client.post(
        reverse("chat:settings", args=[conversation.pk]),
        {"strategy": "token_limit", "context_budget": "", "model": "fake-small"},
        **HTMX,
    )
    assert response.status_code == 200
    assert Conversation.objects.get(pk=conversation.pk).model == "fake-small"


def test_a_model_the_server_does_not_list_is_refused(alice_client, conversation, fake_llm):
    alice_client.post(
        reverse("chat:settings", args=[conversation.pk]),
        {"strategy": "token_limit", "context_budget": "", "model": "made-up"},
        **HTMX,
    )
    assert Conversation.objects.get(pk=conversation.pk).model == ""


def test_the_list_is_cached(fake_llm):
    assert server_models() == ["fake-large", "fake-small"]
    fake_llm.behaviour.models = ("other",)
    assert server_models() == ["fake-large", "fake-small"]
    assert len([r for r in fake_llm.requests if r["path"].endswith("/models")]) == 1


def test_no_server_lists_the_default_and_the_conversations_own(settings):
    settings.OPENAI_API_KEY = ""
    assert model_choices("llama-3") == [("", "gpt-4o (default)"), ("llama-3", "llama-3")]


def test_a_server_that_cannot_list_offers_the_default(settings):
    settings.OPENAI_API_KEY = "key"
    settings.OPENAI_BASE_URL = "http://127.0.0.1:9/v1"  # nothing listens
    assert model_choices() == [("", "gpt-4o (default)")]
