"""The learned style as the profile page shows it: values, use in the prompt, history."""

from __future__ import annotations

from dataclasses import dataclass

from profiles.charts import sparkline
from profiles.instructions import METRIC_LABELS, InstructionsBlock, build_instructions
from profiles.models import UserProfile
from profiles.selectors import style_snapshot_list
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

    @property
    def percent(self) -> int:
        return round(self.value * 100)


def style_overview(
    *, profile: UserProfile, block: InstructionsBlock | None = None
) -> list[MetricRow]:
    """The four learned metrics, whether the instructions use them, and their history.

    The history starts at the prior (0 messages) unless older snapshots were dropped, goes
    through every kept snapshot and ends at the current value.
    """
    block = block or build_instructions(profile)
    used = {s["name"]: s["line"] for s in block.sources if s["kind"] == "metric"}
    unused = {item["name"]: item["reason"] for item in block.skipped}
    snapshots = style_snapshot_list(profile=profile)
    from_start = not snapshots or snapshots[0].messages_observed <= SNAPSHOT_EVERY
    rows = []
    for name in METRICS:
        value, count = profile.metric(name)
        points = [(0, PRIORS[name])] if from_start and count else []
        points += [
            (snapshot.messages_observed, getattr(snapshot, name))
            for snapshot in snapshots
            if getattr(snapshot, name) is not None
        ]
        if count and (not points or points[-1][0] < profile.messages_observed):
            points.append((profile.messages_observed, value))
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
            )
        )
    return rows
