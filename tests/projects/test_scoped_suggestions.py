"""A new chat's starter suggestions come only from the scopes the new conversation reads:
outside any project, what was learned everywhere; in a project, that and the project's own.
Another project's task or decision is never offered."""

import pytest

from chat.models import Conversation, Message
from chat.services import conversation_create
from memory.services.memories import action_item_remember, decision_remember
from projects.services import project_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def attic(alice):
    return project_create(user=alice, name="Attic", description="Clearing the attic.")


def _learn_in(user, project, what):
    conversation = conversation_create(user=user, title=f"Chat on {what}", project=project)
    action_item_remember(user=user, conversation=conversation, what=f"Do {what}")
    decision_remember(user=user, conversation=conversation, what=f"Chose {what}")


def _suggested(client, url) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return " ".join(s.label + " " + s.text for s in response.context["suggestions"])


def test_a_projects_task_is_not_suggested_outside_it(alice_client, alice, garden, attic):
    _learn_in(alice, garden, "tomato staking")
    shown = _suggested(alice_client, "/")
    assert "tomato staking" not in shown


def test_a_projects_task_is_suggested_in_a_new_chat_in_it(alice_client, alice, garden, attic):
    _learn_in(alice, garden, "tomato staking")
    _learn_in(alice, attic, "box sorting")
    shown = _suggested(alice_client, f"/?project={garden.pk}")
    assert "Help with: Do tomato staking" in shown
    assert "Revisit: Chose tomato staking" in shown
    assert "box sorting" not in shown  # another project's: never


def test_what_was_learned_everywhere_is_suggested_in_a_project_too(alice_client, alice, garden):
    _learn_in(alice, None, "tax return")
    assert "Help with: Do tax return" in _suggested(alice_client, "/")
    assert "Help with: Do tax return" in _suggested(alice_client, f"/?project={garden.pk}")


def test_another_projects_task_is_never_suggested(alice_client, alice, garden, attic):
    _learn_in(alice, attic, "box sorting")
    for url in ("/", f"/?project={garden.pk}"):
        assert "box sorting" not in _suggested(alice_client, url)


def test_a_projects_conversation_is_not_offered_to_pick_up_outside_it(
    alice_client, alice, garden, attic
):
    _learn_in(alice, garden, "tomato staking")  # its conversation's title names it
    Message.objects.create(
        conversation=Conversation.objects.get(project=garden),
        role=Message.Role.ASSISTANT,
        content="Stake them early.",
        status=Message.Status.COMPLETE,
    )
    assert "Pick up" not in _suggested(alice_client, "/")
    assert "Pick up" not in _suggested(alice_client, f"/?project={attic.pk}")
    assert "Pick up “Chat on tomato staking”" in _suggested(alice_client, f"/?project={garden.pk}")


def test_an_empty_conversation_in_a_project_is_offered_the_projects_tasks(
    alice_client, alice, garden, attic
):
    _learn_in(alice, garden, "tomato staking")
    _learn_in(alice, attic, "box sorting")
    empty = conversation_create(user=alice, project=garden)
    shown = _suggested(alice_client, f"/c/{empty.pk}/")
    assert "Help with: Do tomato staking" in shown and "box sorting" not in shown
