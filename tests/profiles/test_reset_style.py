"""/profile/reset-style/: forget the learned style, with confirmation."""

import pytest
from django.urls import reverse

from profiles.models import StyleSnapshot, UserProfile
from profiles.services import SNAPSHOT_EVERY, profile_update_preferences
from profiles.style import METRICS, PRIORS
from tests.profiles.samples import CASUAL, FORMAL

pytestmark = pytest.mark.django_db

URL = "/profile/reset-style/"


@pytest.fixture
def learned(alice, observe):
    """Alice has a learned style with snapshots and a preference."""
    observe(alice, CASUAL, times=SNAPSHOT_EVERY * 2)
    profile_update_preferences(user=alice, preferences={"response_format": "tables"})


def assert_reset(user):
    profile = UserProfile.objects.get(user=user)
    for name in METRICS:
        assert profile.metric(name) == (PRIORS[name], 0)
    assert profile.messages_observed == 0
    assert not StyleSnapshot.objects.filter(profile=profile).exists()


def test_it_asks_for_confirmation_on_get(alice_client, learned):
    """GET (the no-JavaScript path) shows a confirmation form and changes nothing."""
    response = alice_client.get(URL)
    assert response.status_code == 200
    assert b'name="confirm"' in response.content
    assert UserProfile.objects.get(user__username="alice").messages_observed > 0


def test_it_refuses_a_post_without_confirmation(alice_client, alice, learned):
    """A POST without the confirmation box re-asks and resets nothing."""
    response = alice_client.post(URL, {})
    assert response.status_code == 200
    assert b"Tick the box to confirm." in response.content
    assert UserProfile.objects.get(user=alice).messages_observed == SNAPSHOT_EVERY * 2


def test_it_resets_with_confirmation(alice_client, alice, learned):
    """A confirmed POST resets every metric, count and snapshot and redirects back."""
    response = alice_client.post(URL, {"confirm": "true"})
    assert response.status_code == 302
    assert response.url == reverse("profiles:profile")
    assert_reset(alice)


def test_it_keeps_preferences(alice_client, alice, learned):
    """A reset forgets what was learned, not what the user chose."""
    alice_client.post(URL, {"confirm": "true"})
    assert UserProfile.objects.get(user=alice).response_format == "tables"


def test_it_returns_the_style_section_over_htmx(alice_client, alice, learned):
    """Over HTMX: the reset style section, with the prompt preview out of band."""
    response = alice_client.post(URL, {"confirm": "true"}, HTTP_HX_REQUEST="true")
    content = response.content.decode()
    assert content.lstrip().startswith('<section id="learned-style"')
    assert "Your learned style was reset." in content
    assert "Learned from 0 of your messages" in content
    assert '<section id="prompt-preview" class="card" hx-swap-oob="true">' in content
    assert_reset(alice)


def test_it_resets_only_the_signed_in_users_style(alice_client, alice, bob, observe, learned):
    """Alice's reset leaves Bob's learned style as it was."""
    observe(bob, FORMAL, times=SNAPSHOT_EVERY)
    alice_client.post(URL, {"confirm": "true", "user": bob.pk})
    assert_reset(alice)
    assert UserProfile.objects.get(user=bob).messages_observed == SNAPSHOT_EVERY
    assert StyleSnapshot.objects.filter(profile__user=bob).count() == 1


def test_it_is_recorded_in_the_history(alice_client, alice, learned):
    """The reset is an audited edit with its reason."""
    alice_client.post(URL, {"confirm": "true"})
    latest = UserProfile.objects.get(user=alice).history.first()
    assert latest.history_change_reason == "learned style reset"
    assert latest.history_user == alice


def test_learning_starts_again_after_a_reset(alice_client, alice, observe, learned):
    """After a reset, the next message counts as the first."""
    alice_client.post(URL, {"confirm": "true"})
    observe(alice, FORMAL)
    profile = UserProfile.objects.get(user=alice)
    assert profile.messages_observed == 1
    assert profile.formality > PRIORS["formality"]
