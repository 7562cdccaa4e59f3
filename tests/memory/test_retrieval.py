"""memory.search.search: ranked hits over everything the user's memory holds."""

from datetime import timedelta

import pytest
from django.utils import timezone

from chat.models import Message
from chat.services import NewMessage, conversation_create, message_create_many
from memory.models import ActionItem, Decision, Fact, Summary
from memory.search import search
from memory.search.terms import query_terms

pytestmark = pytest.mark.django_db


def kinds(hits):
    return [(h.kind, h.text) for h in hits]


def test_every_stored_message_is_searchable_with_no_further_call(alice, say):
    """message_create indexes the message: the next search finds it."""
    message = say("My sister Ana lives in Porto.")
    hits = search(user=alice, query="where does Ana live?")
    assert hits[0].kind == "message" and hits[0].id == message.pk
    assert hits[0].message_ids == [message.pk] and hits[0].text == message.content


def test_bulk_created_messages_are_indexed_too(alice, conversation):
    """message_create_many (imports) is indexed by the same triggers."""
    stored = message_create_many(
        conversation=conversation,
        messages=[NewMessage("user", f"note {i} about quokkas") for i in range(50)],
    )
    hits = search(user=alice, query="quokkas", k=100)
    shown = [i for hit in hits for i in hit.message_ids]
    assert sorted(shown) == sorted(m.pk for m in stored)  # each once, some as neighbours


def test_stemming_matches_other_word_forms(alice, say):
    """'running' finds 'runs' (porter stemming on both sides)."""
    say("She runs marathons every spring.")
    assert search(user=alice, query="running")


def test_it_never_returns_another_users_memories(alice, bob, say):
    """Bob's messages and facts are invisible to Alice's search."""
    other = conversation_create(user=bob)
    say("Bob's password hint is pineapple", conversation=other)
    Fact.objects.create(user=bob, text="Bob likes pineapple", dedupe_key="b")
    assert search(user=alice, query="pineapple") == []
    assert len(search(user=bob, query="pineapple")) == 2


def test_facts_decisions_actions_and_summaries_are_searched(alice, conversation):
    """Each kind of memory is a hit with its kind and source messages."""
    source = Message.objects.create(conversation=conversation, role="user", content="x")
    fact = Fact.objects.create(
        user=alice,
        conversation=conversation,
        text="The user is allergic to peanuts",
        dedupe_key="f",
    )
    fact.source_messages.add(source)
    Decision.objects.create(
        user=alice,
        what="Use PostgreSQL for the peanut database",
        rationale="reliability",
        dedupe_key="d",
    )
    ActionItem.objects.create(user=alice, what="Buy peanut-free snacks", dedupe_key="a")
    Summary.objects.create(
        conversation=conversation,
        version=1,
        is_current=True,
        text="Talked about peanuts and allergies",
        covered_through=source.pk,
    )
    hits = search(user=alice, query="peanuts", k=10)
    assert {h.kind for h in hits} == {"fact", "decision", "action_item", "summary"}
    fact_hit = next(h for h in hits if h.kind == "fact")
    assert fact_hit.message_ids == [source.pk]
    assert fact_hit.source == "Trip planning"
    summary_hit = next(h for h in hits if h.kind == "summary")
    assert summary_hit.message_ids == [source.pk]


def test_superseded_facts_and_old_summary_versions_are_not_searched(alice, conversation):
    """Only what is current can be recalled."""
    fact = Fact.objects.create(user=alice, text="Favourite colour is blue", dedupe_key="b")
    Summary.objects.create(
        conversation=conversation, version=1, is_current=False, text="colour talk"
    )
    fact.status = Fact.Status.SUPERSEDED
    fact.save()
    assert search(user=alice, query="colour") == []


def test_edits_and_deletes_update_the_index(alice, conversation):
    """Changing a fact's text re-indexes it; deleting removes it."""
    fact = Fact.objects.create(user=alice, text="likes tea", dedupe_key="t")
    fact.text = "likes coffee"
    fact.save()
    assert search(user=alice, query="tea") == []
    assert search(user=alice, query="coffee")[0].id == fact.pk
    fact.delete()
    assert search(user=alice, query="coffee") == []


def test_temporary_conversations_are_not_indexed(alice):
    """A temporary conversation writes no memory, not even its messages."""
    temporary = conversation_create(user=alice, temporary=True)
    message_create_many(conversation=temporary, messages=[NewMessage("user", "secret zebra")])
    assert search(user=alice, query="zebra") == []


def test_importance_and_recency_break_ties(alice, conversation):
    """Equal text matches: a pinned fact outranks a raw old message."""
    old = timezone.now() - timedelta(days=200)
    message_create_many(
        conversation=conversation,
        messages=[NewMessage("user", "the wifi password is swordfish", old)],
    )
    Fact.objects.create(
        user=alice, text="the wifi password is swordfish", pinned=True, dedupe_key="w"
    )
    hits = search(user=alice, query="wifi password")
    assert [h.kind for h in hits] == ["fact", "message"]
    assert hits[0].score > hits[1].score


def test_queries_are_not_fts_syntax(alice, say):
    """Quotes, operators and punctuation in the user's text cannot break the query."""
    say("A note about NEAR and AND operators")
    for query in ['"unbalanced', "AND OR NOT", "near(a b)", "*", "col:umn", "');--"]:
        search(user=alice, query=query)  # no error
    assert search(user=alice, query='operators" OR "x')


def test_stopwords_alone_find_nothing(alice, say):
    """A question of only common words returns no hits rather than noise."""
    say("what is it about")
    assert query_terms("what is it about?") == []
    assert search(user=alice, query="what is it about?") == []


def test_k_limits_and_ranks(alice, conversation):
    """At most k hits, best first."""
    message_create_many(
        conversation=conversation,
        messages=[NewMessage("user", "llama " * (i + 1)) for i in range(20)],
    )
    hits = search(user=alice, query="llama", k=5)
    assert len(hits) == 5
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
