"""Personal API keys: made, checked and revoked here, shown by the profile and staff pages.

A secret is ``mc-`` and 256 random bits (``secrets.token_urlsafe``); only its SHA-256 is
stored, so a leaked database opens nothing. A slow hash would add nothing against guessing
256 random bits and would cost every request; the lookup is by the hash's unique index.
"""

from __future__ import annotations

import hashlib
import secrets
import time
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.utils import timezone

from audit import attribute
from profiles.models import ApiKey
from web.compiled import CompiledRead

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


def _owner_of(digest):
    return get_user_model().objects.filter(
        api_keys__secret_hash=digest, api_keys__revoked_at=None, is_active=True
    )[:1]


# Compiled once: Django's compiling of this read cost several times the statement.
_OWNER = CompiledRead(_owner_of, str)
_claimed: dict[str, float] = {}  # a key's hash: when this process last had its use written
CLAIMS_KEPT = 10_000  # more keys than that seen within a minute start the record afresh


def key_owner(secret: str):
    """The active user whose unrevoked key ``secret`` is; None if none. One read on the
    hash's unique index, on every request (a key revoked stops at once); no write."""
    if not secret.startswith(SECRET_PREFIX) or len(secret) > 200:
        return None
    return _OWNER.first(_digest(secret))


def key_use_claim(secret: str) -> bool:
    """True at most once per LAST_USED_GRANULARITY for a key in this process: the caller then
    writes its use (``key_mark_used``); otherwise it saves the database that trip."""
    digest, now = _digest(secret), time.monotonic()
    last = _claimed.get(digest)
    if last is not None and now - last < LAST_USED_GRANULARITY.total_seconds():
        return False
    if len(_claimed) >= CLAIMS_KEPT:
        _claimed.clear()
    _claimed[digest] = now
    return True


def key_mark_used(secret: str) -> None:
    """The key's last use is now, unless written within LAST_USED_GRANULARITY (by any
    process: the update's own condition)."""
    now = timezone.now()
    recent = Q(last_used_at__gt=now - LAST_USED_GRANULARITY)
    ApiKey.objects.filter(secret_hash=_digest(secret)).exclude(recent).update(last_used_at=now)


def key_user(secret: str):
    """The active user an unrevoked key belongs to, or None. Marks the key used."""
    user = key_owner(secret)
    if user is not None and key_use_claim(secret):
        key_mark_used(secret)
    return user
