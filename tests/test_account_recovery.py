"""Account recovery: an optional email at sign-up and on the profile (stored once confirmed by
the signed link), Django's reset flow, and staff setting a password or mailing the link."""

import re

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.core import mail, signing

from profiles.account import SALT

pytestmark = pytest.mark.django_db
User = get_user_model()


def _link(message) -> str:
    return re.search(r"https?://\S+", message.body).group(0).split("testserver", 1)[1]


def test_sign_up_with_an_email_sends_a_link_and_stores_it_once_opened(client):
    response = client.post(
        "/accounts/signup/",
        {
            "username": "newbie",
            "email": "newbie@example.com",
            "password1": "a-long-pass-phrase-9",
            "password2": "a-long-pass-phrase-9",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/"  # straight to the chat
    user = User.objects.get(username="newbie")
    assert user.email == ""  # not before the link is opened
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["newbie@example.com"]
    page = client.get("/").content.decode()
    assert 'id="page-notice"' in page and "We sent a link to newbie@example.com" in page
    response = client.get(_link(mail.outbox[0]))
    assert response.status_code == 302
    user.refresh_from_db()
    assert user.email == "newbie@example.com"


def test_sign_up_without_an_email_sends_nothing(client):
    response = client.post(
        "/accounts/signup/",
        {
            "username": "quiet",
            "password1": "a-long-pass-phrase-9",
            "password2": "a-long-pass-phrase-9",
        },
    )
    assert response["Location"] == "/"
    assert mail.outbox == []


def test_the_profile_changes_the_email_only_through_the_link(alice_client, alice, bob, client):
    response = alice_client.post("/profile/email/", {"email": "alice@example.com"})
    assert response.status_code == 302
    link = _link(mail.outbox[0])
    alice.refresh_from_db()
    assert alice.email == ""
    # Another account cannot use it.
    client.force_login(bob)
    assert client.get(link).status_code == 400
    bob.refresh_from_db()
    assert bob.email == ""
    client.force_login(alice)
    assert client.get(link).status_code == 302
    alice.refresh_from_db()
    assert alice.email == "alice@example.com"
    # Once the address changed again, the old link cannot bring it back.
    client.post("/profile/email/", {"email": "new@example.com"})
    client.get(_link(mail.outbox[1]))
    assert client.get(link).status_code == 400
    alice.refresh_from_db()
    assert alice.email == "new@example.com"


def test_a_forged_or_stale_link_is_refused(alice_client, alice):
    forged = signing.dumps({"u": alice.pk, "e": "evil@example.com", "was": ""}, salt="other")
    assert alice_client.get(f"/profile/email/confirm/{forged}/").status_code == 400
    page = alice_client.get("/profile/email/confirm/garbage/").content.decode()
    assert "not valid any more" in page
    alice.refresh_from_db()
    assert alice.email == ""
    good = signing.dumps({"u": alice.pk, "e": "a@example.com", "was": ""}, salt=SALT)
    assert alice_client.get(f"/profile/email/confirm/{good}/").status_code == 302


def test_an_invalid_email_is_refused(alice_client):
    response = alice_client.post("/profile/email/", {"email": "not an address"})
    assert response.status_code == 400 and mail.outbox == []


def test_the_confirmation_mails_count_against_the_reset_limit(alice_client, settings):
    settings.MEMORYCHAT_PASSWORD_RESETS_PER_HOUR = 2
    for _ in range(3):
        alice_client.post("/profile/email/", {"email": "victim@example.com"})
    assert len(mail.outbox) == 2
    # The public reset form counts in the same group: the address has had its mails.
    response = alice_client.post("/accounts/password_reset/", {"email": "Victim@example.com"})
    assert response.status_code == 429


def test_forgot_password_resets_it_for_an_account_with_an_email(client, alice):
    alice.email = "alice@example.com"
    alice.save()
    response = client.post("/accounts/password_reset/", {"email": "alice@example.com"})
    assert response["Location"] == "/accounts/password_reset/done/"
    assert "Check your inbox" in client.get(response["Location"]).content.decode()
    link = _link(mail.outbox[0])
    assert "alice" in mail.outbox[0].body
    response = client.get(link, follow=True)
    assert "Set a new password" in response.content.decode()
    url = response.redirect_chain[-1][0]
    response = client.post(
        url, {"new_password1": "brand-new-phrase-7", "new_password2": "brand-new-phrase-7"}
    )
    assert response["Location"] == "/accounts/reset/done/"
    assert "Your new password is set" in client.get("/accounts/reset/done/").content.decode()
    alice.refresh_from_db()
    assert alice.check_password("brand-new-phrase-7")
    # Used once: the link is dead now.
    assert "does not work any more" in client.get(link, follow=True).content.decode()


def test_the_reset_page_says_what_to_do_without_an_email(client, alice):
    page = client.get("/accounts/password_reset/").content.decode()
    assert "No email address on your account?" in page
    client.post("/accounts/password_reset/", {"email": "nobody@example.com"})
    assert mail.outbox == []


def test_staff_set_a_password_recorded_in_the_log(client, staff, alice):
    client.force_login(staff)
    page = client.get(f"/staff/users/{alice.pk}/").content.decode()
    assert "No confirmed email address" in page and "No staff action recorded" in page
    response = client.post(
        f"/staff/users/{alice.pk}/password/",
        {"new_password1": "staff-chosen-pass-3", "new_password2": "staff-chosen-pass-3"},
    )
    assert response.status_code == 302
    alice.refresh_from_db()
    assert alice.check_password("staff-chosen-pass-3")
    entry = LogEntry.objects.get(object_id=str(alice.pk))
    assert entry.user == staff and entry.change_message == "Password set by staff."
    page = client.get(f"/staff/users/{alice.pk}/").content.decode()
    assert "Password set by staff." in page and ">sam<" in page


def test_staff_password_form_validates(client, staff, alice):
    client.force_login(staff)
    response = client.post(
        f"/staff/users/{alice.pk}/password/", {"new_password1": "123", "new_password2": "124"}
    )
    assert response.status_code == 400
    alice.refresh_from_db()
    assert alice.check_password("alice-password-1")
    assert not LogEntry.objects.exists()


def test_staff_send_the_reset_link_within_the_limit(client, staff, alice, settings):
    alice.email = "alice@example.com"
    alice.save()
    settings.MEMORYCHAT_PASSWORD_RESETS_PER_HOUR = 1
    client.force_login(staff)
    client.post(f"/staff/users/{alice.pk}/reset-link/")
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["alice@example.com"]
    assert "/accounts/reset/" in mail.outbox[0].body
    page = client.post(f"/staff/users/{alice.pk}/reset-link/", follow=True).content.decode()
    assert "Too many password reset mails" in page and len(mail.outbox) == 1
    entry = LogEntry.objects.get(object_id=str(alice.pk))
    assert entry.change_message == "Password reset link sent to alice@example.com."


def test_no_reset_link_without_an_email_and_staff_only(client, staff, alice, bob):
    client.force_login(staff)
    page = client.post(f"/staff/users/{alice.pk}/reset-link/", follow=True).content.decode()
    assert "has no email address" in page and mail.outbox == []
    client.force_login(bob)
    assert client.post(f"/staff/users/{alice.pk}/reset-link/").status_code == 403
    assert (
        client.post(
            f"/staff/users/{alice.pk}/password/",
            {"new_password1": "staff-chosen-pass-3", "new_password2": "staff-chosen-pass-3"},
        ).status_code
        == 403
    )


def test_deleting_the_account_deletes_its_log(client, staff, alice):
    from userdata.services import account_delete

    client.force_login(staff)
    client.post(
        f"/staff/users/{alice.pk}/password/",
        {"new_password1": "staff-chosen-pass-3", "new_password2": "staff-chosen-pass-3"},
    )
    account_delete(user=alice)
    assert not LogEntry.objects.exists()


def test_a_refused_sign_up_keeps_the_passwords_and_puts_errors_under_their_field(client, alice):
    response = client.post(
        "/accounts/signup/",
        {
            "username": "alice",
            "password1": "a-long-pass-phrase-9",
            "password2": "a-long-pass-phrase-9",
        },
    )
    form = response.context["form"]
    assert set(form.errors) == {"username"}
    assert 'value="a-long-pass-phrase-9"' in response.content.decode()
    response = client.post(
        "/accounts/signup/", {"username": "newbie", "password1": "short", "password2": "shirt"}
    )
    errors = response.context["form"].errors
    assert "too short" in " ".join(errors["password1"])
    assert "match" in " ".join(errors["password2"]) and "short" not in str(errors["password2"])


def test_many_addresses_from_one_network_are_limited_too(alice_client, settings):
    settings.MEMORYCHAT_PASSWORD_RESETS_PER_HOUR_PER_ADDRESS = 2
    for n in range(4):
        alice_client.post("/profile/email/", {"email": f"inbox{n}@example.com"})
    assert len(mail.outbox) == 2
