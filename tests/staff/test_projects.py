"""Staff and a user's projects (issue 37): the user's page lists them with their counts,
conversations and memories filter by project (or outside any), and a project's conversations
are re-summarised together."""

from __future__ import annotations

import pytest
from django.urls import reverse

from chat.models import Conversation
from chat.services import conversation_create, message_create
from memory.models import Fact, SummaryRun
from projects.models import Project

pytestmark = pytest.mark.django_db


@pytest.fixture
def garden(alice, world):
    project = Project.objects.create(user=alice, name="Garden <b>beds</b>")
    talk = conversation_create(user=alice, title="Tomato talk")
    Conversation.objects.filter(pk=talk.pk).update(project=project)
    message_create(conversation=talk, role="user", content="The tomatoes need staking.")
    Fact.objects.create(user=alice, conversation=talk, project=project, text="Tomatoes in bed two")
    return project


def test_the_user_page_lists_the_projects_with_their_counts(staff_client, alice, garden):
    html = staff_client.get(reverse("staff:user", args=[alice.pk])).content.decode()
    assert "Garden &lt;b&gt;beds&lt;/b&gt;" in html and "<b>beds</b>" not in html
    assert f"project={garden.pk}" in html
    assert reverse("staff:project_resummarise", args=[garden.pk]) in html


def test_conversations_filter_by_project(staff_client, alice, garden):
    url = reverse("staff:user", args=[alice.pk])
    in_project = staff_client.get(url, {"project": str(garden.pk)}).content.decode()
    outside = staff_client.get(url, {"project": "none"}).content.decode()
    assert "Tomato talk" in in_project and "Launch planning" not in in_project
    assert "Launch planning" in outside and "Tomato talk" not in outside


def test_memories_filter_by_project(staff_client, alice, garden, world):
    url = reverse("staff:memories")
    in_project = staff_client.get(url, {"kind": "fact", "project": str(garden.pk)})
    outside = staff_client.get(url, {"kind": "fact", "project": "none"})
    assert "Tomatoes in bed two" in in_project.content.decode()
    assert "Alice leads the launch." not in in_project.content.decode()
    assert "Alice leads the launch." in outside.content.decode()
    assert "Tomatoes in bed two" not in outside.content.decode()


def test_a_project_is_resummarised_conversation_by_conversation(
    staff_client, staff, garden, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        response = staff_client.post(reverse("staff:project_resummarise", args=[garden.pk]))
    assert response.status_code == 302
    runs = SummaryRun.objects.all()
    assert [r.conversation.project_id for r in runs] == [garden.pk]
    assert runs[0].requested_by == staff


def test_a_missing_project_is_not_found(staff_client):
    response = staff_client.post(reverse("staff:project_resummarise", args=[999999]))
    assert response.status_code == 404
