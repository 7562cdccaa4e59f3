"""Another user's project id, in any URL or form, is refused as not found (issue 37 item 6)."""

import pytest
from django.urls import reverse

from chat.models import Conversation
from chat.services import conversation_create
from projects.models import Project

pytestmark = pytest.mark.django_db

PAGES = ["detail", "edit", "knowledge", "briefing", "delete", "forget"]
POSTS = ["edit", "archive", "delete", "forget"]


@pytest.fixture
def bob_client(client, bob):
    client.force_login(bob)
    return client


@pytest.mark.parametrize("name", PAGES)
def test_another_users_project_pages_are_404(bob_client, garden, name):
    assert bob_client.get(reverse(f"projects:{name}", args=[garden.pk])).status_code == 404


@pytest.mark.parametrize("name", POSTS)
def test_another_users_project_cannot_be_changed(bob_client, garden, name):
    data = {"name": "Mine", "archived": "1", "fate": "keep" if name == "delete" else "delete"}
    response = bob_client.post(reverse(f"projects:{name}", args=[garden.pk]), data)
    assert response.status_code == 404
    garden.refresh_from_db()
    assert (garden.name, garden.archived) == ("Garden", False)


def test_a_chat_cannot_start_in_another_users_project(bob_client, bob, garden):
    assert bob_client.get(f"/?project={garden.pk}").status_code == 404
    response = bob_client.post(reverse("chat:new"), {"project": garden.pk})
    assert response.status_code == 404
    assert not Conversation.objects.filter(user=bob).exists()


def test_a_conversation_cannot_move_into_another_users_project(bob_client, bob, garden):
    mine = conversation_create(user=bob)
    response = bob_client.post(reverse("projects:move", args=[mine.pk]), {"project": garden.pk})
    assert response.status_code == 404
    mine.refresh_from_db()
    assert mine.project_id is None


def test_another_users_conversation_cannot_be_moved(bob_client, alice, bob, garden):
    theirs = conversation_create(user=alice)
    mine = Project.objects.create(user=bob, name="Bob's")
    response = bob_client.post(reverse("projects:move", args=[theirs.pk]), {"project": mine.pk})
    assert response.status_code == 404
    theirs.refresh_from_db()
    assert theirs.project_id is None


@pytest.mark.parametrize("value", ["abc", "-1", "99999999999999999999999"])
def test_a_malformed_project_id_is_refused(alice_client, alice, value):
    conversation = conversation_create(user=alice)
    response = alice_client.post(
        reverse("projects:move", args=[conversation.pk]), {"project": value}
    )
    assert response.status_code == 400
    assert alice_client.get(f"/?project={value}").status_code == 404


def test_another_users_project_learning_cannot_be_forgotten(bob_client, alice, garden):
    from memory.models import Fact

    fact = Fact.objects.create(user=alice, project=garden, text="Beds face east", dedupe_key="e")
    url = reverse("projects:forget", args=[garden.pk])
    assert bob_client.post(url, {"fate": "delete"}).status_code == 404
    assert Fact.objects.filter(pk=fact.pk, project=garden).exists()
