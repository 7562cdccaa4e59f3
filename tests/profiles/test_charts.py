"""The server-side sparkline and the style overview that feeds it."""

import pytest

from profiles.charts import sparkline
from profiles.models import StyleSnapshot
from profiles.overview import style_overview
from profiles.selectors import profile_get
from profiles.services import SNAPSHOT_EVERY
from profiles.style import METRICS
from tests.profiles.samples import FORMAL


def test_it_needs_two_points():
    """One point or none draws nothing."""
    assert sparkline([]) == ""
    assert sparkline([(0, 0.5)]) == ""


def test_it_scales_points_into_the_box():
    """x spans the width from the first to the last point; value 1 is at the top."""
    assert sparkline([(10, 0.0), (20, 1.0)], width=100, height=50, pad=0) == "0.0,50.0 100.0,0.0"


def test_it_clamps_values_outside_0_and_1():
    """A value out of range stays inside the box."""
    assert sparkline([(0, -1), (1, 2)], width=10, height=10, pad=0) == "0.0,10.0 10.0,0.0"


@pytest.mark.django_db
def test_the_overview_starts_at_the_prior_until_history_is_dropped(alice, observe):
    """The chart starts at 0 messages while every snapshot is kept, at the oldest kept after."""
    observe(alice, FORMAL, times=SNAPSHOT_EVERY * 2 + 3)
    profile = profile_get(user=alice)
    rows = style_overview(profile=profile)
    assert [row.chart_from for row in rows] == [0] * len(METRICS)
    assert all(len(row.chart.split()) == 4 for row in rows)  # prior, 2 snapshots, now

    StyleSnapshot.objects.filter(profile=profile, messages_observed=SNAPSHOT_EVERY).delete()
    rows = style_overview(profile=profile)
    assert [row.chart_from for row in rows] == [SNAPSHOT_EVERY * 2] * len(METRICS)
    assert all(len(row.chart.split()) == 2 for row in rows)  # oldest kept snapshot, now
