"""The Memory page's search matches word forms, by the Snowball stem (``word_root``)."""

import pytest
from django.urls import reverse

from memory.models import Fact, MemoryState
from memory.search.staff import search_filter, word_root
from memory.selectors.owned import FACT
from memory.services import action_item_remember, decision_remember, fact_remember
from profiles.services import profile_set_memory_mode

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_words_root_is_its_stem_as_a_prefix_for_every_form():
    assert {word_root(w) for w in ("allergy", "allergies")} == {"allerg"}
    assert "allergic".startswith(word_root("allergy"))
    assert word_root("peanuts") == word_root("peanut")
    assert word_root("cats") == "cat"  # a short stem is not cut: not "category"
    assert word_root("organise") == word_root("organize")


def search(client, query, **params):
    return client.get(reverse("memory:page"), {"q": query, **params}).content.decode()


@pytest.mark.parametrize(
    ("query", "stored"),
    [
        ("peanuts allergy", "The user is allergic to peanuts."),
        ("allergies", "The user is allergic to peanuts."),
        ("gardening", "The user loves gardens."),
        ("organize", "The user organises the school fair."),
    ],
)
def test_search_finds_other_forms_of_the_words(alice_client, alice, conversation, query, stored):
    fact_remember(
        user=alice, conversation=conversation, category="personal", subject="", text=stored,
        importance=0.6,
    )  # fmt: skip
    fact_remember(
        user=alice, conversation=conversation, category="personal", subject="",
        text="The user lives in Lyon.", importance=0.6,
    )  # fmt: skip
    page = search(alice_client, query)
    assert stored in page and "Lyon" not in page


def test_every_word_must_match_in_some_form(alice_client, alice, conversation):
    fact_remember(
        user=alice, conversation=conversation, category="personal", subject="",
        text="The user is allergic to peanuts.", importance=0.6,
    )  # fmt: skip
    assert "allergic to peanuts" not in search(alice_client, "cats allergy")


def test_decisions_and_action_items_match_word_forms(alice_client, alice, conversation):
    decision_remember(user=alice, conversation=conversation, what="Go to Porto in August")
    action_item_remember(user=alice, conversation=conversation, what="Fix the fences")
    assert "Go to Porto" in search(alice_client, "going porto")
    assert "Fix the fences" in search(alice_client, "fixing fence")


def test_suggestions_and_finished_items_match_word_forms_too(alice_client, alice, conversation):
    """Out of the index, by substring: every word's root."""
    profile_set_memory_mode(user=alice, mode="ask")
    fact_remember(
        user=alice, conversation=conversation, category="personal", subject="",
        text="The user is allergic to peanuts.", importance=0.6, suggest=True,
    )  # fmt: skip
    assert Fact.objects.get(user=alice).state == MemoryState.SUGGESTED
    found = Fact.objects.filter(
        search_filter(FACT, "peanuts allergy", user_id=alice.pk, suggestions=True)
    )
    assert found.count() == 1
    done = action_item_remember(
        user=alice, conversation=conversation, what="Renew the passports", status="done"
    )
    assert done
    assert "Renew the passports" in search(alice_client, "passport renewal", kind="action_item")
