"""Creating, editing, archiving and deleting a project from its pages (issue 37 items 1, 6)."""

import pytest
from django.urls import reverse

from chat.models import Conversation
from chat.services import conversation_create, message_create
from memory.models import Decision, Fact
from projects.models import INSTRUCTIONS_MAX, NAME_MAX, Project
from projects.services import project_create

pytestmark = pytest.mark.django_db


def test_a_project_is_created_with_a_name_description_and_instructions(alice_client, alice):
    """The new project's page opens, its instructions shown."""
    response = alice_client.post(
        reverse("projects:new"),
        {"name": "  Garden   plan ", "description": "Beds", "instructions": "Metric units."},
    )
    project = Project.objects.get(user=alice)
    assert response.status_code == 302 and response.url == project.get_absolute_url()
    assert (project.name, project.description, project.instructions) == (
        "Garden plan", "Beds", "Metric units.",
    )  # fmt: skip
    page = alice_client.get(project.get_absolute_url())
    assert "Metric units." in page.text and "New chat in this project" in page.text


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"name": "   "}, "This field is required."),
        ({"name": "x" * (NAME_MAX + 1)}, f"at most {NAME_MAX} characters"),
        ({"name": "ok", "instructions": "y" * (INSTRUCTIONS_MAX + 1)}, "at most"),
        ({"name": "gARDEN"}, "You already have a project called"),
    ],
)
def test_bad_names_and_instructions_are_refused_with_a_clear_error(
    alice_client, garden, data, error
):
    """Blank, too long, or a name the user already has in any case: 400, nothing stored."""
    response = alice_client.post(reverse("projects:new"), data)
    assert response.status_code == 400
    assert error in response.content.decode().replace("&#x27;", "'")
    assert Project.objects.count() == 1


def test_another_users_project_of_the_same_name_is_no_clash(client, bob, garden):
    client.force_login(bob)
    response = client.post(reverse("projects:new"), {"name": "garden"})
    assert response.status_code == 302
    assert Project.objects.filter(user=bob, name="garden").exists()


def test_a_project_is_renamed_and_its_instructions_edited(alice_client, garden):
    url = reverse("projects:edit", args=[garden.pk])
    assert "Always give quantities" in alice_client.get(url).text
    response = alice_client.post(url, {"name": "Allotment", "instructions": "Be brief."})
    assert response.status_code == 302
    garden.refresh_from_db()
    assert (garden.name, garden.description, garden.instructions) == (
        "Allotment", "", "Be brief.",
    )  # fmt: skip


def test_renaming_to_its_own_name_in_another_case_is_allowed(alice_client, garden):
    response = alice_client.post(reverse("projects:edit", args=[garden.pk]), {"name": "GARDEN"})
    assert response.status_code == 302
    garden.refresh_from_db()
    assert garden.name == "GARDEN"


def test_archiving_hides_the_project_from_the_sidebar_and_unarchiving_brings_it_back(
    alice_client, garden
):
    alice_client.post(reverse("projects:archive", args=[garden.pk]), {"archived": "1"})
    garden.refresh_from_db()
    assert garden.archived
    assert f'data-project="{garden.pk}"' not in alice_client.get("/").text
    assert "archived" in alice_client.get(reverse("projects:list")).text
    alice_client.post(reverse("projects:archive", args=[garden.pk]), {"archived": "0"})
    garden.refresh_from_db()
    assert not garden.archived
    assert f'data-project="{garden.pk}"' in alice_client.get("/").text


def _project_with_talk(alice, garden):
    conversation = conversation_create(user=alice, title="Tomatoes", project=garden)
    message = message_create(conversation=conversation, role="user", content="Plant in May.")
    fact = Fact.objects.create(
        user=alice, conversation=conversation, project=garden, text="Plants tomatoes in May",
        dedupe_key="tomato",
    )  # fmt: skip
    fact.source_messages.add(message)
    decision = Decision.objects.create(
        user=alice, conversation=None, project=garden, what="Raised beds", dedupe_key="beds"
    )
    return conversation, fact, decision


def test_the_delete_page_asks_what_becomes_of_conversations_and_memories(alice_client, garden):
    page = alice_client.get(reverse("projects:delete", args=[garden.pk])).text
    assert "move the conversations and memories to everywhere" in page
    assert "Delete the conversations and everything learned in them" in page


def test_deleting_and_keeping_moves_everything_to_everywhere(alice_client, alice, garden):
    conversation, fact, decision = _project_with_talk(alice, garden)
    response = alice_client.post(reverse("projects:delete", args=[garden.pk]), {"fate": "keep"})
    assert response.status_code == 302
    assert not Project.objects.exists()
    listed = alice_client.get(response.url).text  # the list says what became of them
    assert "The project “Garden” was deleted: its conversations and memories now reach" in listed
    conversation.refresh_from_db()
    assert conversation.project is None
    assert Fact.objects.get(pk=fact.pk).project is None
    assert Decision.objects.get(pk=decision.pk).project is None


def test_deleting_everything_needs_the_name_typed(alice_client, alice, garden):
    _project_with_talk(alice, garden)
    url = reverse("projects:delete", args=[garden.pk])
    response = alice_client.post(url, {"fate": "delete", "confirm": "nope"})
    assert response.status_code == 400 and "Type the project" in response.text
    assert Project.objects.exists()


def test_deleting_everything_deletes_its_conversations_and_memories(alice_client, alice, garden):
    """Its conversations go as the user deletes one (what was learned there forgotten), then
    the project's remaining memories; what is outside the project stays."""
    _project_with_talk(alice, garden)
    outside = conversation_create(user=alice, title="Holiday")
    kept = Fact.objects.create(user=alice, conversation=outside, text="Likes Porto", dedupe_key="p")
    url = reverse("projects:delete", args=[garden.pk])
    response = alice_client.post(url, {"fate": "delete", "confirm": "garden"})
    assert response.status_code == 302
    assert not Project.objects.exists()
    listed = alice_client.get(response.url).text
    assert "its conversations and what was learned only in them were deleted" in listed
    assert list(Conversation.objects.all()) == [outside]
    assert list(Fact.objects.all()) == [kept]
    assert not Decision.objects.exists()
    assert Fact.history.filter(history_type="-", history_user=alice).exists()


def test_the_projects_list_shows_active_projects_and_the_form(alice_client, garden):
    project_create(user=garden.user, name="Thesis")
    page = alice_client.get(reverse("projects:list")).text
    assert "Garden" in page and "Thesis" in page and "Create project" in page


def test_forgetting_what_a_project_learned_asks_move_or_delete(alice_client, alice, garden):
    """From the project's Manage menu: the page asks; moved, its memories reach everywhere,
    its conversations staying in it."""
    conversation, fact, decision = _project_with_talk(alice, garden)
    url = reverse("projects:forget", args=[garden.pk])
    assert url in alice_client.get(garden.get_absolute_url()).text
    page = alice_client.get(url).text
    assert "Move it to everywhere" in page and "Forget it: delete its memories" in page

    response = alice_client.post(url, {"fate": "everywhere"}, follow=True)

    assert response.redirect_chain[-1][0] == reverse("projects:knowledge", args=[garden.pk])
    assert "What “Garden” learned was moved to everywhere." in response.text
    assert Fact.objects.get(pk=fact.pk).project is None
    assert Decision.objects.get(pk=decision.pk).project is None
    conversation.refresh_from_db()
    assert conversation.project_id == garden.pk


def test_forgetting_what_a_project_learned_can_delete_it(alice_client, alice, garden):
    conversation, fact, _decision = _project_with_talk(alice, garden)
    outside = Fact.objects.create(user=alice, text="Likes Porto", dedupe_key="porto")
    url = reverse("projects:forget", args=[garden.pk])
    assert alice_client.post(url, {"fate": "delete"}).status_code == 302
    assert list(Fact.objects.all()) == [outside] and not Decision.objects.exists()
    assert Conversation.objects.get(pk=conversation.pk).project_id == garden.pk
    assert Fact.history.filter(id=fact.pk, history_type="-", history_user=alice).exists()


def test_forgetting_needs_a_choice(alice_client, alice, garden):
    _conversation, fact, _decision = _project_with_talk(alice, garden)
    url = reverse("projects:forget", args=[garden.pk])
    response = alice_client.post(url, {"fate": "maybe"})
    assert response.status_code == 400 and 'role="alert"' in response.text
    assert Fact.objects.get(pk=fact.pk).project_id == garden.pk
