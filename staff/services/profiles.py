"""Staff corrections of a user's learned communication style.

(The preferences are edited through ``profiles.services.profile_update_preferences``; the
profiles app has no service to set the learned metrics, so it lives here.)
"""

from __future__ import annotations

from collections.abc import Mapping

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from audit import acting_as, attribute
from profiles.models import UserProfile
from profiles.style import METRICS


def profile_style_set(*, user, values: Mapping[str, float], actor) -> UserProfile:
    """Set some learned metrics (each 0..1). The message counts behind them are kept."""
    unknown = set(values) - set(METRICS)
    if unknown:
        raise ValueError(f"not style metrics: {', '.join(sorted(unknown))}")
    bad = {name: "Between 0 and 1." for name, value in values.items() if not 0.0 <= value <= 1.0}
    if bad:
        raise ValidationError(bad)
    with transaction.atomic(), acting_as(actor):
        profile, _ = UserProfile.objects.select_for_update().get_or_create(user=user)
        changed = [name for name, value in values.items() if getattr(profile, name) != value]
        if not changed:
            return profile
        for name in changed:
            setattr(profile, name, values[name])
        profile.updated_at = profile.style_updated_at = timezone.now()
        attribute(
            profile, actor=actor, reason=f"learned style edited by staff: {', '.join(changed)}"
        )
        profile.save(update_fields=[*changed, "updated_at", "style_updated_at"])
    return profile
