"""Personal API keys: made, checked and revoked here, shown by the profile and staff pages.

A secret is ``mc-`` and 256 random bits (``secrets.token_urlsafe``); only its SHA-256 is
stored, so a leaked database opens nothing. A slow hash would add nothing against guessing
256 random bits and would cost every request; the lookup is by the hash's unique index.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.utils import timezone

from audit import attribute
from profiles.models import ApiKey

SECRET_PREFIX = "mc-"  # noqa: S105 (a marker every key starts with, not a secret)
SHOWN_CHARS = 8  # of the secret after its prefix, shown to tell keys apart
MAX_ACTIVE_KEYS = 20
# last_used_at is written at most this often per key: not one write per request.
LAST_USED_GRANULARITY = timedelta(minutes=1)


@dataclass(frozen=True)
class NewKey:
    key: ApiKey
    secret: str  # shown once; never stored


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def key_list(*, user) -> list[ApiKey]:
    return list(ApiKey.objects.filter(user=user))


def key_create(*, user, name: str) -> NewKey:
    name = " ".join(name.split())[:100]
    if not name:
        raise ValidationError("Give the key a name (where you will use it).")
    if ApiKey.objects.filter(user=user, revoked_at=None).count() >= MAX_ACTIVE_KEYS:
        raise ValidationError(f"You have {MAX_ACTIVE_KEYS} keys: revoke one first.")
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey(
        user=user,
        name=name,
        prefix=secret[: len(SECRET_PREFIX) + SHOWN_CHARS],
        secret_hash=_digest(secret),
    )
    attribute(key, actor=user, reason="API key created")
    key.save()
    return NewKey(key, secret)


def key_revoke(*, key: ApiKey, actor) -> ApiKey:
    """Revoke ``key`` (its owner, or staff: ``actor`` is named in its history)."""
    if key.revoked_at is None:
        key.revoked_at = timezone.now()
        who = "its owner" if actor.pk == key.user_id else "staff"
        attribute(key, actor=actor, reason=f"API key revoked by {who}")
        key.save(update_fields=["revoked_at"])
    return key


def key_lookup(secret: str) -> ApiKey | None:
    """The unrevoked key of an active user that ``secret`` is, with its user; None if none.
    One query on the hash's unique index, no write."""
    if not secret.startswith(SECRET_PREFIX) or len(secret) > 200:
        return None
    return (
        ApiKey.objects.select_related("user")
        .filter(secret_hash=_digest(secret), revoked_at=None, user__is_active=True)
        .first()
    )


def key_used_due(key: ApiKey) -> bool:
    """Whether ``key_mark_used`` would write (at most once per LAST_USED_GRANULARITY)."""
    return key.last_used_at is None or timezone.now() - key.last_used_at >= LAST_USED_GRANULARITY


def key_mark_used(key: ApiKey) -> None:
    if key_used_due(key):
        key.last_used_at = timezone.now()
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=key.last_used_at)


def key_user(secret: str):
    """The active user an unrevoked key belongs to, or None. Marks the key used."""
    key = key_lookup(secret)
    if key is None:
        return None
    key_mark_used(key)
    return key.user
