"""POST /profile/preferences/: the preferences form, with and without HTMX."""

import pytest
from django.urls import reverse

from profiles.forms import PreferencesForm
from profiles.models import CUSTOM_INSTRUCTIONS_MAX_CHARS, TOPICS_MAX, UserProfile

pytestmark = pytest.mark.django_db

URL = "/profile/preferences/"


def valid_data(**overrides):
    data = {
        "language": "de",
        "timezone": "Europe/Berlin",
        "response_format": "bullets",
        "detail_level": "brief",
        "tone": "",
        "technical_depth": "expert",
        "emoji": "avoid",
        "terminology": "Say PR, not MR.",
        "topics_of_interest": "Django, sourdough",
        "custom_instructions": "Answer with code first.",
    }
    return {**data, **overrides}


def test_it_saves_preferences_and_redirects(alice_client, alice):
    """A valid POST without HTMX saves and redirects back to the profile page."""
    response = alice_client.post(URL, valid_data())
    assert response.status_code == 302
    assert response.url == reverse("profiles:profile")
    profile = UserProfile.objects.get(user=alice)
    assert profile.language == "de"
    assert profile.timezone == "Europe/Berlin"
    assert profile.detail_level == "brief"
    assert profile.topics_of_interest == ["Django", "sourdough"]
    assert profile.custom_instructions == "Answer with code first."


def test_it_confirms_the_save_after_the_redirect(alice_client):
    """The page after the redirect says the preferences were saved."""
    response = alice_client.post(URL, valid_data(), follow=True)
    assert b"Preferences saved." in response.content


def test_it_returns_the_section_and_out_of_band_updates_over_htmx(alice_client):
    """An HTMX save re-renders the form section and swaps the dependent sections OOB."""
    response = alice_client.post(URL, valid_data(), HTTP_HX_REQUEST="true")
    content = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in content
    assert content.lstrip().startswith('<section id="preferences"')
    assert "Preferences saved." in content
    assert '<section id="prompt-preview" class="card" hx-swap-oob="true">' in content
    assert '<section id="learned-style" class="card" hx-swap-oob="true">' in content
    assert "Length: brief" in content
    assert response["Vary"] == "HX-Request, Cookie"


def test_it_shows_errors_inline_over_htmx(alice_client, alice):
    """Invalid input over HTMX: the form section with inline errors, status 200, nothing saved."""
    data = valid_data(timezone="Mars/Olympus_Mons", language="xx")
    response = alice_client.post(URL, data, HTTP_HX_REQUEST="true")
    content = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in content
    assert content.lstrip().startswith('<section id="preferences"')
    assert "Select a valid choice. Mars/Olympus_Mons is not one of the" in content
    assert "Select a valid choice. xx is not one of the available choices." in content
    assert "hx-swap-oob" not in content
    assert not UserProfile.objects.filter(user=alice).exists()


def test_it_shows_errors_in_the_full_page_without_htmx(alice_client, alice):
    """Invalid input without HTMX re-renders the whole page with the errors and the input."""
    too_long = "x" * (CUSTOM_INSTRUCTIONS_MAX_CHARS + 1)
    response = alice_client.post(URL, valid_data(custom_instructions=too_long))
    content = response.content.decode()
    assert response.status_code == 200
    assert "<html" in content
    assert f"At most {CUSTOM_INSTRUCTIONS_MAX_CHARS} characters" in content
    assert not UserProfile.objects.filter(user=alice).exists()


def test_it_rejects_get(alice_client):
    """Preferences change only by POST."""
    assert alice_client.get(URL).status_code == 405


def test_it_edits_only_the_signed_in_users_profile(alice_client, alice, bob):
    """A POST changes Alice's preferences and leaves Bob's untouched."""
    alice_client.post(URL, valid_data(user=bob.pk))
    assert UserProfile.objects.get(user=alice).language == "de"
    assert not UserProfile.objects.filter(user=bob).exists()


def test_it_keeps_an_audit_history(alice_client, alice):
    """Every save is recorded by django-simple-history with who made it."""
    alice_client.post(URL, valid_data())
    alice_client.post(URL, valid_data(language="fr"))
    history = UserProfile.objects.get(user=alice).history.order_by("history_date")
    assert [h.language for h in history] == ["", "de", "fr"]
    assert history.last().history_user == alice
    assert history.last().history_change_reason == "preferences edited"


# -- the form's own cleaning -------------------------------------------------------------------


def test_it_cleans_topics_into_a_list():
    """Topics are split on commas, semicolons and newlines, trimmed and deduplicated."""
    form = PreferencesForm(valid_data(topics_of_interest=" Django ;  django,\nsour   dough,, "))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["topics_of_interest"] == ["Django", "sour dough"]


def test_it_bounds_the_number_of_topics():
    """More than TOPICS_MAX topics is an error naming the limit."""
    topics = ", ".join(f"topic {i}" for i in range(TOPICS_MAX + 1))
    form = PreferencesForm(valid_data(topics_of_interest=topics))
    assert not form.is_valid()
    assert f"At most {TOPICS_MAX} topics" in form.errors["topics_of_interest"][0]


def test_it_normalises_free_text():
    """Windows newlines and trailing spaces are cleaned from free text."""
    form = PreferencesForm(valid_data(terminology="  one  \r\ntwo\r\n\r\n\r\n\r\nthree  "))
    assert form.is_valid(), form.errors
    assert form.cleaned_data["terminology"] == "one\ntwo\n\nthree"


def test_it_offers_zoneinfo_timezones_and_no_preference():
    """Time zones come from zoneinfo; every choice field allows 'no preference'."""
    form = PreferencesForm()
    zones = [value for value, _ in form.fields["timezone"].choices]
    assert zones[0] == ""
    assert "Europe/Paris" in zones
    assert "America/Argentina/Buenos_Aires" in zones
    assert "US/Eastern" not in zones  # legacy alias
    # Deprecated aliases under a region's name too: only the tz database's locations.
    assert "Asia/Kolkata" in zones and "Asia/Calcutta" not in zones
    assert "Europe/Amsterdam" in zones and "Etc/GMT+5" not in zones
    assert "America/Buenos_Aires" not in zones
    for name in ("response_format", "detail_level", "tone", "technical_depth", "emoji"):
        assert form.fields[name].choices[0][0] == ""


def test_it_accepts_all_blank_preferences():
    """Clearing every preference is valid: learned style takes over again."""
    blank = dict.fromkeys(valid_data(), "")
    form = PreferencesForm(blank)
    assert form.is_valid(), form.errors
    assert form.cleaned_data["topics_of_interest"] == []
