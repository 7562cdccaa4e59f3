"""The user list (search, counts, no N+1) and a user's page (style and preferences, editable)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from chat.services import conversation_create, message_create
from memory.models import Decision, Fact
from profiles.models import UserProfile
from profiles.services import profile_observe_message

pytestmark = pytest.mark.django_db


def _make_users(n: int, start: int = 0):
    User = get_user_model()
    for i in range(start, start + n):
        user = User.objects.create_user(f"user{i:03}")
        conversation = conversation_create(user=user, title=f"Chat {i}")
        message_create(conversation=conversation, role="user", content="hello")
        Fact.objects.create(user=user, text=f"fact {i}")


def test_the_list_shows_each_users_counts(staff_client, world, alice, bob):
    """Conversations, messages, memories and last activity come from the annotations."""
    response = staff_client.get(reverse("staff:users"))
    people = {p.username: p for p in response.context["page"]}
    assert people["alice"].conversation_count == 1
    assert people["alice"].message_count == 2
    assert people["alice"].memory_count == 3  # a fact, a decision, an action item
    assert people["alice"].last_active is not None
    assert people["bob"].memory_count == 1 and people["bob"].conversation_count == 0
    assert people["bob"].last_active is None


def test_the_list_searches_usernames_and_emails(staff_client, alice, bob):
    """The search matches parts of usernames, emails and names."""
    bob.email = "robert@example.com"
    bob.save()
    html = staff_client.get(reverse("staff:users"), {"q": "robert"}).content.decode()
    assert ">bob</a>" in html and ">alice</a>" not in html


def test_the_search_answers_with_the_table_fragment_for_htmx(staff_client, alice):
    """An HTMX search gets only the table, not the whole page."""
    html = staff_client.get(reverse("staff:users"), {"q": "ali"}, HTTP_HX_REQUEST="true").content
    assert b'id="user-table"' in html and b"<html" not in html


def test_the_list_costs_the_same_queries_for_5_or_60_users(
    staff_client, django_assert_max_num_queries
):
    """No N+1: one count and one annotated page query, whatever the page holds."""
    _make_users(5)
    with django_assert_max_num_queries(4):
        staff_client.get(reverse("staff:users"))
    _make_users(55, start=5)
    with django_assert_max_num_queries(4):
        response = staff_client.get(reverse("staff:users"))
    assert len(response.context["page"]) == 50


def test_the_user_page_shows_learned_style_and_preferences(staff_client, alice, world):
    """The page shows the metrics, preferences and conversations."""
    for _ in range(6):
        profile_observe_message(user=alice, text="Dear Sir, could you kindly review the API?")
    html = staff_client.get(reverse("staff:user", args=[alice.pk])).content.decode()
    assert "Learned communication style" in html and "Formality" in html
    assert "Launch planning" in html and "Level of detail" in html and "not set" in html


def test_the_learned_style_is_shown_to_the_fields_step(staff_client, alice):
    """0.438405 as is would not match step 0.01, so the browser would refuse to save the form
    until every value was retyped: the fields show two decimals."""
    UserProfile.objects.update_or_create(user=alice, defaults={"formality": 0.438405})
    form = staff_client.get(reverse("staff:user", args=[alice.pk])).context["style_form"]
    assert form["formality"].value() == 0.44
    assert 'value="0.44"' in str(form["formality"])


def test_the_preferences_form_opens_in_place(staff_client, alice):
    """Edit preferences fetches the form into the section (the page does not carry its
    long time zone list); without JavaScript it is a page with the form open."""
    url = reverse("staff:user_preferences", args=[alice.pk])
    fragment = staff_client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert fragment.lstrip().startswith('<section id="preferences"')
    assert 'name="timezone"' in fragment and "Europe/Paris" in fragment
    page = staff_client.get(url).content.decode()
    assert "<html" in page and 'name="detail_level"' in page


def test_the_user_page_costs_a_bounded_number_of_queries(
    staff_client, alice, django_assert_max_num_queries
):
    """Many conversations do not add queries to the user page."""
    for i in range(30):
        message_create(conversation=conversation_create(user=alice), role="user", content=f"m{i}")
    with django_assert_max_num_queries(20):
        staff_client.get(reverse("staff:user", args=[alice.pk]))


def test_staff_edit_preferences_in_place_and_the_history_names_them(staff_client, staff, alice):
    """An HTMX save swaps the section; the profile's history records the staff member."""
    response = staff_client.post(
        reverse("staff:user_preferences", args=[alice.pk]),
        {"detail_level": "brief", "topics_of_interest": "Django, cycling"},
        HTTP_HX_REQUEST="true",
    )
    assert b"Preferences saved." in response.content and b"<html" not in response.content
    profile = UserProfile.objects.get(user=alice)
    assert profile.detail_level == "brief"
    assert profile.topics_of_interest == ["Django", "cycling"]
    assert profile.history.latest("history_date").history_user == staff


def test_invalid_preferences_show_errors_inline(staff_client, alice):
    """Too many topics: the form comes back with the error, nothing saved."""
    response = staff_client.post(
        reverse("staff:user_preferences", args=[alice.pk]),
        {"topics_of_interest": ", ".join(f"t{i}" for i in range(30))},
        HTTP_HX_REQUEST="true",
    )
    assert b"At most 20 topics" in response.content
    assert not UserProfile.objects.filter(user=alice, topics_of_interest__len__gt=0).exists()


def test_preferences_without_javascript_redirect_back(staff_client, alice):
    """A plain form post saves and redirects to the user page."""
    response = staff_client.post(
        reverse("staff:user_preferences", args=[alice.pk]), {"tone": "formal"}
    )
    assert response.status_code == 302 and response.url == reverse("staff:user", args=[alice.pk])


def test_staff_correct_the_learned_style(staff_client, staff, alice):
    """Metric values are saved, recorded with the staff member and a reason."""
    response = staff_client.post(
        reverse("staff:user_style", args=[alice.pk]),
        {"formality": 0.9, "technical_level": 0.2, "verbosity": 0.4, "emoji_use": 0.0},
        HTTP_HX_REQUEST="true",
    )
    assert b"Learned style saved." in response.content
    profile = UserProfile.objects.get(user=alice)
    assert (profile.formality, profile.technical_level, profile.emoji_use) == (0.9, 0.2, 0.0)
    record = profile.history.latest("history_date")
    assert record.history_user == staff and "formality" in record.history_change_reason


def test_a_style_value_out_of_range_is_refused(staff_client, alice):
    """Metrics are between 0 and 1; the error shows next to the field."""
    response = staff_client.post(
        reverse("staff:user_style", args=[alice.pk]),
        {"formality": 3, "technical_level": 0.2, "verbosity": 0.4, "emoji_use": 0.0},
        HTTP_HX_REQUEST="true",
    )
    assert b"less than or equal to 1" in response.content
    assert not UserProfile.objects.filter(user=alice).exists()


def test_the_user_page_counts_memories_by_status(staff_client, alice, world):
    """Memory counts per kind and status link to the filtered lists."""
    Decision.objects.filter(user=alice).update(status="reversed")
    html = staff_client.get(reverse("staff:user", args=[alice.pk])).content.decode()
    assert "reversed: 1" in html and "kind=decision&amp;user=alice&amp;status=reversed" in html


def test_the_user_page_shows_levels_by_subject(staff_client, alice):
    from profiles.expertise import domains_set
    from profiles.services import profile_observe_message

    for _ in range(3):
        profile_observe_message(user=alice, text="I'm a chef; my beurre blanc breaks on reheating.")
    domains_set(user=alice, settings={"finance": "beginner"})
    html = staff_client.get(reverse("staff:user", args=[alice.pk])).content.decode()
    section = html[html.index('id="domain-levels"') :]
    section = section[: section.index("</section>")]
    assert "Cooking" in section and "Expert" in section and "(learned)" in section
    assert "Finance" in section and "(set by the user)" in section
    assert "Music" not in section  # nothing learned or set
