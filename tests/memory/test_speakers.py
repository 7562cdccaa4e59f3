"""A question that names a person is answered by what that person said (memory.search.speakers):
their turns come before the other side's turns that only address them by name."""

import pytest

from chat.services import NewMessage, conversation_create, message_create_many
from memory.search import search
from memory.search.speakers import named, prefix_speaker, query_words, speaker_of

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def lexical(settings):
    settings.MEMORYCHAT_EMBEDDINGS = "off"
    settings.OPENAI_EMBEDDING_MODEL = ""


def test_a_transcript_turn_names_its_speaker():
    """ "Name: text" (pasted or imported talk) names who said it; plain text names nobody."""
    assert prefix_speaker("Caroline: I went to the pride parade") == "caroline"
    assert prefix_speaker("Mary Ann: hello there") == "mary ann"
    assert prefix_speaker("I went to the parade: it was fun") == ""
    assert speaker_of("We adopted a cat", "user", "alice") == "alice"
    assert speaker_of("We adopted a cat", "assistant", "alice") == ""
    assert named("mary ann", query_words("What did Mary Ann say?"))
    assert not named("mary ann", query_words("What did Ann say?"))


def test_the_named_speakers_turn_comes_first(alice):
    """Both turns hold the question's words; the one Caroline said answers it."""
    conversation = conversation_create(user=alice)
    said, _addressed = message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user", "Caroline: the pottery class was lovely, I made a bowl"),
            NewMessage("assistant", "Melanie: Caroline, a pottery class sounds lovely!"),
        ],
    )
    hits = search(user=alice, query="What did Caroline make at the pottery class?", k=5)
    assert hits[0].id == said.pk


def test_the_users_own_turn_counts_as_said_by_them(alice):
    """A question naming the user (their first name) prefers what they said."""
    alice.first_name = "Alice"
    alice.save()
    conversation = conversation_create(user=alice)
    own, _reply = message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user", "We adopted a grey cat from the shelter"),
            NewMessage("assistant", "Alice, a grey cat adopted from the shelter: lovely!"),
        ],
    )
    other = conversation_create(user=alice)
    message_create_many(conversation=other, messages=[NewMessage("user", "Unrelated words here")])
    hits = search(user=alice, query="Which cat did Alice adopt from the shelter?", k=5)
    assert hits[0].id == own.pk
