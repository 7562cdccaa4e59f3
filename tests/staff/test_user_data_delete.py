"""Deleting a user's data: a confirmation first, then everything derived is gone, traceably."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from chat.models import Conversation, Message
from memory.models import ActionItem, Decision, Fact, Summary
from profiles.models import UserProfile
from profiles.services import profile_observe_message

pytestmark = pytest.mark.django_db


@pytest.fixture
def url(alice):
    return reverse("staff:user_data_delete", args=[alice.pk])


def test_the_confirmation_page_says_what_will_go(staff_client, world, url):
    """The counts of what will be deleted, and a box to tick."""
    html = staff_client.get(url).content.decode()
    assert "1 conversation with 2 messages and 2 summary versions" in html
    assert "1 fact, 1 decision, 1 action item" in html
    assert 'name="confirm"' in html


def test_nothing_happens_without_the_box_ticked(staff_client, world, alice, url):
    """Posting without confirm shows the error and deletes nothing."""
    html = staff_client.post(url, {}).content.decode()
    assert "Tick the box to confirm." in html
    assert Conversation.objects.filter(user=alice).exists()


def test_everything_derived_is_deleted_and_the_account_stays(
    staff_client, staff, world, alice, bob, url
):
    """Conversations, messages, summaries, memories and the profile go; history records who
    deleted them; an admin log entry records the erasure; Bob's data is untouched."""
    profile_observe_message(user=alice, text="Hello there, dear friend.")
    response = staff_client.post(url, {"confirm": "on"})
    assert response.status_code == 302
    alice.refresh_from_db()
    assert not Conversation.objects.filter(user=alice).exists()
    assert not Message.objects.filter(conversation__user=alice).exists()
    assert not Summary.objects.filter(conversation__user=alice).exists()
    for model in (Fact, Decision, ActionItem):
        assert not model.objects.filter(user=alice).exists()
    assert not UserProfile.objects.filter(user=alice).exists()
    assert Fact.objects.filter(user=bob).exists()
    deleted = Fact.history.get(id=world["fact"].pk, history_type="-")
    assert (
        deleted.history_user == staff
        and deleted.history_change_reason == "user data erased by staff"
    )
    entry = LogEntry.objects.get(object_id=str(alice.pk))
    assert (
        entry.user == staff
        and "Erased the user's data: 1 conversations, 2 messages" in entry.change_message
    )


def test_the_history_can_be_erased_too(staff_client, staff, world, alice, url):
    """With erase_history, no historical copy of the user's memories or summaries remains."""
    staff_client.post(url, {"confirm": "on", "erase_history": "on"})
    assert not Fact.history.filter(user_id=alice.pk).exists()
    assert not Decision.history.filter(user_id=alice.pk).exists()
    summary_ids = [s.pk for s in world["summaries"]]
    assert not Summary.history.filter(id__in=summary_ids).exists()
    assert "and its edit history" in LogEntry.objects.get(object_id=str(alice.pk)).change_message
    assert Fact.history.filter(id=world["bob_fact"].pk).exists()


def test_the_search_index_forgets_the_deleted_data(staff_client, world, alice, url):
    """The trigger-maintained index holds nothing of the user afterwards."""
    from django.db import connection

    staff_client.post(url, {"confirm": "on"})
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM memory_search WHERE user_id = %s", [alice.pk])
        assert cursor.fetchone()[0] == 0
