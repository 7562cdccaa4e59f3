"""Local embeddings (all-MiniLM-L6-v2 int8 ONNX, the real model): computed off the reply's
path, stored, used by search."""

import math

import pytest
from django.core.management import call_command

from chat.services import NewMessage, message_create_many
from memory.models import Embedding
from memory.search import embeddings, search

pytestmark = pytest.mark.django_db


@pytest.fixture
def local(settings):
    settings.MEMORYCHAT_EMBEDDINGS = "local"
    settings.OPENAI_EMBEDDING_MODEL = ""


def test_the_backfill_command_embeds_what_has_no_vector(alice, conversation, local, capsys):
    """Every indexed message gets one vector of the local model; a second run adds none."""
    message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user", "My dog Rex loves the beach"),
            NewMessage("user", "The quarterly budget review is on Monday"),
        ],
    )
    call_command("embed_backfill")
    assert "2/2" in capsys.readouterr().out
    assert set(Embedding.objects.values_list("model", flat=True)) == {embeddings.LOCAL_MODEL}
    call_command("embed_backfill")
    assert Embedding.objects.count() == 2


def test_similarity_finds_the_meaning_without_the_words(alice, conversation, local):
    """'puppy at the seaside' is nearer the dog on the beach than the budget review."""
    dog, budget = message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user", "My dog Rex loves the beach"),
            NewMessage("user", "The quarterly budget review is on Monday"),
        ],
    )
    embeddings.embed_pending()
    scores = embeddings.similarities(
        user=alice, query="puppy at the seaside", keys=[("message", dog.pk), ("message", budget.pk)]
    )
    assert scores[("message", dog.pk)] > scores[("message", budget.pk)]
    assert search(user=alice, query="where does my dog like to go?")[0].id == dog.pk


def test_off_means_no_vectors(alice, conversation, settings):
    """MEMORYCHAT_EMBEDDINGS=off (the default) and no endpoint: nothing is embedded."""
    settings.MEMORYCHAT_EMBEDDINGS = "off"
    settings.OPENAI_EMBEDDING_MODEL = ""
    message_create_many(conversation=conversation, messages=[NewMessage("user", "hello there")])
    assert embeddings.embed_pending() == 0 and not Embedding.objects.exists()


def test_a_vector_is_unit_length_and_the_same_in_any_batch(local):
    """384 floats of length 1; a text's vector does not depend on what it is embedded with."""
    (alone,) = embeddings.embed_texts(["The quarterly budget review is on Monday"])
    batch = embeddings.embed_texts(["hi", "The quarterly budget review is on Monday"])
    assert len(alone) == embeddings.DIMENSIONS
    assert math.isclose(sum(x * x for x in alone), 1.0, rel_tol=1e-4)
    assert list(batch[1]) == pytest.approx(list(alone), abs=1e-6)


def test_a_query_asked_again_is_not_embedded_again(local):
    """A retry or a regenerate asks the same text: its vector comes from the cache."""
    embeddings._local_query_vector.cache_clear()
    first = embeddings.embed_texts(["where does my dog like to go?"], query=True, user_id=1)
    again = embeddings.embed_texts(["where does my dog like to go?"], query=True, user_id=1)
    assert first == again
    assert embeddings._local_query_vector.cache_info().hits == 1


def test_the_query_vector_cache_is_not_shared_between_users(local):
    """Another user asking the exact same sentence is a miss: one user cannot time whether
    another just typed it (issue 40, low 3)."""
    embeddings._local_query_vector.cache_clear()
    embeddings.embed_texts(["is my divorce final yet?"], query=True, user_id=1)
    embeddings.embed_texts(["is my divorce final yet?"], query=True, user_id=2)
    assert embeddings._local_query_vector.cache_info().hits == 0


def test_a_turn_starts_the_query_embedding_early_for_a_user_with_vectors(
    alice, conversation, local
):
    """Once a search has compared vectors, the next turn's query is embedded beside the
    set-up, and the search uses that vector (the same one it would have computed)."""
    from chat import turn
    from chat.services import conversation_create

    message_create_many(
        conversation=conversation, messages=[NewMessage("user", "My dog Rex loves the beach")]
    )
    embeddings.embed_pending()
    embeddings._local_query_vector.cache_clear()
    assert search(user=alice, query="my dog on the beach")  # vectors compared: noted
    assert alice.pk in embeddings._users_with_vectors

    query = "does my dog like the beach?"
    started = []
    real_submit = embeddings._early_pool.submit

    def submit(fn, *args):
        started.append(args)
        return real_submit(fn, *args)

    embeddings._early_pool.submit = submit
    try:
        prepared = turn.prepare_turn(
            conversation=conversation_create(user=alice), text=query, client_id="q"
        )
    finally:
        del embeddings._early_pool.submit
    assert started == [(alice.pk, query)]
    assert (alice.pk, query) not in embeddings._early, "the search took the early vector"
    assert prepared.built.report["memories"]
    assert embeddings._local_query_vector.cache_info().misses == 2  # each query embedded once


def test_no_early_embedding_for_a_user_without_vectors(alice, conversation, local):
    """A user with nothing embedded costs no query embedding at all."""
    embeddings._users_with_vectors.discard(alice.pk)
    embeddings.query_vector_soon(user_id=alice.pk, query="anything at all")
    assert (alice.pk, "anything at all") not in embeddings._early


def test_a_question_is_near_its_answer_and_far_from_unrelated_text(local):
    """The vector is the text's own word pieces: with the tokenizer file's padding averaged
    in, every short text looked alike (unrelated pairs scored 0.8, answers 0.9)."""
    embed = embeddings.local_embedder()
    question, answer, unrelated = embed(
        [
            "What is my daughter's name?",
            "My daughter's name is Ada and she is four.",
            "The weather in Lyon was rainy all week.",
        ],
        passage=False,
    )
    assert question @ answer > 0.5
    assert question @ unrelated < 0.2


def test_the_padded_models_vectors_are_dropped(alice, conversation):
    """Vectors of the first, padded version go (the backfill computes them again); others stay."""
    from importlib import import_module

    from django.apps import apps

    (message,) = message_create_many(
        conversation=conversation, messages=[NewMessage("user", "Rex loves the beach")]
    )
    migration = import_module("memory.migrations.0011_embeddings_unpadded")
    for model in (migration.PADDED_MODEL, embeddings.LOCAL_MODEL):
        Embedding.objects.create(
            user=alice, kind="message", object_id=message.pk, model=model, vector=b"\0" * 1536
        )
    migration.drop_padded_vectors(apps, None)
    assert list(Embedding.objects.values_list("model", flat=True)) == [embeddings.LOCAL_MODEL]


@pytest.mark.django_db(transaction=True)
def test_after_a_turn_the_newest_rows_first_and_a_backlog_below_every_job(
    alice, conversation, local, monkeypatch
):
    """An imported history (old dates) waiting for vectors does not hold up what a turn just
    stored: the job after it embeds only the recent rows, and leaves the old ones to a chain
    of small jobs below the chat's and the import's, until nothing is left."""
    from datetime import UTC, datetime, timedelta

    from django.core.cache import cache
    from django_tasks_db.models import DBTaskResult

    from memory import tasks
    from tests.support.tasks import run_pending_tasks

    monkeypatch.setattr(embeddings, "JOB_ROWS", 3)
    monkeypatch.setattr(embeddings, "BACKLOG_ROWS", 4)
    cache.delete(tasks.BACKLOG_CHAIN)
    long_ago = datetime(2023, 5, 1, tzinfo=UTC)
    message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user", f"Imported note {n}", long_ago + timedelta(hours=n))
            for n in range(10)
        ],
    )
    (today,) = message_create_many(
        conversation=conversation, messages=[NewMessage("user", "My dog Rex loves the beach")]
    )

    assert tasks.embed_pending.call() == 1  # today's row only: the import's wait
    embedded = set(Embedding.objects.values_list("object_id", flat=True))
    assert embedded == {today.pk}
    (backlog,) = DBTaskResult.objects.filter(task_path__endswith="embed_backlog")
    assert backlog.priority == tasks.BACKLOG_PRIORITY < -10  # below the import's build

    run_pending_tasks()
    assert Embedding.objects.count() == 11
    assert DBTaskResult.objects.filter(task_path__endswith="embed_backlog").count() == 3
    assert cache.get(tasks.BACKLOG_CHAIN) is None  # the chain ended with the rows
