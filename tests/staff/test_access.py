"""Every staff page and fragment: anonymous visitors log in, users get 403, staff get in."""

from __future__ import annotations

import pytest
from django.urls import get_resolver, reverse

from memory.models import SummaryRun
from profiles.keys import key_create
from projects.models import Project

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _requests(world, alice, staff):
    """url name -> (method, url args, POST data, HTMX?, status staff get)."""
    conversation = world["conversation"]
    fact, old_summary = world["fact"], world["summaries"][0]
    run = SummaryRun.objects.create(conversation=conversation, requested_by=staff)
    first_version = fact.history.earliest("history_date").history_id
    key = key_create(user=alice, name="laptop").key
    project = Project.objects.create(user=alice, name="Launch")
    return {
        "home": ("get", [], None, False, 200),
        "users": ("get", [], None, False, 200),
        "user": ("get", [alice.pk], None, False, 200),
        "user_preferences": ("post", [alice.pk], {"detail_level": "brief"}, True, 200),
        "user_style": (
            "post",
            [alice.pk],
            {"formality": 0.5, "technical_level": 0.5, "verbosity": 0.4, "emoji_use": 0.1},
            True,
            200,
        ),
        "user_password": (
            "post",
            [alice.pk],
            {"new_password1": "staff-chosen-pass-3", "new_password2": "staff-chosen-pass-3"},
            False,
            302,
        ),
        "user_reset_link": ("post", [alice.pk], {}, False, 302),
        "user_key_revoke": ("post", [alice.pk, key.pk], {}, False, 302),
        "user_export": ("get", [alice.pk], None, False, 200),
        "user_data_delete": ("get", [alice.pk], None, False, 200),
        "user_report": ("get", [alice.pk, "minutes"], None, False, 200),
        "user_report_download": ("get", [alice.pk, "progress"], None, False, 200),
        "import": ("get", [], None, False, 200),
        "conversation": ("get", [conversation.pk], None, False, 200),
        "resummarise": ("post", [conversation.pk], {}, True, 200),
        "project_resummarise": ("post", [project.pk], {}, False, 302),
        "summary_diff": ("get", [conversation.pk], None, False, 200),
        "conversation_report": ("get", [conversation.pk, "briefing"], None, False, 200),
        "conversation_report_download": ("get", [conversation.pk, "minutes"], None, False, 200),
        "summary_make_current": ("post", [old_summary.pk], {}, True, 200),
        "summary_run": ("get", [run.pk], None, True, 200),
        "memories": ("get", [], None, False, 200),
        "memory_bulk_delete": ("post", ["fact"], {"ids": [fact.pk]}, False, 200),
        "memory_row": ("get", ["fact", fact.pk], None, True, 200),
        "memory_edit": ("get", ["fact", fact.pk], None, False, 200),
        "memory_delete": ("get", ["fact", fact.pk], None, False, 200),
        "memory_history": ("get", ["fact", fact.pk], None, False, 200),
        "memory_restore": ("post", ["fact", fact.pk, first_version], {}, False, 302),
        "fact_pin": ("post", [fact.pk], {"pinned": "1"}, True, 200),
        "fact_supersede": ("post", [fact.pk], {}, True, 200),
        "changes": ("get", [], None, False, 200),
    }


def _staff_url_names() -> set[str]:
    resolver = get_resolver()
    namespace = resolver.namespace_dict["staff"][1]
    return {name for name in namespace.reverse_dict if isinstance(name, str)}


URL_NAMES = sorted(_staff_url_names())


def _call(client, method, name, args, data, htmx):
    url = reverse(f"staff:{name}", args=args)
    headers = HTMX if htmx else {}
    if method == "get":
        return client.get(url, **headers)
    return client.post(url, data, **headers)


def test_the_table_covers_every_staff_url(world, alice, staff):
    """A new staff view cannot skip the permission tests."""
    assert set(_requests(world, alice, staff)) == set(URL_NAMES)


@pytest.mark.parametrize("name", URL_NAMES)
def test_anonymous_visitors_are_sent_to_log_in(client, world, alice, staff, name):
    """Without a session, every page and fragment redirects to the login page."""
    method, args, data, _htmx, _status = _requests(world, alice, staff)[name]
    response = _call(client, method, name, args, data, htmx=False)
    assert response.status_code == 302
    assert response.url.startswith(reverse("login") + "?next=")


@pytest.mark.parametrize("name", URL_NAMES)
def test_users_who_are_not_staff_get_403(client, world, alice, staff, name):
    """A signed-in user without is_staff is refused, on pages and HTMX fragments alike."""
    client.force_login(alice)
    method, args, data, htmx, _status = _requests(world, alice, staff)[name]
    assert _call(client, method, name, args, data, htmx).status_code == 403


@pytest.mark.parametrize("name", URL_NAMES)
def test_staff_get_in(staff_client, world, alice, staff, name):
    """Staff get the page (or fragment, or, for a restore, a redirect back to the history)."""
    method, args, data, htmx, status = _requests(world, alice, staff)[name]
    response = _call(staff_client, method, name, args, data, htmx)
    assert response.status_code == status, response.content[:500]
    if status == 302:
        assert not response.url.startswith(reverse("login"))


def test_an_htmx_request_without_a_session_gets_a_client_redirect(client, world):
    """A fragment request after the session expired redirects the whole page to log in."""
    url = reverse("staff:memories")
    response = client.get(
        url, HTTP_HX_REQUEST="true", HTTP_HX_CURRENT_URL=f"http://testserver{url}"
    )
    assert response.status_code == 200
    assert response["HX-Redirect"] == f"{reverse('login')}?next={url}"


def test_inactive_staff_are_refused(client, staff, world):
    """An is_staff account that was deactivated cannot use the dashboard."""
    client.force_login(staff)
    staff.is_active = False
    staff.save()
    response = client.get(reverse("staff:home"))
    assert response.status_code in (302, 403)


def test_the_overview_counts_in_words(staff_client, world):
    """One conversation, one decision: no "1 conversations"."""
    html = staff_client.get(reverse("staff:home")).content.decode()
    assert "<strong>1</strong> conversation<" in html
    assert "<strong>1</strong> decision<" in html
    assert "<strong>1</strong> action item<" in html
