"""Candidates by meaning (memory.search.vectors, the real local model): a question that shares
no word with what the user said still finds it; only the user's own, current vectors count."""

import pytest

from chat.services import NewMessage, conversation_create, message_create_many
from memory.models import Embedding, Fact
from memory.search import embeddings, search, vectors
from memory.services.edits import memory_edit_text

pytestmark = pytest.mark.django_db

UNRELATED = [
    "The quarterly budget review is on Monday",
    "I started violin lessons in September",
    "Our team ships the release candidate next sprint",
]


@pytest.fixture(autouse=True)
def local(settings):
    settings.MEMORYCHAT_EMBEDDINGS = "local"
    settings.OPENAI_EMBEDDING_MODEL = ""


def tell(user, *texts):
    conversation = conversation_create(user=user)
    stored = message_create_many(
        conversation=conversation, messages=[NewMessage("user", t) for t in texts]
    )
    embeddings.embed_pending()
    return stored


def test_a_question_that_shares_no_word_finds_the_turn_by_meaning(alice):
    dog, *_ = tell(alice, "My dog Rex loves the beach", *UNRELATED)
    hits = search(user=alice, query="Which pet enjoys the seaside?")
    assert hits and hits[0].kind == "message" and hits[0].id == dog.pk


def test_a_loose_paraphrase_below_half_similarity_is_still_a_candidate(alice):
    """Human talk answers without the question's words and often far from its wording
    (MiniLM's cosine here 0.45, under the old floor of 0.5): it is found by meaning, while
    the unrelated turns (0.04 at most) are not."""
    cat, *_ = tell(alice, "We adopted another cat last month, she is called Bailey", *UNRELATED)
    hits = search(user=alice, query="What pets does Melanie have?")
    assert [(h.kind, h.id) for h in hits] == [("message", cat.pk)]


def test_an_unrelated_question_finds_nothing(alice):
    tell(alice, "My dog Rex loves the beach", *UNRELATED)
    assert search(user=alice, query="How do I configure a kubernetes ingress?") == []


def test_another_users_vectors_are_never_compared(alice, bob):
    """Bob told about his dog; Alice's vectors are all unrelated: her search finds none of
    his turns, and without vectors of her own it embeds nothing."""
    tell(bob, "My dog Rex loves the beach")
    assert search(user=alice, query="Which pet enjoys the seaside?") == []
    tell(alice, *UNRELATED)
    hits = search(user=alice, query="Which pet enjoys the seaside?")
    assert all(h.kind == "message" for h in hits)
    bobs = set(Embedding.objects.filter(user=bob).values_list("object_id", flat=True))
    assert not {h.id for h in hits} & bobs


def test_a_turn_embedded_after_a_search_is_found_by_the_next(alice):
    """The held vectors follow the database (another process's job stores them)."""
    tell(alice, *UNRELATED)
    assert search(user=alice, query="Which pet enjoys the seaside?") == []
    (dog,) = tell(alice, "My dog Rex loves the beach")
    assert [h.id for h in search(user=alice, query="Which pet enjoys the seaside?")][:1] == [dog.pk]


def test_an_edited_memory_is_not_found_by_what_it_used_to_say(alice):
    """Editing the text drops its vector (a database trigger): the fact is not found by the
    meaning of its old text, and the job embeds the new one."""
    tell(alice, *UNRELATED)
    fact = Fact.objects.create(user=alice, text="Alice's dog Rex loves the beach")
    embeddings.embed_pending()
    hits = search(user=alice, query="Which pet enjoys the seaside?")
    assert [(h.kind, h.id) for h in hits][:1] == [("fact", fact.pk)]

    memory_edit_text(memory=fact, actor=alice, text="Alice prefers tea over coffee")
    assert not Embedding.objects.filter(kind="fact", object_id=fact.pk).exists()
    assert search(user=alice, query="Which pet enjoys the seaside?") == []
    assert embeddings.embed_pending() == 1
    hits = search(user=alice, query="Does she drink tea?")
    assert [(h.kind, h.id) for h in hits][:1] == [("fact", fact.pk)]


def test_a_deleted_turns_vector_goes_with_it(alice):
    dog, *_ = tell(alice, "My dog Rex loves the beach", *UNRELATED)
    assert search(user=alice, query="Which pet enjoys the seaside?")
    dog.delete()
    assert not Embedding.objects.filter(kind="message", object_id=dog.pk).exists()
    assert search(user=alice, query="Which pet enjoys the seaside?") == []


def test_a_retired_fact_is_not_recalled_by_its_vector(alice):
    """The vector outlives the fact's place in the index (superseded): nothing recalls it."""
    tell(alice, *UNRELATED)
    fact = Fact.objects.create(user=alice, text="Alice's dog Rex loves the beach")
    embeddings.embed_pending()
    Fact.objects.filter(pk=fact.pk).update(status=Fact.Status.SUPERSEDED)
    assert Embedding.objects.filter(kind="fact", object_id=fact.pk).exists()
    assert search(user=alice, query="Which pet enjoys the seaside?") == []


def test_over_the_cap_the_newest_vectors_are_held_and_older_turns_compared_from_the_database(
    alice, settings
):
    """A history longer than the cache holds keeps its newest vectors: a paraphrase of a
    recent turn is still found by meaning. An older turn is not a candidate by meaning, but as
    a lexical candidate it is still compared by meaning, its vector read from the database."""
    settings.MEMORYCHAT_VECTOR_CACHE_ROWS = 3  # past it, the newest 2 (four fifths) are held
    (violin,) = tell(alice, "I started violin lessons in September")
    *_, dog = tell(alice, *UNRELATED[::2], "My dog Rex loves the beach")
    held = vectors.snapshot(alice.pk, embeddings.model_name())
    assert (held.size, held.complete) == (2, False)
    assert held.row_of(("message", violin.pk)) is None

    assert [h.id for h in search(user=alice, query="Which pet enjoys the seaside?")][:1] == [dog.pk]
    question = "Which instrument am I learning to play?"
    found = embeddings.compare(user=alice, query=question, keys=[("message", violin.pk)], nearest=5)
    assert ("message", violin.pk) not in dict(found.nearest)
    assert found.cosines[("message", violin.pk)] > 0.4
    assert search(user=alice, query=question) == []
    assert [h.id for h in search(user=alice, query="my violin lessons")][:1] == [violin.pk]


def test_the_window_slides_when_the_history_grows_past_the_cap(alice, settings):
    """A user who fitted and grows past the cap ends holding their newest vectors only, and
    what they say next is held as it is stored."""
    settings.MEMORYCHAT_VECTOR_CACHE_ROWS = 5  # past it, the newest 4 are held
    first, *_ = tell(alice, "My dog Rex loves the beach", *UNRELATED, "My sister lives in Porto")
    model = embeddings.model_name()
    assert vectors.snapshot(alice.pk, model).complete
    tell(alice, "I cycle to work when it is dry", "We moved to Lyon last spring")
    held = vectors.snapshot(alice.pk, model)
    assert (held.size, held.complete) == (4, False)
    assert held.row_of(("message", first.pk)) is None
    (latest,) = tell(alice, "The heron nests by the lock")  # appended: the cap is not passed
    held = vectors.snapshot(alice.pk, model)
    assert (held.size, held.complete) == (5, False)
    assert held.row_of(("message", latest.pk)) is not None


def test_no_vector_is_held_with_the_cache_off(alice, settings):
    """VECTOR_CACHE_ROWS=0: the lexical candidates are still compared by meaning."""
    dog, *_ = tell(alice, "My dog Rex loves the beach", *UNRELATED)
    settings.MEMORYCHAT_VECTOR_CACHE_ROWS = 0
    assert vectors.snapshot(alice.pk, embeddings.model_name()) is None
    assert [h.id for h in search(user=alice, query="my dog Rex")][:1] == [dog.pk]
    assert search(user=alice, query="Which pet enjoys the seaside?") == []
    found = embeddings.compare(
        user=alice, query="Which pet enjoys the seaside?", keys=[("message", dog.pk)], nearest=5
    )
    assert found.nearest == [] and found.cosines[("message", dog.pk)] > 0.5


def test_a_user_without_vectors_costs_the_search_no_vector_read(alice, django_assert_num_queries):
    """Nothing embedded yet: the held snapshot is empty and complete, so no candidate's
    vector is looked up and the query is not embedded."""
    (dog,) = tell(alice, "My dog Rex loves the beach")
    Embedding.objects.filter(user=alice).delete()
    model = embeddings.model_name()
    assert vectors.snapshot(alice.pk, model).size == 0
    with django_assert_num_queries(1):  # the snapshot's own count
        assert (
            embeddings.compare(user=alice, query="dog", keys=[("message", dog.pk)], nearest=5)
            is None
        )


def test_the_held_vectors_follow_deletions_and_inserts_between_two_searches(alice):
    """A deletion and an insert leave the count even: the held matrix reloads, not appends."""
    first, second = tell(alice, "My dog Rex loves the beach", UNRELATED[0])
    model = embeddings.model_name()
    assert vectors.snapshot(alice.pk, model).size == 2
    second.delete()
    tell(alice, UNRELATED[1])
    held = vectors.snapshot(alice.pk, model)
    assert held.size == 2
    assert held.row_of(("message", second.pk)) is None
    assert held.row_of(("message", first.pk)) is not None


def test_the_least_recently_searched_user_leaves_the_cache_first(alice, bob, settings):
    tell(alice, "My dog Rex loves the beach")
    tell(bob, "I started violin lessons in September")
    settings.MEMORYCHAT_VECTOR_CACHE_ROWS = 1
    model = embeddings.model_name()
    vectors.snapshot(alice.pk, model)
    vectors.snapshot(bob.pk, model)
    assert list(vectors._held) == [(bob.pk, model, 0)]  # scope 0: everywhere
