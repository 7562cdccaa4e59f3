"""Alice's data in two conversations (and Bob's, which nothing here may touch)."""

from __future__ import annotations

import pytest

from chat.services import conversation_create, message_create
from memory.extraction import Extraction
from memory.models import ActionItem, Decision, Fact
from memory.services import memories_from_turn, summary_create
from profiles.expertise import domains_set
from profiles.services import profile_observe_message, profile_update_preferences


@pytest.fixture
def alice_client(client, alice):
    client.force_login(alice)
    return client


@pytest.fixture
def bob_client(client, bob):
    client.force_login(bob)
    return client


def _say(conversation, text, role="user"):
    message = message_create(conversation=conversation, role=role, content=text)
    if role == "user":
        memories_from_turn(conversation=conversation, message=message)
    return message


@pytest.fixture
def data(alice, bob):
    """Alice: "Lyon trip" (where she told her daughter's name and her city) and "Work" (where
    she told her city again), a decision and an action item from the trip, summaries of both,
    a learned style and a typed preference. Bob: a fact of his own."""
    trip = conversation_create(user=alice, title="Lyon trip")
    work = conversation_create(user=alice, title="Work")
    told = _say(trip, "My daughter's name is Zenobia.")
    _say(trip, "Noted, Zenobia.", role="assistant")
    city_trip = _say(trip, "I live in Grenoble.")
    city_work = _say(work, "I live in Grenoble.")
    decision = Decision.objects.create(
        user=alice, conversation=trip, what="Take the night train to Lyon", dedupe_key="train"
    )
    decision.source_messages.add(told)
    action = ActionItem.objects.create(
        user=alice, conversation=trip, what="Book the quokka hotel", dedupe_key="hotel"
    )
    action.source_messages.add(city_trip)
    for conversation, text in ((trip, "Planning a Lyon trip by night train."), (work, "Work.")):
        summary_create(
            conversation=conversation,
            extraction=Extraction(summary=text, topics=["travel"]),
            covered_through=conversation.messages.order_by("-id").first().pk,
            message_count=conversation.messages.count(),
            source="auto",
        )
    for text in ("Dear Sir, please review the API.", "Kindly check the schema."):
        profile_observe_message(user=alice, text=text)
    profile_update_preferences(user=alice, preferences={"detail_level": "brief"})
    for _ in range(2):  # a level per subject, learned (cooking) and set (music)
        profile_observe_message(user=alice, text="I'm a chef: my beurre blanc breaks.")
    domains_set(user=alice, settings={"music": "beginner", "law": "hidden"})
    bobs = conversation_create(user=bob, title="Bob's")
    _say(bobs, "My daughter's name is Zenobia.")
    daughter = Fact.objects.get(user=alice, text__icontains="Zenobia")
    city = Fact.objects.get(user=alice, text__icontains="Grenoble")
    assert set(city.source_messages.all()) == {city_trip, city_work}
    return {
        "trip": trip,
        "work": work,
        "daughter": daughter,
        "city": city,
        "decision": decision,
        "action": action,
        "bob_fact": Fact.objects.get(user=bob),
    }
