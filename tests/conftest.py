"""Fixtures shared by every test: named users (alice owns, bob does not, staff reviews)."""

import pytest
from django.contrib.auth import get_user_model


@pytest.fixture
def alice(db):
    return get_user_model().objects.create_user("alice", password="alice-password-1")


@pytest.fixture
def bob(db):
    return get_user_model().objects.create_user("bob", password="bob-password-1")


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_user("sam", password="sam-password-1", is_staff=True)


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client
