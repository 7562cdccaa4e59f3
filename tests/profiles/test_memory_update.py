"""POST /profile/memory/: the memory switch."""

import pytest
from django.urls import reverse

from profiles.instructions import memory_enabled
from profiles.models import UserProfile

pytestmark = pytest.mark.django_db

URL = "/profile/memory/"


def test_it_turns_memory_off_and_on(alice_client, alice):
    """Posting false then true flips the switch and redirects back each time."""
    response = alice_client.post(URL, {"memory_enabled": "false"})
    assert response.status_code == 302
    assert response.url == reverse("profiles:profile")
    assert memory_enabled(alice) is False
    alice_client.post(URL, {"memory_enabled": "true"})
    assert memory_enabled(alice) is True


def test_it_is_idempotent(alice_client, alice):
    """Posting the current value again changes nothing and records no history."""
    alice_client.post(URL, {"memory_enabled": "false"})
    alice_client.post(URL, {"memory_enabled": "false"})
    profile = UserProfile.objects.get(user=alice)
    assert [h.memory_enabled for h in profile.history.order_by("history_date")] == [True, False]


def test_it_returns_the_switch_and_dependent_sections_over_htmx(alice_client):
    """Over HTMX: the memory section, with the style and preview sections out of band."""
    response = alice_client.post(URL, {"memory_enabled": "false"}, HTTP_HX_REQUEST="true")
    content = response.content.decode()
    assert content.lstrip().startswith('<section id="memory"')
    assert "Memory is <strong>off</strong>" in content
    assert "Turn memory on" in content
    assert '<section id="learned-style" class="card" hx-swap-oob="true">' in content
    assert "nothing is learned from your messages" in content
    assert '<section id="prompt-preview" class="card" hx-swap-oob="true">' in content


def test_it_rejects_a_missing_value(alice_client, alice):
    """Without a value there is nothing to switch to: 400, nothing changed."""
    response = alice_client.post(URL, {})
    assert response.status_code == 400
    assert memory_enabled(alice) is True


def test_it_switches_only_the_signed_in_users_memory(alice_client, alice, bob):
    """Alice turning her memory off leaves Bob's on."""
    alice_client.post(URL, {"memory_enabled": "false", "user": bob.pk})
    assert memory_enabled(alice) is False
    assert memory_enabled(bob) is True


def test_it_rejects_get(alice_client):
    """The switch changes only by POST."""
    assert alice_client.get(URL).status_code == 405
