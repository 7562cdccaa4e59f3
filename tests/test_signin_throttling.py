"""Sign-in (django-axes) and password reset (django-ratelimit) are throttled per account and
per client address, with a page that says so."""

import pytest
from django.core import mail

pytestmark = pytest.mark.django_db


def _sign_in(client, username, password, address="10.0.0.1"):
    return client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_failed_sign_ins_lock_the_account(client, alice, settings):
    """Past LOGIN_FAILURE_LIMIT failures, even the right password is refused, from anywhere."""
    settings.AXES_FAILURE_LIMIT = 3
    for n in range(3):
        _sign_in(client, "alice", f"wrong-{n}", address=f"10.0.0.{n + 1}")
    response = _sign_in(client, "alice", "alice-password-1", address="10.0.9.9")
    assert response.status_code == 429
    page = response.content.decode()
    assert "Too many failed sign-ins" in page and "Try again in 15 minutes" in page
    assert "_auth_user_id" not in client.session


def test_failed_sign_ins_lock_the_address(client, alice, bob, settings):
    """Guessing many accounts from one address locks that address, not only each account."""
    settings.AXES_FAILURE_LIMIT = 3
    for name in ("carol", "dave", "erin"):
        _sign_in(client, name, "guess")
    response = _sign_in(client, "bob", "bob-password-1")
    assert response.status_code == 429
    assert _sign_in(client, "bob", "bob-password-1", address="10.0.0.2").status_code == 302


def test_a_good_sign_in_still_works_below_the_limit(client, alice, settings):
    """Fewer failures than the limit: the right password signs in (and resets the count)."""
    settings.AXES_FAILURE_LIMIT = 3
    _sign_in(client, "alice", "wrong")
    assert _sign_in(client, "alice", "alice-password-1").status_code == 302


def _reset(client, email, address="10.0.0.1"):
    return client.post("/accounts/password_reset/", {"email": email}, REMOTE_ADDR=address)


def test_password_reset_is_throttled_per_account(client, alice, settings):
    """Past PASSWORD_RESETS_PER_HOUR for one address typed, the form says so; no more mail."""
    alice.email = "alice@example.com"
    alice.save()
    settings.MEMORYCHAT_PASSWORD_RESETS_PER_HOUR = 2
    for n in range(2):
        assert _reset(client, "alice@example.com", address=f"10.0.0.{n + 1}").status_code == 302
    response = _reset(client, "Alice@Example.com ", address="10.0.0.9")
    assert response.status_code == 429
    assert "Too many password reset requests" in response.content.decode()
    assert len(mail.outbox) == 2


def test_password_reset_is_throttled_per_address(client, settings):
    """Many different accounts from one client address are throttled too."""
    settings.MEMORYCHAT_PASSWORD_RESETS_PER_HOUR_PER_ADDRESS = 2
    for n in range(2):
        assert _reset(client, f"user{n}@example.com").status_code == 302
    assert _reset(client, "user9@example.com").status_code == 429
    assert _reset(client, "user9@example.com", address="10.0.0.2").status_code == 302
