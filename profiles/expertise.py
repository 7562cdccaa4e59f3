"""Proficiency per domain: learning it from messages, the user's own settings, and the turn's
instructions. The reading of a message is ``profiles.domains`` (pure); this module stores it.

Rules:

1. A level the user set (``explicit_level``) always wins; a hidden domain learns nothing and
   says nothing unless the user set a level for it.
2. Learning: only while memory is on, never from a temporary chat (the caller leaves those
   out), only from messages with evidence of level (a domain named in passing moves nothing).
3. The turn's block names the current message's main domains (``profiles.domains
   .main_domains``) with the user's level there; the message's own evidence counts at once
   ("I've never cooked, ..." gets a beginner's answer on the first message), but is stored
   only after the turn. A domain without a level yet (too little evidence) says nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from profiles.domains import (
    DOMAINS,
    DomainEvidence,
    analyse_domains,
    domain_label,
    estimate,
    level_for,
    main_domains,
)
from profiles.models import DomainLevel, DomainSnapshot, UserProfile
from web.compiled import CompiledRead, plain_insert

if TYPE_CHECKING:  # the auth models load with the apps
    from django.contrib.auth.models import User

# A snapshot each time a domain's level changes or its evidence passes a multiple of this;
# the newest SNAPSHOT_KEEP per domain are kept.
SNAPSHOT_EVERY = 3
SNAPSHOT_KEEP = 40
HIDDEN = "hidden"  # the settings form's value for "don't learn or use"

HEADER = (
    "The user's level in the subject of this message (for this subject it takes the place of "
    "the general technical level):"
)
LINES = {
    "beginner": (
        "{label}: the user is new to {noun}; explain its terms, use analogies and everyday "
        "examples, one step at a time."
    ),
    "intermediate": (
        "{label}: the user knows the basics of {noun}; use its usual terms and explain the "
        "less common ones."
    ),
    "expert": (
        "{label}: the user is an expert in {noun}; be precise, use its technical terms and "
        "skip the basics."
    ),
}


@dataclass(frozen=True, slots=True)
class ExpertiseBlock:
    """The turn's block: ``text`` ("" when nothing applies), one source per line, and the
    message's domains that said nothing, with why."""

    text: str = ""
    sources: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.text)


# A profile's rows (at most one per subject), read on a turn's path and after it: compiled once
# (web.compiled).
_LEVELS_OF = CompiledRead(lambda profile_id: DomainLevel.objects.filter(profile_id=profile_id), int)


def _readings(texts: Iterable[str]) -> list[DomainEvidence]:
    return [
        evidence
        for text in texts
        for evidence in analyse_domains(text).values()
        if evidence.reading is not None
    ]


# -- the turn's instructions ------------------------------------------------------------------


def expertise_for_turn(profile: UserProfile, text: str) -> ExpertiseBlock:
    """The block for a message: one compiled read, none when the message names no domain."""
    evidence = analyse_domains(text)
    domains = main_domains(evidence)
    if not domains:
        return ExpertiseBlock()
    rows = {}
    if profile.pk is not None:
        rows = {
            r.domain: r for r in DomainLevel.objects.filter(profile=profile, domain__in=domains)
        }
    lines, sources, skipped = [], [], []
    for slug in domains:
        row = rows.get(slug) or DomainLevel(domain=slug)
        found = evidence[slug]
        item: dict[str, object] = {"domain": slug, "label": domain_label(slug)}
        if row.explicit_level:
            level, origin = row.explicit_level, "set by the user"
        elif row.hidden:
            skipped.append({**item, "reason": "hidden from learning by the user"})
            continue
        elif not profile.memory_enabled:
            skipped.append({**item, "reason": "memory is off"})
            continue
        else:
            score, count = row.score, row.evidence
            if found.reading is not None:
                score = estimate(score, count, found.reading, found.weight)
                count += found.weight
            level = level_for(score, count, row.level)
            origin = "learned"
            item |= {"score": round(score, 3), "evidence": count}
            if found.reading is not None:
                item["this_message"] = found.reason
            if not level:
                skipped.append({**item, "reason": f"too little evidence ({count})"})
                continue
        line = LINES[level].format(label=domain_label(slug), noun=domain_label(slug).lower())
        lines.append(line)
        sources.append({**item, "level": level, "origin": origin, "line": line})
    if not lines:
        return ExpertiseBlock(skipped=skipped)
    text = "\n".join([HEADER, *(f"- {line}" for line in lines)])
    return ExpertiseBlock(text=text, sources=sources, skipped=skipped)


# -- learning -----------------------------------------------------------------------------------


class _Changed(Exception):
    """A row changed since it was read, or memory was turned off: take the lock instead."""


def domains_observe(*, user: User, texts: list[str], profile: UserProfile | None = None) -> int:
    """Learn the user's level per domain from their new messages, in order; return how many
    readings were stored. Nothing while memory is off or for a hidden domain.

    ``profile``: the user's profile as the after-turn batch read it. With it, the rows are
    read with one compiled statement and each is updated only if it still holds what was
    read and memory is still on (one transaction, no lock); a new domain, or a row changed
    meanwhile, takes the profile's row lock as the style's learning does, so concurrent
    turns queue."""
    found = _readings(texts)
    if not found:
        return 0
    if profile is not None and profile.pk is not None and profile.memory_enabled:
        rows = {row.domain: row for row in _LEVELS_OF.read(profile.pk)}
        if all(e.domain in rows for e in found):
            try:
                return _observe_unlocked(profile, rows, found)
            except _Changed:
                pass
    return _observe_locked(user, found)


def _learn(profile, rows: dict, found: list[DomainEvidence], now) -> tuple[dict, list, int]:
    """Fold the readings into ``rows`` (changed in place, new ones added); return the changed
    rows with what they held before (evidence, score), the snapshots due, and the count."""
    before: dict[str, tuple[int, float]] = {}
    snapshots, stored = [], 0
    for evidence in found:
        row = rows.setdefault(evidence.domain, DomainLevel(profile=profile, domain=evidence.domain))
        if row.hidden or evidence.reading is None:  # _readings keeps those with a reading
            continue
        before.setdefault(row.domain, (row.evidence, row.score))
        level, count = row.level, row.evidence
        row.score = estimate(row.score, row.evidence, evidence.reading, evidence.weight)
        row.evidence += evidence.weight
        row.level = level_for(row.score, row.evidence, row.level)
        row.updated_at = now
        stored += 1
        if row.level != level or row.evidence // SNAPSHOT_EVERY > count // SNAPSHOT_EVERY:
            snapshots.append(
                DomainSnapshot(
                    profile=profile, domain=row.domain, taken_at=now,
                    evidence=row.evidence, score=row.score, level=row.level,
                )
            )  # fmt: skip
    return before, snapshots, stored


# The conditional update of the unlocked path: the row as read, memory still on. The models'
# own tables, no input in the text.
_UPDATE = (
    "UPDATE {levels} SET score = %s, evidence = %s, level = %s, updated_at = %s "
    "WHERE id = %s AND evidence = %s AND score = %s AND NOT hidden AND EXISTS "
    "(SELECT 1 FROM {profiles} WHERE id = %s AND NOT (memory_mode = %s))"
)


def _observe_unlocked(profile: UserProfile, rows: dict, found: list[DomainEvidence]) -> int:
    now = timezone.now()
    before, snapshots, stored = _learn(profile, rows, found, now)
    ops = connection.ops
    sql = _UPDATE.format(
        levels=ops.quote_name(DomainLevel._meta.db_table),
        profiles=ops.quote_name(UserProfile._meta.db_table),
    )
    with transaction.atomic(), connection.cursor() as cursor:
        for slug, (evidence, score) in before.items():
            row = rows[slug]
            cursor.execute(
                sql,
                [
                    row.score, row.evidence, row.level, ops.adapt_datetimefield_value(now),
                    row.pk, evidence, score, profile.pk, UserProfile.MemoryMode.OFF,
                ],
            )  # fmt: skip
            if cursor.rowcount != 1:
                raise _Changed  # rolls back what this call wrote
        for snapshot in snapshots:
            plain_insert(snapshot)
        _prune_now_and_then(profile, snapshots)
    return stored


def _observe_locked(user: User, found: list[DomainEvidence]) -> int:
    with transaction.atomic():
        profile, _ = UserProfile.objects.select_for_update().get_or_create(user=user)
        if not profile.memory_enabled:
            return 0
        rows = {r.domain: r for r in DomainLevel.objects.filter(profile=profile)}
        before, snapshots, stored = _learn(profile, rows, found, timezone.now())
        for slug in before:
            row = rows[slug]
            if row.pk is None:
                row.save()
            else:
                row.save(update_fields=["score", "evidence", "level", "updated_at"])
        if snapshots:
            DomainSnapshot.objects.bulk_create(snapshots)
            _prune_now_and_then(profile, snapshots)
    return stored


def _prune_now_and_then(profile: UserProfile, snapshots: list[DomainSnapshot]) -> None:
    """Drop the oldest snapshots beyond SNAPSHOT_KEEP, checked every tenth snapshot of a
    domain (a query each): a domain holds about SNAPSHOT_KEEP + 10 at most meanwhile."""
    due = {s.domain for s in snapshots if (s.evidence // SNAPSHOT_EVERY) % 10 == 0}
    if due:
        _prune(profile, due)


def _prune(profile: UserProfile, domains: set[str]) -> None:
    for slug in domains:
        stale = list(
            DomainSnapshot.objects.filter(profile=profile, domain=slug)
            .order_by("-evidence", "-id")
            .values_list("pk", flat=True)[SNAPSHOT_KEEP:]
        )
        if stale:
            DomainSnapshot.objects.filter(pk__in=stale).delete()


# -- the user's own settings ------------------------------------------------------------------


def domains_set(*, user: User, settings: Mapping[str, str]) -> None:
    """Set per domain: "" (learn from my messages), a level (it wins), or ``HIDDEN`` (learn
    nothing, say nothing). Raises ValidationError naming the domain for an unknown domain or
    value; nothing is saved then."""
    known = {d.slug for d in DOMAINS}
    allowed = {"", HIDDEN, *DomainLevel.Level.values}
    errors = {
        slug: f"Not a domain: {slug!r}." if slug not in known else f"Not a choice: {value!r}."
        for slug, value in settings.items()
        if slug not in known or value not in allowed
    }
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        profile, _ = UserProfile.objects.select_for_update().get_or_create(user=user)
        rows = {r.domain: r for r in DomainLevel.objects.filter(profile=profile)}
        for slug, value in settings.items():
            row = rows.get(slug) or DomainLevel(profile=profile, domain=slug)
            explicit = value if value in DomainLevel.Level.values else ""
            hidden = value == HIDDEN
            if row.pk is not None and (row.explicit_level, row.hidden) == (explicit, hidden):
                continue
            if row.pk is None and not explicit and not hidden:
                continue  # nothing to remember for a domain left to learning
            row.explicit_level, row.hidden = explicit, hidden
            row.updated_at = timezone.now()
            row.save()


def domains_forget_learned(*, profile: UserProfile) -> None:
    """The learned levels and their history gone; what the user set stays."""
    DomainSnapshot.objects.filter(profile=profile).delete()
    DomainLevel.objects.filter(profile=profile, explicit_level="", hidden=False).delete()
    DomainLevel.objects.filter(profile=profile).update(score=0.5, evidence=0, level="")
