"""The pages: each action for its owner, 404 for anyone else's conversation, GET changes
nothing, a bad confirmation or password is a clear error that keeps what was typed."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from memory.models import Decision, Fact, Summary
from profiles.models import UserProfile

pytestmark = pytest.mark.django_db


def forget_url(conversation):
    return reverse("userdata:forget_conversation", args=[conversation.pk])


def test_alice_forgets_what_was_learned_in_her_conversation(alice_client, alice, data):
    """GET shows what will go and changes nothing; POST forgets and says what it did."""
    page = alice_client.get(forget_url(data["trip"])).content.decode()
    assert "3 memories learned only in this conversation" in page
    assert "1 memory was also learned in other conversations" in page
    assert Fact.objects.filter(pk=data["daughter"].pk).exists()
    response = alice_client.post(forget_url(data["trip"]), follow=True)
    assert "Forgotten: 1 facts, 1 decisions, 1 action items, 1 summary version; 1 kept" in (
        response.content.decode()
    )
    assert not Fact.objects.filter(pk=data["daughter"].pk).exists()
    assert Fact.objects.filter(pk=data["city"].pk).exists()


def test_bob_gets_404_for_alices_conversation(bob_client, data):
    for method in (bob_client.get, bob_client.post):
        assert method(forget_url(data["trip"])).status_code == 404
    assert Decision.objects.filter(pk=data["decision"].pk).exists()


def test_the_conversation_menus_link_to_forget(alice_client, data):
    """The sidebar's actions panel and the conversation's settings menu both offer it."""
    page = alice_client.get(data["trip"].get_absolute_url()).content.decode()
    assert page.count(f'href="{forget_url(data["trip"])}"') == 2


def test_forget_everything_needs_the_typed_confirmation(alice_client, alice, data):
    """A wrong phrase: a clear error, the boxes as ticked, nothing forgotten."""
    url = reverse("userdata:forget_everything")
    response = alice_client.post(url, {"confirmation": "forget", "clear_preferences": "on"})
    page = response.content.decode()
    assert response.status_code == 200
    assert "Type &quot;forget everything&quot; exactly as shown: nothing was forgotten." in page
    assert (
        'value="forget"' in page
        and 'name="clear_preferences" id="id_clear_preferences" checked' in page
    )
    assert Fact.objects.filter(user=alice).count() == 2


def test_forget_everything_with_the_confirmation(alice_client, alice, bob, data):
    """Typed in any case and spacing: everything forgotten, back on the profile with a note."""
    url = reverse("userdata:forget_everything")
    assert alice_client.get(url).status_code == 200
    response = alice_client.post(
        url, {"confirmation": "  Forget   Everything ", "reset_style": "on"}, follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("profiles:profile")
    assert "Everything was forgotten" in response.content.decode()
    assert not Fact.objects.filter(user=alice).exists()
    assert not Summary.objects.filter(conversation__user=alice).exclude(text="").exists()
    assert UserProfile.objects.get(user=alice).detail_level == "brief"
    assert Fact.objects.filter(user=bob).exists()


def test_the_export_is_a_json_download_of_her_own_data(alice_client, data):
    response = alice_client.get(reverse("userdata:export"))
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="memorychat-alice-')
    document = json.loads(response.content)
    assert document["user"]["username"] == "alice"
    assert "Bob's" not in response.content.decode()
    assert alice_client.post(reverse("userdata:export")).status_code == 405


def test_a_wrong_password_deletes_nothing(alice_client, alice, data):
    response = alice_client.post(reverse("userdata:account_delete"), {"password": "nope"})
    assert "That is not your password: your account was not deleted." in response.content.decode()
    assert get_user_model().objects.filter(pk=alice.pk).exists()


def test_too_many_tries_are_refused_even_with_the_right_password(alice_client, alice):
    url = reverse("userdata:account_delete")
    for _ in range(5):
        alice_client.post(url, {"password": "nope"})
    response = alice_client.post(url, {"password": "alice-password-1"})
    assert "Too many attempts" in response.content.decode()
    assert get_user_model().objects.filter(pk=alice.pk).exists()


def test_the_right_password_deletes_the_account_and_logs_out(alice_client, alice, data):
    url = reverse("userdata:account_delete")
    assert alice_client.get(url).status_code == 200
    response = alice_client.post(url, {"password": "alice-password-1"}, follow=True)
    assert response.redirect_chain[-1][0] == reverse("userdata:goodbye")
    assert "Your account was deleted" in response.content.decode()
    assert not get_user_model().objects.filter(username="alice").exists()
    assert alice_client.get(reverse("chat:home")).url.startswith("/accounts/login/")


def test_the_goodbye_page_is_for_signed_out_visitors(alice_client):
    """It says the account is gone: someone signed in goes to their conversations instead."""
    response = alice_client.get(reverse("userdata:goodbye"))
    assert response.status_code == 302 and response.url == reverse("chat:home")
    signed_out = Client().get(reverse("userdata:goodbye")).content.decode()
    assert "Your account was deleted" in signed_out


def test_the_profile_page_has_a_your_data_section(alice_client):
    page = alice_client.get(reverse("profiles:profile")).content.decode()
    assert "<h2>Your data</h2>" in page
    for name in ("userdata:export", "userdata:forget_everything", "userdata:account_delete"):
        assert f'href="{reverse(name)}"' in page
