"""The admin lists and shows profiles, with their history."""

import pytest
from django.contrib.auth import get_user_model

from profiles.services import profile_observe_message

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    admin = get_user_model().objects.create_superuser("charlie", "c@example.com", "password")
    client.force_login(admin)
    return client


def test_it_lists_and_shows_profiles(staff_client, alice):
    """The changelist, change page and history page of a profile load."""
    for _ in range(10):
        profile_observe_message(user=alice, text="Dear Sir, thank you.")
    profile = alice.profile
    base = "/admin/profiles/userprofile/"
    assert staff_client.get(base).status_code == 200
    assert staff_client.get(f"{base}{profile.pk}/change/").status_code == 200
    assert staff_client.get(f"{base}{profile.pk}/history/").status_code == 200
