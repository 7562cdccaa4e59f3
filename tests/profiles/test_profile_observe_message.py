"""profile_observe_message: running averages, counts, snapshots, the memory switch."""

import pytest

from profiles.models import StyleSnapshot, UserProfile
from profiles.services import (
    SNAPSHOT_EVERY,
    SNAPSHOT_KEEP,
    profile_observe_message,
    profile_set_memory,
)
from profiles.style import PRIORS, analyse
from tests.profiles.samples import CASUAL, EXPERT, FORMAL

pytestmark = pytest.mark.django_db


def profile_of(user):
    return UserProfile.objects.get(user=user)


def test_it_creates_the_profile_on_first_need(alice):
    """The first observed message creates Alice's profile."""
    assert not UserProfile.objects.filter(user=alice).exists()
    profile_observe_message(user=alice, text=FORMAL)
    assert profile_of(alice).messages_observed == 1


def test_it_returns_how_the_message_was_read(alice):
    """The return value is the analyser's reading of the text."""
    assert profile_observe_message(user=alice, text=CASUAL) == analyse(CASUAL)


def test_one_message_moves_a_metric_a_little(alice):
    """One very formal message moves formality by less than 0.1 from its prior."""
    profile_observe_message(user=alice, text=FORMAL)
    profile = profile_of(alice)
    assert PRIORS["formality"] < profile.formality < PRIORS["formality"] + 0.1
    assert profile.formality_count == 1


def test_a_hundred_messages_move_a_metric_a_lot(alice, observe):
    """A hundred formal messages bring formality close to their reading."""
    observe(alice, FORMAL, times=100)
    profile = profile_of(alice)
    target = analyse(FORMAL).formality
    assert profile.formality == pytest.approx(target, abs=0.05)
    assert profile.formality_count == 100
    assert profile.messages_observed == 100


def test_it_learns_each_metric_independently(alice, observe):
    """Casual messages lower formality and raise emoji use; expert ones raise technical level."""
    observe(alice, CASUAL, times=20)
    observe(alice, EXPERT, times=20)
    profile = profile_of(alice)
    assert profile.formality < 0.4
    assert profile.emoji_use > PRIORS["emoji_use"]
    assert profile.technical_level > 0.6


def test_it_counts_only_metrics_the_message_has_evidence_for(alice):
    """'thanks!' adds to formality's count but not to technical level's."""
    profile_observe_message(user=alice, text="thanks!")
    profile = profile_of(alice)
    assert profile.formality_count == 1
    assert profile.technical_level_count == 0
    assert profile.technical_level == PRIORS["technical_level"]


def test_it_ignores_an_empty_message(alice):
    """Whitespace is no evidence: no profile row, no count."""
    profile_observe_message(user=alice, text="  ")
    assert not UserProfile.objects.filter(user=alice).exists()


def test_it_learns_nothing_while_memory_is_off(alice):
    """With the memory switch off, observing a message changes nothing."""
    profile_set_memory(user=alice, enabled=False)
    profile_observe_message(user=alice, text=FORMAL)
    profile = profile_of(alice)
    assert profile.messages_observed == 0
    assert profile.formality == PRIORS["formality"]


def test_it_keeps_users_apart(alice, bob, observe):
    """Alice's messages never touch Bob's profile."""
    observe(alice, CASUAL, times=5)
    profile_observe_message(user=bob, text=FORMAL)
    assert profile_of(bob).messages_observed == 1
    assert profile_of(bob).formality > PRIORS["formality"]


def test_it_does_not_add_a_history_row_per_message(alice, observe):
    """Observations are not audited edits: the history holds only the creation."""
    observe(alice, CASUAL, times=12)
    assert profile_of(alice).history.count() == 1


def test_it_takes_a_snapshot_every_n_messages(alice, observe):
    """A snapshot is taken at every SNAPSHOT_EVERY-th message, holding the metrics then."""
    observe(alice, FORMAL, times=SNAPSHOT_EVERY * 2 + 3)
    snapshots = list(StyleSnapshot.objects.filter(profile__user=alice))
    assert [s.messages_observed for s in snapshots] == [SNAPSHOT_EVERY, SNAPSHOT_EVERY * 2]
    assert snapshots[0].formality < snapshots[1].formality < profile_of(alice).formality


def test_a_snapshot_leaves_metrics_without_evidence_empty(alice, observe):
    """A metric no message had evidence for is stored as null, not as its prior."""
    observe(alice, "thanks!", times=SNAPSHOT_EVERY)
    snapshot = StyleSnapshot.objects.get(profile__user=alice)
    assert snapshot.technical_level is None
    assert snapshot.formality is not None


def test_it_keeps_a_bounded_number_of_snapshots(alice, observe):
    """Past SNAPSHOT_KEEP snapshots the oldest are dropped."""
    observe(alice, CASUAL, times=SNAPSHOT_EVERY * (SNAPSHOT_KEEP + 3))
    counts = list(
        StyleSnapshot.objects.filter(profile__user=alice).values_list(
            "messages_observed", flat=True
        )
    )
    assert len(counts) == SNAPSHOT_KEEP
    assert counts[0] == SNAPSHOT_EVERY * 4
    assert counts[-1] == SNAPSHOT_EVERY * (SNAPSHOT_KEEP + 3)
