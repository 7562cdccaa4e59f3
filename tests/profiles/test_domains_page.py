"""The profile page's levels by subject, and POST /profile/domains/."""

import pytest

from profiles.models import DomainLevel
from profiles.services import profile_observe_message
from tests.profiles.test_expertise import EXPERT_CODE, NOVICE_COOKING

pytestmark = pytest.mark.django_db

URL = "/profile/domains/"


def test_the_page_shows_two_learned_levels_and_their_progress(alice_client, alice):
    for text in EXPERT_CODE + NOVICE_COOKING:
        profile_observe_message(user=alice, text=text)
    html = alice_client.get("/profile/").content.decode()
    programming = html[html.index('id="domain-programming"') :]
    programming = programming[: programming.index("</tr>")]
    assert "Expert" in programming and "(learned)" in programming and "<polyline" in programming
    cooking = html[html.index('id="domain-cooking"') :]
    assert "Beginner" in cooking[: cooking.index("</tr>")]
    assert "Your level by subject" in html


def test_a_level_set_by_hand_wins_and_hidden_stops_learning(alice_client, alice):
    for text in NOVICE_COOKING:
        profile_observe_message(user=alice, text=text)
    response = alice_client.post(URL, {"cooking": "expert", "finance": "hidden"})
    assert response.status_code == 302
    row = DomainLevel.objects.get(domain="cooking")
    assert (row.explicit_level, row.level, row.effective_level) == ("expert", "beginner", "expert")
    profile_observe_message(user=alice, text="I'm new to investing, what is an ETF?")
    assert DomainLevel.objects.get(domain="finance").evidence == 0
    html = alice_client.get("/profile/").content.decode()
    cooking = html[html.index('id="domain-cooking"') :]
    assert "(set by you)" in cooking[: cooking.index("</tr>")]


def test_htmx_returns_the_section(alice_client):
    response = alice_client.post(URL, {"music": "intermediate"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert 'id="domains"' in html and "Levels saved." in html and "<html" not in html


def test_a_bad_value_is_refused_and_nothing_saved(alice_client):
    response = alice_client.post(URL, {"cooking": "wizard"})
    assert response.status_code == 200
    assert "Please choose from the lists." in response.content.decode()
    assert not DomainLevel.objects.exists()


def test_only_for_the_signed_in_user(client, alice, bob):
    response = client.post(URL, {"cooking": "expert"})
    assert response.status_code in (302, 403)
    assert not DomainLevel.objects.exists()
    client.force_login(bob)
    client.post(URL, {"cooking": "expert"})
    assert DomainLevel.objects.get().profile.user == bob
