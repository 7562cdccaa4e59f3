"""The "Remembered: …" cue under a reply links to where what it remembered is listed: a
project's conversation learns for the project, so its cue leads to the project's knowledge
page; outside any project, to the Memory page (issue 37)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from chat import protocol
from chat.services import conversation_create, message_create
from memory.models import Fact, MemoryEvent
from memory.selectors import notice_get
from memory.services import memories_from_turn
from projects.services import conversation_move

pytestmark = pytest.mark.django_db


def tell(conversation, text="My daughter's name is Ada."):
    said = message_create(conversation=conversation, role="user", content=text)
    message_create(conversation=conversation, role="assistant", content="Noted.", reply_to=said)
    memories_from_turn(conversation=conversation, message=said)
    return MemoryEvent.objects.get(conversation=conversation)


def test_a_project_conversations_cue_links_to_the_projects_knowledge(alice_client, alice, garden):
    conversation = conversation_create(user=alice, project=garden)
    event = tell(conversation)
    assert Fact.objects.get().project == garden  # what it links to lists it
    knowledge = reverse("projects:knowledge", args=[garden.pk])
    link = f'<a href="{knowledge}">What this project knows</a>'

    page = alice_client.get(conversation.get_absolute_url()).content.decode()
    assert link in page  # rendered with the page
    pushed = protocol.memory_event(notice_get(event_id=event.pk))["html"]
    assert link in pushed and 'href="/memory/"' not in pushed  # pushed to the open tabs
    assert "Ada" in alice_client.get(knowledge).content.decode()


def test_a_cue_outside_any_project_links_to_the_memory_page(alice_client, alice, garden):
    conversation = conversation_create(user=alice)
    event = tell(conversation)
    pushed = protocol.memory_event(notice_get(event_id=event.pk))["html"]
    assert '<a href="/memory/">Your memory</a>' in pushed and "/knowledge/" not in pushed
    page = alice_client.get(conversation.get_absolute_url()).content.decode()
    assert '<a href="/memory/">Your memory</a>' in page and "/knowledge/" not in page


def test_the_cue_follows_its_conversation_out_of_the_project(alice, garden):
    """Moved out, what came only from it is everywhere's again: so is the cue's link."""
    conversation = conversation_create(user=alice, project=garden)
    event = tell(conversation)
    conversation_move(conversation=conversation, project=None)
    assert Fact.objects.get().project is None
    pushed = protocol.memory_event(notice_get(event_id=event.pk))["html"]
    assert '<a href="/memory/">Your memory</a>' in pushed and "/knowledge/" not in pushed


def test_an_undone_cue_in_a_project_links_to_the_projects_knowledge(alice_client, alice, garden):
    conversation = conversation_create(user=alice, project=garden)
    event = tell(conversation)
    response = alice_client.post(
        reverse("memory:event_undo", args=[event.pk]), HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert "Undone." in html
    assert f'href="{reverse("projects:knowledge", args=[garden.pk])}"' in html
