"""The memory lists: full-text search, filters, sorting, pagination, a fixed query count."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from chat.services import conversation_create
from memory.models import ActionItem, Decision, Fact

pytestmark = pytest.mark.django_db

URL = reverse("staff:memories")


def _texts(response) -> list[str]:
    kind = response.context["kind"]
    return [kind.text_of(m) for m in response.context["page"]]


def test_facts_are_listed_newest_first(staff_client, alice):
    """By default the most recently updated come first."""
    now = timezone.now()
    Fact.objects.create(user=alice, text="older", updated_at=now - timedelta(days=2))
    Fact.objects.create(user=alice, text="newer", updated_at=now)
    assert _texts(staff_client.get(URL)) == ["newer", "older"]


def test_search_finds_words_by_prefix_and_stem(staff_client, alice, bob):
    """Every word must match; a word may be the start of one ("deadl")."""
    Fact.objects.create(user=alice, text="The project deadline is in March.")
    Fact.objects.create(user=alice, text="The project has a blue logo.")
    Fact.objects.create(user=bob, text="Deadlines make Bob nervous.")
    assert _texts(staff_client.get(URL, {"q": "project deadl"})) == [
        "The project deadline is in March."
    ]
    assert sorted(_texts(staff_client.get(URL, {"q": "deadline"}))) == [
        "Deadlines make Bob nervous.",
        "The project deadline is in March.",
    ]


def test_search_also_finds_memories_outside_the_index(staff_client, alice):
    """Superseded facts and finished action items are matched by substring."""
    Fact.objects.create(user=alice, text="Favourite colour is blue", status="superseded")
    ActionItem.objects.create(user=alice, what="Book the venue", status="done", dedupe_key="k")
    assert _texts(staff_client.get(URL, {"q": "colour"})) == ["Favourite colour is blue"]
    assert _texts(staff_client.get(URL, {"kind": "action_item", "q": "venue"})) == [
        "Book the venue"
    ]


def test_a_search_of_stopwords_still_matches(staff_client, alice):
    """A query made only of stopwords ("to do") falls back to a substring match."""
    Fact.objects.create(user=alice, text="Has a lot to do this week")
    Fact.objects.create(user=alice, text="Likes tea")
    assert _texts(staff_client.get(URL, {"q": "to do"})) == ["Has a lot to do this week"]


def test_search_input_cannot_break_the_query(staff_client, alice):
    """Quotes, operators and brackets are searched for, never parsed."""
    Fact.objects.create(user=alice, text="Uses C++ and NEAR operators")
    for query in ('"', "NEAR(", "a OR b AND", "*", "owner:u1", "c++ -x"):
        assert staff_client.get(URL, {"q": query}).status_code == 200


def test_the_filters_combine(staff_client, alice, bob, world):
    """User, category, status, pinned and date filters narrow the list together."""
    now = timezone.now()
    Fact.objects.create(user=alice, text="pinned project", category="project", pinned=True)
    Fact.objects.create(
        user=alice, text="old project", category="project", updated_at=now - timedelta(days=40)
    )
    Fact.objects.create(user=alice, text="gone", category="project", status="superseded")
    assert _texts(staff_client.get(URL, {"user": "alice", "pinned": "yes"})) == ["pinned project"]
    assert "Bob likes tea." not in _texts(staff_client.get(URL, {"user": "alice"}))
    assert _texts(staff_client.get(URL, {"status": "superseded"})) == ["gone"]
    since = (now - timedelta(days=1)).date().isoformat()
    recent = _texts(
        staff_client.get(URL, {"user": "alice", "category": "project", "updated_from": since})
    )
    assert "old project" not in recent and "pinned project" in recent
    assert _texts(staff_client.get(URL, {"user": "nobody"})) == []


def test_a_conversation_filter_lists_its_memories(staff_client, world, alice):
    """Linked from the conversation page: only memories from that conversation."""
    other = conversation_create(user=alice)
    Decision.objects.create(user=alice, conversation=other, what="Elsewhere", dedupe_key="e")
    response = staff_client.get(URL, {"kind": "decision", "conversation": world["conversation"].pk})
    assert _texts(response) == ["Use PostgreSQL"]


def test_sorting_by_importance_and_due_date(staff_client, alice):
    """Facts sort by importance; action items by due date, undated last."""
    Fact.objects.create(user=alice, text="minor", importance=0.1)
    Fact.objects.create(user=alice, text="major", importance=0.9)
    assert _texts(staff_client.get(URL, {"sort": "-importance"})) == ["major", "minor"]
    today = timezone.localdate()
    ActionItem.objects.create(
        user=alice, what="later", due_date=today + timedelta(days=9), dedupe_key="a"
    )
    ActionItem.objects.create(user=alice, what="undated", dedupe_key="b")
    ActionItem.objects.create(user=alice, what="sooner", due_date=today, dedupe_key="c")
    response = staff_client.get(URL, {"kind": "action_item", "sort": "due_date"})
    assert _texts(response) == ["sooner", "later", "undated"]


def test_bad_filter_values_are_ignored(staff_client, alice):
    """A wrong date or an unknown sort does not fail the page."""
    Fact.objects.create(user=alice, text="still here")
    response = staff_client.get(
        URL, {"updated_from": "yesterday", "sort": "password", "kind": "fact"}
    )
    assert response.status_code == 200 and _texts(response) == ["still here"]


def test_an_unknown_kind_is_404(staff_client):
    """Only facts, decisions and action items."""
    assert staff_client.get(URL, {"kind": "secrets"}).status_code == 404


def test_pages_hold_50_and_go_deep(staff_client, alice):
    """Pagination: 50 a page, the last page has the rest."""
    Fact.objects.bulk_create(Fact(user=alice, text=f"fact {i}") for i in range(120))
    first = staff_client.get(URL)
    assert len(first.context["page"]) == 50 and first.context["page"].paginator.num_pages == 3
    assert len(staff_client.get(URL, {"page": 3}).context["page"]) == 20


def test_htmx_filtering_returns_only_the_table(staff_client, alice):
    """The filter form targets the table; the kind tabs target the whole section."""
    Fact.objects.create(user=alice, text="x")
    table = staff_client.get(URL, {"q": "x"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="memory-table")
    assert table.content.decode().lstrip().startswith('<div id="memory-table"')
    section = staff_client.get(URL, {"kind": "decision"}, HTTP_HX_REQUEST="true")
    assert section.content.decode().lstrip().startswith('<div id="memory-section">')


@pytest.mark.parametrize("kind", ["fact", "decision", "action_item"])
def test_a_page_costs_the_same_queries_for_3_or_50_rows(
    staff_client, alice, bob, kind, django_assert_max_num_queries
):
    """No N+1: session, user, count, page ids, rows with owners and conversations joined
    (and the username of a user filter), whatever the page holds."""
    conversation = conversation_create(user=alice)

    def make(n, start):
        for i in range(start, start + n):
            user = alice if i % 2 else bob
            if kind == "fact":
                Fact.objects.create(user=user, conversation=conversation, text=f"t{i}")
            elif kind == "decision":
                Decision.objects.create(
                    user=user, conversation=conversation, what=f"t{i}", dedupe_key=f"k{i}"
                )
            else:
                ActionItem.objects.create(
                    user=user, conversation=conversation, what=f"t{i}", dedupe_key=f"k{i}"
                )

    make(3, 0)
    with django_assert_max_num_queries(6):
        staff_client.get(URL, {"kind": kind})
    make(60, 3)
    with django_assert_max_num_queries(6):
        response = staff_client.get(URL, {"kind": kind, "q": "t1", "user": "alice"})
    assert response.status_code == 200
    with django_assert_max_num_queries(6):
        response = staff_client.get(URL, {"kind": kind})
    assert len(response.context["page"]) == 50


def test_row_links_are_the_reversed_urls(staff_client, world):
    """The links built from prefixes (one reverse a page, not eleven a row) match reverse()."""
    fact = world["fact"]
    response = staff_client.get(URL, {"user": "alice"})
    row = next(m for m in response.context["page"] if m.pk == fact.pk)
    assert row.urls.edit == reverse("staff:memory_edit", args=["fact", fact.pk])
    assert row.urls.delete == reverse("staff:memory_delete", args=["fact", fact.pk])
    assert row.urls.history == reverse("staff:memory_history", args=["fact", fact.pk])
    assert row.urls.pin == reverse("staff:fact_pin", args=[fact.pk])
    assert row.urls.supersede == reverse("staff:fact_supersede", args=[fact.pk])
    assert row.urls.row == reverse("staff:memory_row", args=["fact", fact.pk])
    assert row.urls.user == reverse("staff:user", args=[fact.user_id])
    assert row.urls.conversation == reverse("staff:conversation", args=[fact.conversation_id])
