"""A message next to one near the query by meaning shares its likeness
(memory.search.ranking._smoothed): between two people the answer is often the turn beside the
one that matches, in words of its own. Real local model, either database."""

import pytest

from chat.services import NewMessage, conversation_create, message_create_many
from memory.search import embeddings, search, vectors

pytestmark = pytest.mark.django_db

QUESTION = "Which animal did they bring home from the rescue shelter?"


@pytest.fixture(autouse=True)
def local(settings):
    settings.MEMORYCHAT_EMBEDDINGS = "local"
    settings.OPENAI_EMBEDDING_MODEL = ""
    vectors.forget_all()
    yield
    vectors.forget_all()


def talk(user, *turns):
    """One conversation of two people taking turns (the first speaks as the user)."""
    conversation = conversation_create(user=user)
    stored = message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(turns)
        ],
    )
    embeddings.embed_pending()
    return stored


def shown(hits) -> set[int]:
    return {m for h in hits if h.kind == "message" for m in h.message_ids}


def test_the_turn_before_a_match_by_meaning_is_found(alice):
    """Melanie names the kitten in the turn before Caroline's words about the shelter: that
    turn shares no word with the question and little meaning, yet it is found, as the turn
    beside the nearest by meaning."""
    _, named, match, _ = talk(
        alice,
        "Caroline: How was your weekend?",
        "Melanie: Oliver sleeps on the piano all day now, the kids adore him.",
        "Caroline: Adopting a little kitten from the animal shelter was so kind of you!",
        "Melanie: Thanks, see you at the gallery on Friday.",
    )
    hits = search(user=alice, query=QUESTION)
    assert match.pk in shown(hits)
    assert named.pk in shown(hits)


def test_a_turn_beside_nothing_near_is_not_lent_anything(alice):
    """The same words about Oliver, beside turns unrelated to the question, are not found."""
    _, named, _, _ = talk(
        alice,
        "Caroline: How was your weekend?",
        "Melanie: Oliver sleeps on the piano all day now, the kids adore him.",
        "Caroline: The quarterly budget review moved to Monday.",
        "Melanie: Thanks, see you at the gallery on Friday.",
    )
    talk(alice, "Caroline: Adopting a little kitten from the animal shelter was so kind of you!")
    assert named.pk not in shown(search(user=alice, query=QUESTION))


def test_the_answer_after_a_matching_question_is_shown_with_it(alice):
    """Tim asks which team John signed with; John's answer names the team in words of its
    own. The answer is shown with the question that matched, although many of John's turns
    match the query better than it does."""
    for n in range(12):  # each its own hit: more of them than the search returns
        talk(alice, f"John: Practice with the team went well today, day {n}.")
    _, question, answer, _ = talk(
        alice,
        "John: I just signed with a new team, so excited for the season!",
        "Tim: Woohoo! Congrats on the new team. Which team did you sign with?",
        "John: The Minnesota Wolves! I can't wait to play with them!",
        "Tim: Good luck, talk soon.",
    )
    hits = search(user=alice, query="Which team did John sign with?")
    assert question.pk in shown(hits)
    assert answer.pk in shown(hits)
