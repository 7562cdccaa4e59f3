"""The learned style as the profile page shows it: values, use in the prompt, history."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils import timezone

from profiles.charts import SPARK_HEIGHT, SPARK_PAD, sparkline
from profiles.domains import BEGINNER_MAX, DOMAINS, EXPERT_MIN, PRIOR
from profiles.expertise import HIDDEN
from profiles.expertise import SNAPSHOT_KEEP as DOMAIN_SNAPSHOT_KEEP
from profiles.instructions import METRIC_LABELS, InstructionsBlock, build_instructions
from profiles.models import DomainLevel, UserProfile
from profiles.selectors import domain_level_list, domain_snapshot_list, style_snapshot_list
from profiles.services import SNAPSHOT_EVERY
from profiles.style import METRICS, PRIORS


@dataclass(frozen=True, slots=True)
class MetricRow:
    """One learned metric as the profile page shows it."""

    name: str
    label: str
    value: float
    messages: int
    used: bool
    note: str
    chart: str  # SVG polyline points, "" when there are fewer than two points
    chart_from: int = 0  # the message count where the chart starts
    # The chart's x axis: when its first and last points were learned (None: not known).
    date_from: datetime | None = None
    date_to: datetime | None = None

    @property
    def percent(self) -> int:
        return round(self.value * 100)


def style_overview(
    *, profile: UserProfile, block: InstructionsBlock | None = None
) -> list[MetricRow]:
    """The learned metrics, whether the instructions use them, and their history.

    The history starts at the prior (0 messages) unless older snapshots were dropped, goes
    through every kept snapshot and ends at the current value.
    """
    block = block or build_instructions(profile)
    used = {s["name"]: s["line"] for s in block.sources if s["kind"] == "metric"}
    unused = {item["name"]: item["reason"] for item in block.skipped}
    snapshots = style_snapshot_list(profile=profile)
    from_start = not snapshots or snapshots[0].messages_observed <= SNAPSHOT_EVERY
    joined = profile.user.date_joined
    rows = []
    for name in METRICS:
        value, count = profile.metric(name)
        points = [(0, PRIORS[name])] if from_start and count else []
        taken = [s for s in snapshots if getattr(s, name) is not None]
        points += [(snapshot.messages_observed, getattr(snapshot, name)) for snapshot in taken]
        date_to = taken[-1].taken_at if taken else None
        if count and (not points or points[-1][0] < profile.messages_observed):
            points.append((profile.messages_observed, value))
            date_to = timezone.now()
        rows.append(
            MetricRow(
                name=name,
                label=METRIC_LABELS[name],
                value=value,
                messages=count,
                used=name in used,
                note=f"Used: {used[name]}" if name in used else f"Not used: {unused[name]}.",
                chart=sparkline(points),
                chart_from=points[0][0] if points else 0,
                # The prior at 0 messages is where learning began: the account's start.
                date_from=joined if points and points[0][0] == 0 else first_taken(taken),
                date_to=date_to,
            )
        )
    return rows


def first_taken(snapshots: list) -> datetime | None:
    return snapshots[0].taken_at if snapshots else None


@dataclass(frozen=True, slots=True)
class DomainRow:
    """One domain as the profile and staff pages show it."""

    slug: str
    label: str
    level: str  # the level the prompt uses, "" for none
    origin: str  # "set by you", "learned", "hidden", "" (nothing learned yet)
    learned: str  # the learned level, "" before enough evidence
    score: float | None  # None: no evidence yet
    evidence: int
    setting: str  # the settings form's value: "", a level, or "hidden"
    chart: str
    chart_from: int = 0

    @property
    def percent(self) -> int:
        return round((self.score or 0) * 100)


# The chart's level boundaries, as y in the 36-pixel sparkline (value 1 is at the top).
DOMAIN_GUIDES = {
    name: f"{SPARK_PAD + (1 - value) * (SPARK_HEIGHT - 2 * SPARK_PAD):.1f}"
    for name, value in (("beginner", BEGINNER_MAX), ("expert", EXPERT_MIN))
}


def domain_overview(*, profile: UserProfile) -> list[DomainRow]:
    """Every domain (but "other"): its level, where it comes from, and its learning progress
    (the score over the evidence, from the prior when the history is whole). Two queries."""
    rows = {row.domain: row for row in domain_level_list(profile=profile)}
    snapshots: dict[str, list] = {}
    for snapshot in domain_snapshot_list(profile=profile):
        snapshots.setdefault(snapshot.domain, []).append(snapshot)
    out = []
    for domain in DOMAINS:
        row = rows.get(domain.slug) or DomainLevel(domain=domain.slug)
        kept = snapshots.get(domain.slug, [])
        whole = len(kept) < DOMAIN_SNAPSHOT_KEEP  # none dropped: the chart starts at the prior
        points = [(0, PRIOR)] if row.evidence and whole else []
        points += [(s.evidence, s.score) for s in kept]
        if row.evidence and (not points or points[-1][0] < row.evidence):
            points.append((row.evidence, row.score))
        if row.explicit_level:
            origin = "set by you"
        elif row.hidden:
            origin = "hidden"
        else:
            origin = "learned" if row.level else ""
        setting = row.explicit_level or (HIDDEN if row.hidden else "")
        out.append(
            DomainRow(
                slug=domain.slug,
                label=domain.label,
                level=row.effective_level if (row.explicit_level or profile.memory_enabled) else "",
                origin=origin,
                learned=row.level,
                score=row.score if row.evidence else None,
                evidence=row.evidence,
                setting=setting,
                chart=sparkline(points),
                chart_from=points[0][0] if points else 0,
            )
        )
    return out
