"""profiles.services.profile_set_style: correcting the learned metrics, audited."""

import pytest
from django.core.exceptions import ValidationError

from profiles.models import UserProfile
from profiles.services import profile_set_style
from tests.profiles.samples import CASUAL

pytestmark = pytest.mark.django_db


def test_it_sets_the_metrics_and_keeps_their_counts(alice, observe):
    """The values change; the message counts behind them do not."""
    observe(alice, CASUAL, times=3)
    before = UserProfile.objects.get(user=alice)
    profile = profile_set_style(user=alice, values={"formality": 0.9, "emoji_use": 0.0})
    assert (profile.formality, profile.emoji_use) == (0.9, 0.0)
    assert profile.formality_count == before.formality_count
    assert profile.messages_observed == before.messages_observed


def test_the_history_names_the_actor_the_reason_and_the_metrics(alice, bob):
    """With an actor, the history record is theirs, with the reason and what changed."""
    profile = profile_set_style(
        user=alice, values={"verbosity": 0.7}, actor=bob, reason="corrected by support"
    )
    record = profile.history.latest("history_date")
    assert record.history_user == bob
    assert record.history_change_reason == "corrected by support: verbosity"
    assert {r.history_user for r in profile.history.all()} == {bob}  # the creation too


def test_it_refuses_a_value_out_of_range_and_saves_nothing(alice):
    """Each metric is between 0 and 1; nothing is created on a refusal."""
    with pytest.raises(ValidationError):
        profile_set_style(user=alice, values={"formality": 1.5})
    assert not UserProfile.objects.filter(user=alice).exists()


def test_it_refuses_a_name_that_is_not_a_metric(alice):
    """Only the learned metrics can be set here (preferences have their own service)."""
    with pytest.raises(ValueError, match="tone"):
        profile_set_style(user=alice, values={"tone": 0.5})


def test_no_change_writes_no_history(alice):
    """The same values again: nothing saved, no history record."""
    profile = profile_set_style(user=alice, values={"formality": 0.8})
    records = profile.history.count()
    profile_set_style(user=alice, values={"formality": 0.8})
    assert profile.history.count() == records
