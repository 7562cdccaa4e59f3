"""Personal API keys on the profile and the staff user page: made (secret shown once, stored
hashed), listed, revoked by the owner or staff (recorded), never another user's."""

import hashlib

import pytest
from django.urls import reverse

from profiles.keys import key_create, key_user
from profiles.models import ApiKey

pytestmark = pytest.mark.django_db


def test_a_key_is_shown_once_and_stored_hashed(alice_client, alice):
    response = alice_client.post(reverse("profiles:keys"), {"name": "Open WebUI"})
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    key = ApiKey.objects.get(user=alice)
    secret = response.context["new_key"].secret
    assert secret.startswith("mc-") and len(secret) > 40 and secret in response.text
    assert key.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret not in {key.name, key.prefix} and secret.startswith(key.prefix)
    # The page lists it afterwards, never with its secret.
    page = alice_client.get(reverse("profiles:profile")).text
    assert "Open WebUI" in page and key.prefix in page and secret not in page
    assert key_user(secret) == alice
    key.refresh_from_db()
    assert key.last_used_at is not None


def test_a_key_needs_a_name_and_the_fragment_answers_htmx(alice_client, alice):
    response = alice_client.post(
        reverse("profiles:keys"), {"name": "  "}, headers={"HX-Request": "true"}
    )
    assert response.status_code == 200 and 'id="api-keys"' in response.text
    assert "<html" not in response.text and not ApiKey.objects.exists()


def test_the_owner_revokes_and_the_key_stops_working(alice_client, alice):
    made = key_create(user=alice, name="laptop")
    response = alice_client.post(reverse("profiles:key_revoke", args=[made.key.pk]))
    assert response.status_code == 302
    made.key.refresh_from_db()
    assert made.key.revoked_at is not None and key_user(made.secret) is None
    record = made.key.history.latest("history_date")
    assert record.history_user == alice and "owner" in record.history_change_reason


def test_another_user_cannot_revoke_and_wrong_secrets_open_nothing(client, alice, bob):
    made = key_create(user=alice, name="laptop")
    client.force_login(bob)
    assert client.post(reverse("profiles:key_revoke", args=[made.key.pk])).status_code == 404
    assert key_user(made.secret) == alice
    assert key_user(made.secret + "x") is None and key_user("") is None
    assert key_user(made.key.secret_hash) is None  # the stored hash is not a key
    alice.is_active = False
    alice.save()
    assert key_user(made.secret) is None


def test_staff_see_and_revoke_a_users_keys_with_a_record(client, alice, staff):
    made = key_create(user=alice, name="script <b>x</b>")
    client.force_login(staff)
    page = client.get(reverse("staff:user", args=[alice.pk])).text
    assert "script &lt;b&gt;x&lt;/b&gt;" in page and made.key.prefix in page
    assert made.secret not in page
    url = reverse("staff:user_key_revoke", args=[alice.pk, made.key.pk])
    assert client.post(url).status_code == 302
    assert key_user(made.secret) is None
    record = made.key.history.latest("history_date")
    assert record.history_user == staff and "staff" in record.history_change_reason
    assert "API key revoked by staff" in client.get(reverse("staff:user", args=[alice.pk])).text
    # A key id under another user's URL is a 404.
    other = key_create(user=staff, name="mine")
    wrong = reverse("staff:user_key_revoke", args=[alice.pk, other.key.pk])
    assert client.post(wrong).status_code == 404


def test_plain_users_cannot_use_the_staff_revoke(client, alice, bob):
    made = key_create(user=alice, name="laptop")
    client.force_login(bob)
    url = reverse("staff:user_key_revoke", args=[alice.pk, made.key.pk])
    assert client.post(url).status_code == 403
    assert key_user(made.secret) == alice
