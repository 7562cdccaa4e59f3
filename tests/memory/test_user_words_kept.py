"""A one-word memory the user writes themself is theirs to keep: the rule that an extracted
fact, decision or action item is a statement (``memory.extraction.validation``) is for what a
model or the offline extractor makes of a conversation, never for the user's own words."""

import json

import pytest
from django.urls import reverse

from mcp_server.memories import memory_remember
from memory.extraction import validation
from memory.models import ActionItem, Decision, Fact
from memory.services.edits import memory_add
from userdata.transfer.export import user_data_export
from userdata.transfer.importer import user_data_import

pytestmark = pytest.mark.django_db


def test_a_one_word_memory_typed_on_the_memory_page_is_kept(alice_client, alice):
    """Words an extracted item could not be ("Python", "Kotlin", "Deploy") are the user's
    choice on the Memory page."""
    assert validation.rejection("Python")  # what a model answering so would lose
    for kind, text in (("fact", "Python"), ("decision", "Kotlin"), ("action_item", "Deploy")):
        response = alice_client.post(reverse("memory:add"), {"kind": kind, "text": text})
        assert response.status_code == 302
    assert Fact.objects.get(user=alice).text == "Python"
    assert Decision.objects.get(user=alice).what == "Kotlin"
    assert ActionItem.objects.get(user=alice).what == "Deploy"


def test_a_memory_edited_down_to_one_word_keeps_it(alice_client, alice):
    fact = memory_add(user=alice, kind="fact", text="The user is vegetarian.")
    alice_client.post(reverse("memory:edit", args=["fact", fact.pk]), {"text": "Vegetarian"})
    fact.refresh_from_db()
    assert fact.text == "Vegetarian"


def test_a_one_word_memory_remembered_through_mcp_is_kept(alice):
    """The user's client asked to remember it: the user's words, not an extraction."""
    result = memory_remember(user=alice, kind="fact", text="Python")
    assert result["outcome"] == "remembered"
    assert Fact.objects.get(user=alice).text == "Python"


def test_the_import_of_the_users_own_export_keeps_a_one_word_memory(alice, staff):
    memory_add(user=alice, kind="fact", text="Python")
    memory_add(user=alice, kind="decision", text="Kotlin")
    exported = json.loads(json.dumps(user_data_export(user=alice), default=str))
    result = user_data_import(document=exported, actor=staff, username="alice-again")
    assert Fact.objects.get(user=result.user).text == "Python"
    assert Decision.objects.get(user=result.user).what == "Kotlin"
