"""The staff full-text search helper."""

from __future__ import annotations

import pytest

from memory.models import Decision, Fact
from staff.kinds import KINDS
from staff.search import search_filter, search_terms

pytestmark = pytest.mark.django_db


def test_terms_drop_stopwords_and_repeats():
    """Lower case, no stopwords, each word once, punctuation gone."""
    assert search_terms("The DEADLINE, the deadline: is it March?") == ["deadline", "march"]
    assert search_terms('"; DROP TABLE --') == ["drop", "table"]


def test_a_blank_query_filters_nothing(alice):
    """An empty search keeps every row."""
    Fact.objects.create(user=alice, text="x")
    assert Fact.objects.filter(search_filter(KINDS["fact"], "  ")).count() == 1


def test_the_user_filter_is_applied_inside_the_index(alice, bob):
    """With a user id the index query itself is limited to that owner."""
    Fact.objects.create(user=alice, text="gardening tips")
    Fact.objects.create(user=bob, text="gardening tools")
    q = search_filter(KINDS["fact"], "gardening", user_id=bob.pk)
    assert list(Fact.objects.filter(q).values_list("text", flat=True)) == ["gardening tools"]


def test_decisions_match_their_context_and_rationale(alice):
    """The index holds a decision's what, context and rationale."""
    Decision.objects.create(
        user=alice, what="Use Postgres", rationale="for its JSON support", dedupe_key="p"
    )
    q = search_filter(KINDS["decision"], "json")
    assert Decision.objects.filter(q).count() == 1


def test_a_status_limited_to_the_index_skips_the_substring_scan(alice):
    """Asking for active facts only: the filter is the index subquery alone."""
    q = search_filter(KINDS["fact"], "tea", statuses=["active"])
    sql = str(Fact.objects.filter(q).query)
    assert "memory_search" in sql and "LIKE" not in sql.upper()
