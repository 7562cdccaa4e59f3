"""Meaning weighs on the same footing as words (memory.search.ranking.relative_meaning): a
query's candidates span a narrow band of raw similarity, so each is read from the model's
floor (0) to the candidate nearest the query (1), as words' relevance is read from 0 to the
best candidate's."""

import pytest

from chat.services import NewMessage, conversation_create, message_create_many
from memory.search import embeddings, search, vectors
from memory.search.ranking import relative_meaning

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def local(settings):
    settings.MEMORYCHAT_EMBEDDINGS = "local"
    settings.OPENAI_EMBEDDING_MODEL = ""
    vectors.forget_all()
    yield
    vectors.forget_all()


def test_relative_meaning_reads_from_the_floor_to_the_nearest_candidate():
    assert relative_meaning(0.45, 0.26, 0.45) == 1.0
    assert relative_meaning(0.20, 0.26, 0.45) == 0.0
    assert relative_meaning(0.355, 0.26, 0.45) == pytest.approx(0.5)
    assert relative_meaning(0.30, 0.26, 0.20) == 0.0  # nothing near: meaning adds nothing


def test_the_turn_nearest_in_meaning_outranks_one_that_only_shares_a_name(alice):
    """Asked what pets Melanie has, her turn about the cat she adopted (no word of the
    question) ranks above her turn that holds only her name. The cat turn is the longer, so
    her name weighs less in it: words favour the other turn by more than raw cosines' narrow
    band could overturn (fused raw, the accountant came first by 0.07), and by less than
    meaning read from the floor to the nearest candidate does (the cat first by 0.08)."""
    said = []
    for text in (
        "Melanie: the meeting with the accountant moved to Tuesday afternoon",
        "The quarterly budget review is on Monday",
        "Our team ships the release candidate next sprint",
        "Melanie: We adopted another cat last month, she is called Bailey and she sleeps on "
        "the sofa all day",
    ):  # each in a conversation of its own: no hit shows another as its neighbour
        conversation = conversation_create(user=alice)
        said += message_create_many(conversation=conversation, messages=[NewMessage("user", text)])
    name_only, *_, cat = said
    embeddings.embed_pending()
    hits = search(user=alice, query="What pets does Melanie have?")
    ids = [h.id for h in hits if h.kind == "message"]
    assert ids.index(cat.pk) < ids.index(name_only.pk)
