"""Nothing one user sees depends on another user's data: two users whose memories are the
same but for the words see the same scores, however much a third user stores."""

from datetime import timedelta

import pytest
from django.utils import timezone

from chat.services import NewMessage, conversation_create, message_create_many
from memory.retrieval import search

pytestmark = pytest.mark.django_db

ALICE_WORDS = ["quokka", "marmot", "ocelot", "tapir", "jackal", "lemur"]
BOB_WORDS = ["violin", "cello", "oboe", "tuba", "flute", "harp"]  # disjoint from Alice's
NOISE = 60  # messages of a third user, in Alice's words
SHAPES = [
    "The {0} met the {1} near the river.",
    "A {0} and a {0} again, with one {2}.",
    "Nothing about the {3} or the {4} today.",
    "The {5} slept while the {1} watched the {0}.",
]


def _store(user, words, when):
    conversation = conversation_create(user=user, title="Notes")
    message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user", shape.format(*words), created_at=when - timedelta(minutes=n))
            for n, shape in enumerate(SHAPES)
        ],
    )


def _scores(user, query):
    return [(round(hit.score, 6), hit.why) for hit in search(user=user, query=query, k=20)]


def test_two_users_with_disjoint_words_see_identical_scores(alice, bob, django_user_model):
    """Alice and Bob hold the same messages in different words; Carol stores many messages in
    Alice's words. Each sees the scores the other does: term statistics are per user."""
    when = timezone.now() - timedelta(days=2)
    _store(alice, ALICE_WORDS, when)
    _store(bob, BOB_WORDS, when)
    carol = django_user_model.objects.create_user("carol", password="carol-password-1")
    noise = conversation_create(user=carol, title="Noise")
    message_create_many(
        conversation=noise,
        messages=[
            NewMessage("user", f"{ALICE_WORDS[0]} {ALICE_WORDS[1]} {i}") for i in range(NOISE)
        ],
    )
    alice_scores = _scores(alice, f"{ALICE_WORDS[0]} {ALICE_WORDS[1]}")
    bob_scores = _scores(bob, f"{BOB_WORDS[0]} {BOB_WORDS[1]}")
    assert alice_scores and alice_scores == bob_scores
