"""Sign-in (django-axes) and password reset (django-ratelimit) are throttled per account and
per client address, with a page that says so."""

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

pytestmark = pytest.mark.django_db


def _sign_in(client, username, password, address="10.0.0.1"):
    return client.post(
        "/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address
    )


def test_failed_sign_ins_lock_the_account_at_that_address(client, alice, settings):
    """Past LOGIN_FAILURE_LIMIT failures for one account from one address, even the right
    password is refused from there; the page says so and for how long."""
    settings.AXES_FAILURE_LIMIT = 3
    for n in range(3):
        _sign_in(client, "alice", f"wrong-{n}")
    response = _sign_in(client, "alice", "alice-password-1")
    assert response.status_code == 429
    page = response.content.decode()
    assert "Too many failed sign-ins" in page and "Try again in 15 minutes" in page
    assert "_auth_user_id" not in client.session


def test_failed_sign_ins_lock_the_address_at_its_own_limit(client, alice, bob, settings):
    """Guessing many accounts from one address locks that address, at its higher limit."""
    settings.AXES_FAILURE_LIMIT = 3
    settings.AXES_ADDRESS_FAILURE_LIMIT = 6
    for name in ("carol", "dave", "erin", "frank", "grace"):
        _sign_in(client, name, "guess")
    assert _sign_in(client, "bob", "bob-password-1").status_code == 302  # 5 < 6
    client.logout()
    _sign_in(client, "heidi", "guess")
    assert _sign_in(client, "alice", "alice-password-1").status_code == 429
    assert _sign_in(client, "bob", "bob-password-1", address="10.0.0.2").status_code == 302


def test_a_good_sign_in_still_works_below_the_limit(client, alice, settings):
    """Fewer failures than the limit: the right password signs in (and resets the count)."""
    settings.AXES_FAILURE_LIMIT = 3
    _sign_in(client, "alice", "wrong")
    assert _sign_in(client, "alice", "alice-password-1").status_code == 302


def test_an_attackers_own_sign_in_does_not_lift_the_lock(client, alice, bob, settings):
    """The interleaved attack: guesses at alice, then a good sign-in of the attacker's own
    account (bob) from the same address, over and over. Bob's success clears bob's failures
    only, so alice's count goes on and locks at the limit."""
    settings.AXES_FAILURE_LIMIT = 5
    for round_ in range(3):
        for n in range(2):
            _sign_in(client, "alice", f"guess-{round_}-{n}")
        assert _sign_in(client, "bob", "bob-password-1").status_code == 302
        client.logout()
    # 6 guesses at alice: her pair is locked from here, whatever bob did between.
    assert _sign_in(client, "alice", "alice-password-1").status_code == 429
    assert _sign_in(client, "alice", "alice-password-1", address="10.0.0.2").status_code == 302


def test_one_user_mistyping_does_not_lock_their_office(client, alice, bob, settings):
    """Behind one office address, bob mistyping his password past the limit pauses bob there;
    alice, at the same address, still signs in."""
    settings.AXES_FAILURE_LIMIT = 5
    for n in range(6):
        _sign_in(client, "bob", f"typo-{n}", address="192.0.2.7")
    assert _sign_in(client, "bob", "bob-password-1", address="192.0.2.7").status_code == 429
    assert _sign_in(client, "alice", "alice-password-1", address="192.0.2.7").status_code == 302


def test_a_correct_sign_in_after_the_cool_off(client, alice, settings):
    """Once LOGIN_COOLOFF_MINUTES have passed since the last failure, the lock is lifted."""
    from axes.models import AccessAttempt

    settings.AXES_FAILURE_LIMIT = 3
    for n in range(3):
        _sign_in(client, "alice", f"wrong-{n}")
    assert _sign_in(client, "alice", "alice-password-1").status_code == 429
    past = timezone.now() - settings.AXES_COOLOFF_TIME - timedelta(seconds=1)
    AccessAttempt.objects.update(attempt_time=past)
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
