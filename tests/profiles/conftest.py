import pytest
from django.contrib.auth import get_user_model

from profiles.services import profile_observe_message


@pytest.fixture
def alice(db):
    """Alice owns the profile under test."""
    return get_user_model().objects.create_user("alice", "alice@example.com", "password")


@pytest.fixture
def bob(db):
    """Bob has a profile of his own and must never see Alice's."""
    return get_user_model().objects.create_user("bob", "bob@example.com", "password")


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client


@pytest.fixture
def observe():
    """Feed the same message to a user's profile ``times`` times, each half a minute after
    the assistant's previous reply (a conversation going on: the pace has evidence)."""

    def observe(user, text, times=1, gap_seconds=30.0):
        reading = None
        for _ in range(times):
            reading = profile_observe_message(user=user, text=text, gap_seconds=gap_seconds)
        return reading

    return observe
