"""POST /profile/memory/: the memory mode (automatic, ask first, off)."""

import pytest
from django.urls import reverse

from profiles.instructions import memory_enabled
from profiles.models import UserProfile
from profiles.selectors import memory_mode

pytestmark = pytest.mark.django_db

URL = "/profile/memory/"


def test_it_turns_memory_off_and_on(alice_client, alice):
    """Posting off then automatic flips the switch and redirects back each time."""
    response = alice_client.post(URL, {"memory_mode": "off"})
    assert response.status_code == 302
    assert response.url == reverse("profiles:profile")
    assert memory_enabled(alice) is False
    alice_client.post(URL, {"memory_mode": "automatic"})
    assert memory_enabled(alice) is True


def test_ask_first_is_a_mode_with_memory_on(alice_client, alice):
    """Ask first keeps memory on (read and written, as suggestions)."""
    alice_client.post(URL, {"memory_mode": "ask"})
    assert memory_mode(alice) == "ask"
    assert memory_enabled(alice) is True


def test_it_is_idempotent(alice_client, alice):
    """Posting the current value again changes nothing and records no history."""
    alice_client.post(URL, {"memory_mode": "off"})
    alice_client.post(URL, {"memory_mode": "off"})
    profile = UserProfile.objects.get(user=alice)
    modes = [h.memory_mode for h in profile.history.order_by("history_date")]
    assert modes == ["automatic", "off"]


def test_it_returns_the_switch_and_dependent_sections_over_htmx(alice_client):
    """Over HTMX: the memory section, with the style and preview sections out of band."""
    response = alice_client.post(URL, {"memory_mode": "off"}, HTTP_HX_REQUEST="true")
    content = response.content.decode()
    assert content.lstrip().startswith('<section id="memory"')
    assert "Memory is <strong>off</strong>" in content
    assert (
        'value="off" checked' in content
        or 'checked value="off"' in content
        or ('value="off"' in content and "checked" in content)
    )
    assert '<section id="learned-style" class="card" hx-swap-oob="true">' in content
    assert "nothing is learned from your messages" in content
    assert '<section id="prompt-preview" class="card" hx-swap-oob="true">' in content


@pytest.mark.parametrize("data", [{}, {"memory_mode": "sometimes"}, {"memory_enabled": "false"}])
def test_it_rejects_a_missing_or_unknown_value(alice_client, alice, data):
    """Without a known mode there is nothing to switch to: 400, nothing changed."""
    response = alice_client.post(URL, data)
    assert response.status_code == 400
    assert memory_enabled(alice) is True


def test_it_switches_only_the_signed_in_users_memory(alice_client, alice, bob):
    """Alice turning her memory off leaves Bob's on."""
    alice_client.post(URL, {"memory_mode": "off", "user": bob.pk})
    assert memory_enabled(alice) is False
    assert memory_enabled(bob) is True


def test_it_rejects_get(alice_client):
    """The switch changes only by POST."""
    assert alice_client.get(URL).status_code == 405
