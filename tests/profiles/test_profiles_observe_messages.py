"""profiles_observe_messages: the after-turn batch learns what one call per message would."""

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext

from profiles.models import StyleSnapshot, UserProfile
from profiles.selectors import profiles_get_many
from profiles.services import (
    SNAPSHOT_EVERY,
    profile_get_or_create,
    profile_observe_message,
    profile_set_memory,
    profiles_observe_messages,
)
from profiles.style import METRICS
from tests.profiles.samples import CASUAL, EXPERT, FORMAL

pytestmark = pytest.mark.django_db

TEXTS = [FORMAL, CASUAL, EXPERT, FORMAL, "ok", EXPERT]


def style_of(user) -> dict:
    profile = UserProfile.objects.get(user=user)
    fields = [*METRICS, *(f"{m}_count" for m in METRICS), "messages_observed"]
    return {name: getattr(profile, name) for name in fields}


def twin(name):
    return get_user_model().objects.create_user(name, password=f"{name}-password-1")


def test_it_learns_what_one_call_per_message_learns(alice, bob):
    """Messages of two users, interleaved in one batch: each profile as after calls in order."""
    carol, dave = twin("carol"), twin("dave")
    for user in (alice, bob, carol, dave):
        profile_observe_message(user=user, text=CASUAL)  # every profile exists
    for text in TEXTS:
        profile_observe_message(user=carol, text=text)
        profile_observe_message(user=dave, text=text[::-1])
    batch = [pair for text in TEXTS for pair in ((alice, text), (bob, text[::-1]))]
    profiles_observe_messages(observations=batch, profiles=profiles_get_many([alice, bob]))
    assert style_of(alice) == style_of(carol)
    assert style_of(bob) == style_of(dave)


def test_the_gaps_are_learned_as_one_call_per_message_would(alice, bob):
    """(user, text, gap) observations: the pace, with a message with no reply before it."""
    for user in (alice, bob):
        profile_observe_message(user=user, text=CASUAL)
    gaps = [4.0, None, 250.0, 30.0, 3600.0, 12.0]
    for text, gap in zip(TEXTS, gaps, strict=True):
        profile_observe_message(user=bob, text=text, gap_seconds=gap)
    batch = [(alice, text, gap) for text, gap in zip(TEXTS, gaps, strict=True)]
    profiles_observe_messages(observations=batch, profiles=profiles_get_many([alice]))
    assert style_of(alice) == style_of(bob)
    assert style_of(alice)["pace_count"] == 4  # no reply before one, the user away for another


def test_one_update_per_user_and_no_read(alice, bob):
    """With the profiles read for the batch, each user's style costs one UPDATE and nothing
    else (the level per domain, profiles.expertise, has its own statements)."""
    for user in (alice, bob):
        profile_observe_message(user=user, text=CASUAL)
    profiles = profiles_get_many([alice, bob])
    batch = [(alice, FORMAL), (bob, EXPERT), (alice, EXPERT)]
    with CaptureQueriesContext(connection) as queries:
        profiles_observe_messages(observations=batch, profiles=profiles)
    table = UserProfile._meta.db_table
    statements = [q["sql"] for q in queries.captured_queries]
    style = [sql for sql in statements if sql.startswith(f'UPDATE "{table}"')]
    assert len(style) == 2
    # Before them, nothing: the style is learned from the profiles read for the batch.
    assert statements[:2] == style


def test_a_profile_changed_since_it_was_read_loses_nothing(alice, bob):
    """Another process learned from a message after the batch read the profile: both count."""
    profile_observe_message(user=alice, text=CASUAL)
    profile_observe_message(user=bob, text=CASUAL)
    stale = profiles_get_many([alice])
    profile_observe_message(user=alice, text=EXPERT)  # meanwhile, elsewhere
    profiles_observe_messages(observations=[(alice, FORMAL)], profiles=stale)
    profile_observe_message(user=bob, text=EXPERT)
    profile_observe_message(user=bob, text=FORMAL)
    assert style_of(alice) == style_of(bob)


def test_memory_switched_off_since_the_read_learns_nothing(alice):
    """The switch turned off after the profiles were read: nothing is learned."""
    profile_observe_message(user=alice, text=CASUAL)
    stale = profiles_get_many([alice])
    before = style_of(alice)
    profile_set_memory(user=alice, enabled=False)
    profiles_observe_messages(observations=[(alice, FORMAL)], profiles=stale)
    assert style_of(alice) == before


def test_a_user_without_a_profile_gets_one(alice):
    """No profile yet (nothing to read): it is created, as profile_observe_message does."""
    profiles_observe_messages(observations=[(alice, FORMAL)], profiles={})
    assert style_of(alice)["messages_observed"] == 1


def test_snapshots_are_taken_at_every_multiple_within_a_batch(alice, bob):
    """A batch crossing SNAPSHOT_EVERY takes the snapshot one call per message would."""
    profile_get_or_create(user=alice)
    profile_get_or_create(user=bob)
    for _ in range(SNAPSHOT_EVERY - 2):
        profile_observe_message(user=alice, text=FORMAL)
        profile_observe_message(user=bob, text=FORMAL)
    for text in (EXPERT, CASUAL, FORMAL):
        profile_observe_message(user=bob, text=text)
    profiles_observe_messages(
        observations=[(alice, EXPERT), (alice, CASUAL), (alice, FORMAL)],
        profiles=profiles_get_many([alice]),
    )
    assert style_of(alice) == style_of(bob)

    def snapshots(user):
        return list(
            StyleSnapshot.objects.filter(profile__user=user).values_list(
                "messages_observed", *METRICS
            )
        )

    assert snapshots(alice) == snapshots(bob) != []
