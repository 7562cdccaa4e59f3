"""A conversation starts in a project, moves in and out of one, and the sidebar groups a
project's conversations under it; temporary chats stay outside every project."""

import pytest
from django.urls import reverse

from chat.models import Conversation
from chat.services import conversation_create
from projects.services import project_set_archived

pytestmark = pytest.mark.django_db


def test_new_chat_in_a_project_starts_the_conversation_in_it(alice_client, alice, garden):
    page = alice_client.get(f"/?project={garden.pk}").text
    assert f'data-project="{garden.pk}"' in page and "New conversation in Garden" in page
    response = alice_client.post(
        reverse("chat:new"), {"project": garden.pk}, headers={"Accept": "application/json"}
    )
    assert response.status_code == 201
    assert Conversation.objects.get(pk=response.json()["id"]).project == garden


def test_a_temporary_chat_cannot_start_in_a_project(alice_client, alice, garden):
    response = alice_client.post(reverse("chat:new"), {"project": garden.pk, "temporary": "on"})
    assert response.status_code == 400
    assert not Conversation.objects.exists()
    # The temporary page ignores the project: nothing says it is in one.
    assert 'data-project=""' in alice_client.get(f"/?temporary=1&project={garden.pk}").text


def test_an_archived_project_takes_no_new_chat(alice_client, garden):
    project_set_archived(project=garden, archived=True)
    assert alice_client.get(f"/?project={garden.pk}").status_code == 404


def test_a_conversation_moves_into_a_project_and_out_again(alice_client, alice, garden):
    conversation = conversation_create(user=alice, title="Seeds")
    url = reverse("projects:move", args=[conversation.pk])
    response = alice_client.post(url, {"project": garden.pk, "next": "/"})
    assert response.status_code == 302 and response.url == "/"
    conversation.refresh_from_db()
    assert conversation.project == garden
    alice_client.post(url, {"project": ""})
    conversation.refresh_from_db()
    assert conversation.project is None


def test_moving_goes_back_only_to_a_page_of_this_site(alice_client, alice, garden):
    conversation = conversation_create(user=alice)
    url = reverse("projects:move", args=[conversation.pk])
    response = alice_client.post(url, {"project": garden.pk, "next": "https://evil.example/"})
    assert response.url == conversation.get_absolute_url()


def test_a_temporary_conversation_cannot_move_into_a_project(alice_client, alice, garden):
    conversation = conversation_create(user=alice, temporary=True)
    url = reverse("projects:move", args=[conversation.pk])
    assert alice_client.post(url, {"project": garden.pk}).status_code == 400
    conversation.refresh_from_db()
    assert conversation.project is None


def test_the_sidebar_groups_a_projects_conversations_under_it(alice_client, alice, garden):
    inside = conversation_create(user=alice, title="Tomato beds", project=garden)
    outside = conversation_create(user=alice, title="Holiday in Porto")
    page = alice_client.get(inside.get_absolute_url()).text
    group = page[page.index(f'data-project="{garden.pk}"') :]
    group = group[: group.index("</details>")]
    assert "Tomato beds" in group and "Holiday in Porto" not in group
    assert "Holiday in Porto" in page
    assert "current-project" in page  # the open conversation's project is marked
    # The header says which project, and its menu moves it.
    assert f'href="{garden.get_absolute_url()}"' in page
    assert reverse("projects:move", args=[inside.pk]) in page
    assert outside.pk


def test_the_sidebar_fragment_keeps_the_groups(alice_client, alice, garden):
    conversation_create(user=alice, title="Tomato beds", project=garden)
    response = alice_client.get("/", headers={"HX-Request": "true", "HX-Target": "sidebar-list"})
    assert "project-groups" in response.text and "Tomato beds" in response.text


def test_an_empty_project_is_listed_so_a_chat_can_start_in_it(alice_client, garden):
    page = alice_client.get("/").text
    assert f"/?project={garden.pk}" in page


def test_the_projects_page_lists_its_conversations_archived_ones_marked(
    alice_client, alice, garden
):
    conversation_create(user=alice, title="Tomato beds", project=garden)
    old = conversation_create(user=alice, title="Last year's beans", project=garden)
    old.archived = True
    old.save()
    conversation_create(user=alice, title="Holiday")
    page = alice_client.get(garden.get_absolute_url()).text
    assert "Tomato beds" in page and "Last year&#x27;s beans" in page and "Holiday" not in page
