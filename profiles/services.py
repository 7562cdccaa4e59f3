"""Writes on user profiles. Every function here runs in one transaction.

Locking: a function that changes a profile holds SELECT FOR UPDATE on its row for the whole
transaction, so concurrent observations and edits for one user queue instead of overwriting each
other's counts. (On SQLite ``select_for_update`` is a no-op, but the project opens every
transaction with BEGIN IMMEDIATE, which serialises writers the same way.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from audit import acting_as, attribute
from profiles.choices import LANGUAGES, timezones
from profiles.expertise import domains_forget_learned, domains_observe
from profiles.instructions import InstructionsBlock, instructions_for
from profiles.models import TOPIC_MAX_CHARS, TOPICS_MAX, StyleSnapshot, UserProfile
from profiles.selectors import memory_enabled
from profiles.style import METRICS, PRIORS, StyleReading, analyse, blend
from web.compiled import plain_update
from web.fields import concrete_field

if TYPE_CHECKING:  # the auth models load with the apps
    from django.contrib.auth.models import User

__all__ = [
    "PREFERENCE_FIELDS",
    "SNAPSHOT_EVERY",
    "SNAPSHOT_KEEP",
    # The reads the memory engine calls, also importable from here.
    "InstructionsBlock",
    "instructions_for",
    "memory_enabled",
    "profile_clear_preferences",
    "profile_get_or_create",
    "profile_observe_message",
    "profile_reset_style",
    "profile_set_memory",
    "profile_set_memory_mode",
    "profile_set_style",
    "profile_update_preferences",
    "profiles_observe_messages",
    "validate_preferences",
]

# A snapshot of the learned style every SNAPSHOT_EVERY observed messages; the newest
# SNAPSHOT_KEEP are kept (600 messages of history for the chart).
SNAPSHOT_EVERY = 10
SNAPSHOT_KEEP = 60

# What a person may edit (the preferences form and profile_update_preferences).
PREFERENCE_FIELDS = (
    "language",
    "timezone",
    "response_format",
    "detail_level",
    "tone",
    "technical_depth",
    "emoji",
    "terminology",
    "topics_of_interest",
    "custom_instructions",
)


def _locked_profile(user: User) -> UserProfile:
    """The user's profile, created on first need; call inside ``transaction.atomic``."""
    profile, _ = UserProfile.objects.select_for_update().get_or_create(user=user)
    return profile


@transaction.atomic
def profile_get_or_create(*, user: User) -> UserProfile:
    """The user's profile, created with defaults the first time it is needed."""
    profile, _ = UserProfile.objects.get_or_create(user=user)
    return profile


def profile_observe_message(
    *, user: User, text: str, gap_seconds: float | None = None
) -> StyleReading:
    """Learn the user's style from one of their messages; return how the message was read.
    ``gap_seconds``: the time since the end of the assistant's previous reply in the same
    conversation, None for none (the pace's evidence: ``profiles.style``).

    Call once per stored user message (not for assistant replies, not twice for a resend).
    Each metric the message has evidence for moves by ``profiles.style.blend``; the counts
    grow by one; every ``SNAPSHOT_EVERY`` messages a snapshot is taken and the oldest beyond
    ``SNAPSHOT_KEEP`` are dropped. Nothing is learned while the user's memory switch is off.
    The update is a queryset ``update()`` under the row lock: no history row per message.
    In async code wrap it: ``await database_sync_to_async(profile_observe_message)(...)``.
    """
    reading = analyse(text, gap_seconds=gap_seconds)  # pure and fast: outside the transaction
    if reading.has_evidence:
        _observe_locked(user, [reading])
    domains_observe(user=user, texts=[text])  # the level per domain (profiles.expertise)
    return reading


def profiles_observe_messages(
    *,
    observations: list[tuple[User, str] | tuple[User, str, float | None]],
    profiles: Mapping[int, UserProfile],
) -> None:
    """``profile_observe_message`` for the user messages of several replies that ended
    together, the same result as one call per message in order: one update per user.
    ``observations``: (user, text) or (user, text, gap_seconds) each.
    ``profiles``: the users' profiles as read just before (user id -> profile); the update
    applies only if the row still holds what was read (and memory is still on), else the
    user's messages are learned under the row lock as ``profile_observe_message`` does."""
    readings: dict[int, list[StyleReading]] = {}
    users: dict[int, User] = {}
    texts: dict[int, list[str]] = {}
    for user, text, *gap in observations:
        texts.setdefault(user.pk, []).append(text)
        reading = analyse(text, gap_seconds=gap[0] if gap else None)
        if reading.has_evidence:
            readings.setdefault(user.pk, []).append(reading)
            users[user.pk] = user
    for user_id, found in readings.items():
        profile = profiles.get(user_id)
        if profile is None or profile.pk is None or not _observe_unlocked(profile, found):
            _observe_locked(users[user_id], found)
    for user, *_ in observations:
        if user.pk in texts:  # the level per domain (profiles.expertise), once per user
            domains_observe(user=user, texts=texts.pop(user.pk), profile=profiles.get(user.pk))


def _learned(profile: UserProfile, readings: list[StyleReading]) -> tuple[dict, list[dict]]:
    """The profile's style fields after ``readings``, in order, and the states at which a
    snapshot is due."""
    changes: dict[str, Any] = {}
    snapshots = []
    values = {name: profile.metric(name) for name in METRICS}
    observed = profile.messages_observed
    for reading in readings:
        for name in METRICS:
            value = getattr(reading, name)
            if value is None:
                continue
            current, count = values[name]
            values[name] = (blend(current, count, value), count + 1)
            changes[name], changes[f"{name}_count"] = values[name]
        observed += 1
        changes["messages_observed"] = observed
        if observed % SNAPSHOT_EVERY == 0:
            snapshots.append(dict(changes))
    changes["style_updated_at"] = timezone.now()
    return changes, snapshots


def _observe_unlocked(profile: UserProfile, readings: list[StyleReading]) -> bool:
    """One conditional update from the profile as read: False (nothing written) when the
    row changed since, memory is off, or a snapshot is due (that takes the lock)."""
    if not profile.memory_enabled:
        return False
    changes, snapshots = _learned(profile, readings)
    if snapshots:
        return False
    unchanged = {"messages_observed": profile.messages_observed}
    for name in changes:
        if name in METRICS or name.endswith("_count"):
            unchanged[name] = getattr(profile, name)
    # After every turn: a plain statement (web.compiled.plain_update), the same conditions.
    unchanged["pk"] = profile.pk
    updated = plain_update(
        UserProfile,
        changes,
        where=unchanged,
        where_not={"memory_mode": UserProfile.MemoryMode.OFF},
    )
    return updated == 1


def _observe_locked(user: User, readings: list[StyleReading]) -> None:
    with transaction.atomic():
        profile = _locked_profile(user)
        if not profile.memory_enabled:
            return
        changes, snapshots = _learned(profile, readings)
        UserProfile.objects.filter(pk=profile.pk).update(**changes)
        for state in snapshots:
            for name, value in state.items():
                setattr(profile, name, value)
            profile.style_updated_at = changes["style_updated_at"]
            _snapshot_take(profile=profile)


def _snapshot_take(*, profile: UserProfile) -> StyleSnapshot:
    """Record the profile's learned style now; keep the newest ``SNAPSHOT_KEEP``.

    Call while holding SELECT FOR UPDATE on the profile row.
    """
    values: dict[str, float | None] = {}
    for name in METRICS:
        value, count = profile.metric(name)
        values[name] = value if count else None
    snapshot = StyleSnapshot.objects.create(
        profile=profile,
        taken_at=profile.style_updated_at or timezone.now(),
        messages_observed=profile.messages_observed,
        **values,
    )
    stale = list(
        StyleSnapshot.objects.filter(profile=profile)
        .order_by("-messages_observed")
        .values_list("pk", flat=True)[SNAPSHOT_KEEP:]
    )
    if stale:
        StyleSnapshot.objects.filter(pk__in=stale).delete()
    return snapshot


@transaction.atomic
def profile_update_preferences(*, user: User, preferences: Mapping[str, Any]) -> UserProfile:
    """Set some of the user's preferences (keys from ``PREFERENCE_FIELDS``); validate, save.

    Raises ``ValueError`` for an unknown key and ``ValidationError`` for a bad value; nothing is
    saved then.
    """
    unknown = set(preferences) - set(PREFERENCE_FIELDS)
    if unknown:
        raise ValueError(f"not preferences: {', '.join(sorted(unknown))}")
    profile = _locked_profile(user)
    for name, value in preferences.items():
        if isinstance(value, str):
            value = value.replace("\x00", "")  # NUL cannot be stored (PostgreSQL) or shown
        setattr(profile, name, value)
    validate_preferences(profile)
    profile.updated_at = timezone.now()
    attribute(profile, reason="preferences edited")
    profile.save(update_fields=[*preferences, "updated_at"])
    return profile


def validate_preferences(profile: UserProfile) -> None:
    """Raise ``ValidationError`` (by field) unless every preference of ``profile`` is valid:
    the form's rules, for every path that sets them (the form, staff edits, imports)."""
    errors: dict[str, str] = {}
    if profile.language and profile.language not in dict(LANGUAGES):
        errors["language"] = f"Unknown language code {profile.language!r}."
    if profile.timezone and profile.timezone not in timezones():
        errors["timezone"] = f"Unknown time zone {profile.timezone!r}."
    topics = profile.topics_of_interest
    if not isinstance(topics, list) or not all(isinstance(topic, str) for topic in topics):
        errors["topics_of_interest"] = "Topics must be a list of strings."
    elif len(topics) > TOPICS_MAX or any(len(topic) > TOPIC_MAX_CHARS for topic in topics):
        errors["topics_of_interest"] = (
            f"At most {TOPICS_MAX} topics of at most {TOPIC_MAX_CHARS} characters each."
        )
    try:
        profile.full_clean(exclude=["user"], validate_unique=False, validate_constraints=False)
    except ValidationError as error:
        for field, messages in error.message_dict.items():
            errors.setdefault(field, " ".join(messages))
    if errors:
        raise ValidationError(errors)


def profile_set_memory(*, user: User, enabled: bool) -> UserProfile:
    """Turn the user's memory on (automatic) or off (long-term memory and style learning)."""
    mode = UserProfile.MemoryMode.AUTOMATIC if enabled else UserProfile.MemoryMode.OFF
    return profile_set_memory_mode(user=user, mode=mode)


@transaction.atomic
def profile_set_memory_mode(*, user: User, mode: str) -> UserProfile:
    """Set the memory mode: automatic, ask first (new memories wait as suggestions) or off.
    Raises ValidationError for another value."""
    if mode not in UserProfile.MemoryMode.values:
        raise ValidationError({"memory_mode": f"Not a memory mode: {mode!r}."})
    profile = _locked_profile(user)
    if profile.memory_mode != mode:
        profile.memory_mode = mode
        profile.updated_at = timezone.now()
        label = UserProfile.MemoryMode(mode).label.lower()
        attribute(profile, reason=f"memory mode: {label}")
        profile.save(update_fields=["memory_mode", "updated_at"])
    return profile


@transaction.atomic
def profile_reset_style(*, user: User) -> UserProfile:
    """Forget the learned style: every metric back to its prior, counts and snapshots gone;
    the levels learned per domain too (the levels the user set stay)."""
    profile = _locked_profile(user)
    fields = ["messages_observed", "style_updated_at", "updated_at"]
    for name in METRICS:
        setattr(profile, name, PRIORS[name])
        setattr(profile, f"{name}_count", 0)
        fields += [name, f"{name}_count"]
    profile.messages_observed = 0
    profile.style_updated_at = profile.updated_at = timezone.now()
    attribute(profile, reason="learned style reset")
    profile.save(update_fields=fields)
    StyleSnapshot.objects.filter(profile=profile).delete()
    domains_forget_learned(profile=profile)
    return profile


@transaction.atomic
def profile_clear_preferences(*, user: User) -> UserProfile:
    """Every typed preference back to "no preference" (the memory switch is not one)."""
    profile = _locked_profile(user)
    for name in PREFERENCE_FIELDS:
        default = concrete_field(UserProfile, name).get_default()
        setattr(profile, name, default)
    profile.updated_at = timezone.now()
    attribute(profile, reason="preferences cleared")
    profile.save(update_fields=[*PREFERENCE_FIELDS, "updated_at"])
    return profile


def profile_set_style(
    *,
    user: User,
    values: Mapping[str, float],
    actor: User | None = None,
    reason: str = "learned style edited",
) -> UserProfile:
    """Correct some learned metrics (each 0..1); the message counts behind them are kept.

    Raises ``ValueError`` for an unknown metric and ``ValidationError`` for a value out of range;
    nothing is saved then. Nothing changed: nothing saved, no history. With ``actor`` the
    history record names them (else the request's user), with ``reason`` and the metrics.
    """
    unknown = set(values) - set(METRICS)
    if unknown:
        raise ValueError(f"not style metrics: {', '.join(sorted(unknown))}")
    bad = {name: "Between 0 and 1." for name, value in values.items() if not 0.0 <= value <= 1.0}
    if bad:
        raise ValidationError(bad)
    # acting_as: a profile created here is recorded as created by the actor too.
    with transaction.atomic(), acting_as(actor):
        profile = _locked_profile(user)
        changed = [name for name, value in values.items() if getattr(profile, name) != value]
        if not changed:
            return profile
        for name in changed:
            setattr(profile, name, values[name])
        profile.updated_at = profile.style_updated_at = timezone.now()
        attribute(profile, actor=actor, reason=f"{reason}: {', '.join(changed)}")
        profile.save(update_fields=[*changed, "updated_at", "style_updated_at"])
    return profile
