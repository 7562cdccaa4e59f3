"""Decisions and action items in Markdown, one writer for the staff reports and a project's
briefing (``memory.markdown``): stored text escaped, overdue and waiting said."""

from datetime import date, timedelta

import pytest

from memory.markdown import action_line, action_table, decision_list, period
from memory.models import ActionItem, Decision

pytestmark = pytest.mark.django_db
TODAY = date(2026, 3, 10)


def test_a_decision_list_numbers_them_with_their_details_escaped(alice):
    decision = Decision(
        user=alice, what="Use **Postgres**", status=Decision.Status.DECIDED,
        context="1. the load", alternatives=["SQLite", 3], stakeholders=[],
    )  # fmt: skip
    assert decision_list([decision]) == [
        "1. **Use \\*\\*Postgres\\*\\*** (Decided)",
        "   - Context: 1\\. the load",
        "   - Alternatives considered: SQLite, 3",
    ]
    assert decision_list([]) == ["None recorded."]


def test_an_action_line_says_overdue_and_what_it_waits_on(alice):
    item = ActionItem(user=alice, what="Ship | it", owner="Sam", due_date=TODAY - timedelta(1))
    other = ActionItem(user=alice, what="Review")
    assert action_line(item, TODAY, [other]) == (
        "Ship \\| it — owner: Sam, due 2026-03-09 (overdue), waiting on: Review"
    )
    item.status = ActionItem.Status.DONE
    assert action_line(item, TODAY) == "Ship \\| it — owner: Sam, due 2026-03-09"
    assert action_table([item])[2] == "| Ship \\| it | Sam | 2026-03-09 | Done |"
    assert action_table([]) == ["None recorded."]


def test_a_period_is_one_day_or_a_span():
    from datetime import UTC, datetime

    first = datetime(2026, 3, 1, 9, tzinfo=UTC)
    assert period(None, None) == "no messages yet"
    assert period(first, first + timedelta(hours=2)) == "2026-03-01"
    assert period(first, first + timedelta(days=2)) == "2026-03-01 to 2026-03-03"
