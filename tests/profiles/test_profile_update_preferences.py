"""profile_update_preferences and profile_get_or_create: the write services' own checks."""

import pytest
from django.core.exceptions import ValidationError

from profiles.models import UserProfile
from profiles.services import profile_get_or_create, profile_update_preferences

pytestmark = pytest.mark.django_db


def test_it_creates_one_profile_per_user(alice):
    """profile_get_or_create returns the same row every time."""
    assert profile_get_or_create(user=alice).pk == profile_get_or_create(user=alice).pk
    assert UserProfile.objects.filter(user=alice).count() == 1


def test_it_rejects_fields_that_are_not_preferences(alice):
    """Learned metrics and the memory switch cannot be set as preferences."""
    with pytest.raises(ValueError, match="formality"):
        profile_update_preferences(user=alice, preferences={"formality": 1.0})


@pytest.mark.parametrize(
    ("preferences", "field"),
    [
        ({"language": "klingon"}, "language"),
        ({"timezone": "Mars/Olympus_Mons"}, "timezone"),
        ({"detail_level": "extreme"}, "detail_level"),
        ({"topics_of_interest": "not a list"}, "topics_of_interest"),
        ({"topics_of_interest": ["x" * 500]}, "topics_of_interest"),
        ({"custom_instructions": "x" * 5000}, "custom_instructions"),
    ],
)
def test_it_validates_before_saving(alice, preferences, field):
    """A bad value raises ValidationError naming the field, and nothing is saved."""
    with pytest.raises(ValidationError) as error:
        profile_update_preferences(user=alice, preferences=preferences)
    assert field in error.value.message_dict
    profile = UserProfile.objects.filter(user=alice).first()
    assert profile is None or getattr(profile, field) in ("", [])


def test_it_saves_only_the_given_preferences(alice):
    """Fields not passed keep their values."""
    profile_update_preferences(user=alice, preferences={"language": "fr", "tone": "casual"})
    profile_update_preferences(user=alice, preferences={"tone": "formal"})
    profile = UserProfile.objects.get(user=alice)
    assert (profile.language, profile.tone) == ("fr", "formal")
