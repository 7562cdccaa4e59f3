"""Impossible dates, ids beyond any column's range and NUL characters in URLs and query
strings are a 400, a 404 or an empty result: never a 500, on SQLite or PostgreSQL."""

import pytest
from django.test import Client

from chat.services import conversation_create, message_create
from memory.models import Fact

pytestmark = pytest.mark.django_db

HUGE = str(10**30)
BIG = str(2**63)  # one past the largest bigint

STAFF_URLS = [
    f"/staff/users/{HUGE}/",
    f"/staff/users/{BIG}/export/",
    f"/staff/conversations/{HUGE}/",
    f"/staff/memories/fact/{HUGE}/edit/",
    f"/staff/memories/fact/{BIG}/history/",
    f"/staff/runs/{HUGE}/",
    "/staff/memories/?kind=fact&conversation=" + HUGE,
    "/staff/memories/?kind=fact&updated_from=2024-02-30&updated_to=2024-13-01",
    "/staff/memories/?kind=fact&q=a%00b&user=al%00ice",
    "/staff/memories/?kind=fact&page=" + HUGE,
    "/staff/memories/?kind=action_item&status=%00",
    "/staff/changes/?before=2024-02-30T10:00:00",
    "/staff/changes/?before=9999-99-99",
    "/staff/changes/?user_id=" + HUGE,
    "/staff/changes/?kind=%00",
    "/staff/users/?q=%00&sort=%00",
    "/staff/users/?page=" + HUGE,
    "/staff/conversations/{conversation}/?page=" + HUGE,
    "/staff/conversations/{conversation}/diff/?a=1&b=" + HUGE,
]

USER_URLS = [
    "/?q=a%00b",
    "/?q=%00",
    "/c/{conversation}/?q=x%00",
    f"/c/{HUGE}/",
    "/c/{conversation}/history/?before=" + HUGE,
    "/c/{conversation}/history/?before=-" + HUGE,
]


@pytest.fixture
def conversation(alice):
    conversation = conversation_create(user=alice, title="Notes")
    message_create(conversation=conversation, role="user", content="hello there")
    Fact.objects.create(user=alice, conversation=conversation, text="Alice likes tea.")
    return conversation


def _get(client: Client, url: str, conversation):
    return client.get(url.format(conversation=conversation.pk))


@pytest.mark.parametrize("url", STAFF_URLS)
def test_staff_pages_refuse_impossible_input_cleanly(client, staff, conversation, url):
    client.force_login(staff)
    response = _get(client, url, conversation)
    assert response.status_code in (200, 302, 400, 404), response.status_code


@pytest.mark.parametrize("url", USER_URLS)
def test_chat_pages_refuse_impossible_input_cleanly(client, alice, conversation, url):
    client.force_login(alice)
    response = _get(client, url, conversation)
    assert response.status_code in (200, 302, 400, 404), response.status_code


def test_the_sidebar_search_finds_through_a_nul(client, alice, conversation):
    """A NUL in the search is dropped (PostgreSQL text cannot hold one), not fatal."""
    client.force_login(alice)
    response = client.get("/?q=No%00tes")
    assert response.status_code == 200 and "Notes" in response.content.decode()


def test_staff_posts_with_out_of_range_ids_are_clean(client, staff, conversation):
    client.force_login(staff)
    fact = Fact.objects.get()
    for url, data in [
        ("/staff/memories/fact/bulk-delete/", {"ids": [HUGE]}),
        ("/staff/memories/fact/bulk-delete/", {"ids": [BIG], "confirm": "1"}),
        (f"/staff/memories/fact/{fact.pk}/supersede/", {"by": HUGE}),
    ]:
        response = client.post(url, data)
        assert response.status_code in (200, 302, 400), (url, response.status_code)
