"""Reads on user profiles. Reads never create rows: a user without a profile gets defaults."""

from __future__ import annotations

from typing import TYPE_CHECKING

from profiles.models import DomainLevel, DomainSnapshot, StyleSnapshot, UserProfile
from web.compiled import CompiledRead

if TYPE_CHECKING:  # the auth models load with the apps
    from django.contrib.auth.models import User

# Read on every chat turn: compiled once (web.compiled).
_PROFILE = CompiledRead(lambda user_id: UserProfile.objects.filter(user_id=user_id)[:1], int)


def profile_get(*, user: User) -> UserProfile:
    """The user's profile, or an unsaved one with the defaults if they have none yet."""
    found = _PROFILE.first(user.pk) if user.pk is not None else None
    return found or UserProfile(user=user)


def memory_enabled(user: User, *, profile: UserProfile | None = None) -> bool:
    """The user's memory switch: may long-term memory be read and written for them?

    On by default; off for an anonymous user. ``profile``: the user's profile when the caller
    has already read it (no query).
    """
    if user is None or not getattr(user, "is_authenticated", False):
        return False
    return memory_mode(user, profile=profile) != UserProfile.MemoryMode.OFF


def memory_mode(user: User, *, profile: UserProfile | None = None) -> str:
    """The user's memory mode (``UserProfile.MemoryMode``): automatic by default, off for an
    anonymous user."""
    if user is None or not getattr(user, "is_authenticated", False):
        return UserProfile.MemoryMode.OFF
    if profile is not None:
        return profile.memory_mode
    mode = UserProfile.objects.filter(user=user).values_list("memory_mode", flat=True)
    return next(iter(mode), UserProfile.MemoryMode.AUTOMATIC)


_PROFILES = CompiledRead(lambda user_ids: UserProfile.objects.filter(user_id__in=user_ids), list)


def profiles_get_many(users) -> dict[int, UserProfile]:
    """The profiles of several users in one query: user id -> profile (only those that exist).
    Read after every batch of turns: compiled once per number of users (web.compiled)."""
    ids = sorted({u.pk for u in users if u is not None and getattr(u, "is_authenticated", False)})
    return {p.user_id: p for p in _PROFILES.read(ids)} if ids else {}


def memory_enabled_many(
    users, *, profiles: dict[int, UserProfile] | None = None
) -> dict[int, bool]:
    """``memory_enabled`` for several users in one query (none with ``profiles``, their
    profiles as ``profiles_get_many`` read them): user id -> the switch."""
    users = [u for u in users if u is not None and getattr(u, "is_authenticated", False)]
    if profiles is not None:
        found = {user_id: p.memory_enabled for user_id, p in profiles.items()}
    else:
        off = UserProfile.MemoryMode.OFF
        modes = UserProfile.objects.filter(user__in=users).values_list("user_id", "memory_mode")
        found = {user_id: mode != off for user_id, mode in modes}
    return {user.pk: found.get(user.pk, True) for user in users}


def style_snapshot_list(*, profile: UserProfile) -> list[StyleSnapshot]:
    """The profile's snapshots, oldest first."""
    if profile.pk is None:
        return []
    return list(StyleSnapshot.objects.filter(profile=profile).order_by("messages_observed"))


def domain_level_list(*, profile: UserProfile) -> list[DomainLevel]:
    """The profile's rows per domain (only the domains with something learned or set)."""
    if profile.pk is None:
        return []
    return list(DomainLevel.objects.filter(profile=profile).order_by("domain"))


def domain_snapshot_list(*, profile: UserProfile) -> list[DomainSnapshot]:
    """The profile's learning-progress snapshots, by domain, oldest first."""
    if profile.pk is None:
        return []
    return list(DomainSnapshot.objects.filter(profile=profile).order_by("domain", "evidence", "id"))
