"""The conversation list: pinned ones first, the rest grouped by their last activity (Today,
Yesterday, Previous 7 days, then by month); pinning is the owner's only."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from chat.models import Conversation
from chat.services import conversation_create

pytestmark = pytest.mark.django_db


def _at(conversation, days_ago):
    Conversation.objects.filter(pk=conversation.pk).update(
        updated_at=timezone.now() - timedelta(days=days_ago)
    )


def _groups(page: str) -> list[str]:
    return re.findall(r'<h2 class="list-group">([^<]+)</h2>', page)


def test_the_list_is_grouped_by_date_with_pinned_first(alice_client, alice):
    now = conversation_create(user=alice, title="Fresh")
    old = conversation_create(user=alice, title="Ancient")
    week = conversation_create(user=alice, title="Last week")
    yesterday = conversation_create(user=alice, title="Yesterday's")
    _at(old, 90)
    _at(week, 4)
    _at(yesterday, 1)
    month = (timezone.localdate() - timedelta(days=90)).strftime("%B %Y")
    page = alice_client.get("/").content.decode()
    assert _groups(page) == ["Today", "Yesterday", "Previous 7 days", month]
    response = alice_client.post(reverse("chat:pin", args=[old.pk]), {"pinned": "1"})
    assert response.status_code == 302
    page = alice_client.get("/").content.decode()
    assert _groups(page) == ["Pinned", "Today", "Yesterday", "Previous 7 days"]
    listed = page.split('id="sidebar-list"')[1]
    assert listed.index("Ancient") < listed.index("Fresh") and "Unpin" in listed
    alice_client.post(reverse("chat:pin", args=[old.pk]), {"pinned": "0"})
    assert _groups(alice_client.get("/").content.decode())[0] == "Today"
    assert now.pk


def test_htmx_pin_answers_the_list(alice_client, alice):
    conversation = conversation_create(user=alice, title="Keep me")
    html = alice_client.post(
        reverse("chat:pin", args=[conversation.pk]), {"pinned": "1"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert html.lstrip().startswith('<div id="sidebar-list">') and "Pinned" in html


def test_nobody_else_pins(client, bob, alice):
    conversation = conversation_create(user=alice, title="Mine")
    client.force_login(bob)
    assert client.post(reverse("chat:pin", args=[conversation.pk])).status_code == 404
    conversation.refresh_from_db()
    assert conversation.pinned_at is None
