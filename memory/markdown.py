"""The Markdown of decisions and action items, as the staff reports (``staff.reports``) and a
project's briefing (``projects.briefing``) both write them; every stored text escaped by
``web.markdown_text.md``."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime

from memory.models import OPEN_STATUSES, ActionItem, Decision
from web.markdown_text import md


def period(first: datetime | None, last: datetime | None) -> str:
    """The days the messages span: one day, "first to last", or none."""
    if first is None or last is None:
        return "no messages yet"
    first_day, last_day = first.date(), last.date()
    if first_day == last_day:
        return first_day.isoformat()
    return f"{first_day.isoformat()} to {last_day.isoformat()}"


def overdue(item: ActionItem, today: date) -> bool:
    return item.status in OPEN_STATUSES and item.due_date is not None and item.due_date < today


def action_line(item: ActionItem, today: date, waiting: Iterable[ActionItem] = ()) -> str:
    """The item in one line: its owner, due date (overdue?) and the open items it waits on."""
    details = []
    if item.owner:
        details.append(f"owner: {md(item.owner)}")
    if item.due_date:
        late = " (overdue)" if overdue(item, today) else ""
        details.append(f"due {item.due_date.isoformat()}{late}")
    waiting = list(waiting)
    if waiting:
        details.append("waiting on: " + "; ".join(md(other.what) for other in waiting))
    return md(item.what) + (f" — {', '.join(details)}" if details else "")


def decision_list(decisions: Iterable[Decision]) -> list[str]:
    """Numbered, each with its status, context, rationale, alternatives and stakeholders."""
    lines = []
    for number, decision in enumerate(decisions, start=1):
        lines.append(f"{number}. **{md(decision.what)}** ({decision.get_status_display()})")
        for label, value in (
            ("Context", decision.context),
            ("Rationale", decision.rationale),
            ("Alternatives considered", ", ".join(map(str, decision.alternatives))),
            ("Stakeholders", ", ".join(map(str, decision.stakeholders))),
        ):
            if value:
                lines.append(f"   - {label}: {md(value)}")
    return lines or ["None recorded."]


def action_table(items: Iterable[ActionItem]) -> list[str]:
    """A table of the items: what, owner, due date, status."""
    rows = [
        f"| {md(item.what)} | {md(item.owner) or '—'} | "
        f"{item.due_date.isoformat() if item.due_date else '—'} | {item.get_status_display()} |"
        for item in items
    ]
    if not rows:
        return ["None recorded."]
    return ["| Action | Owner | Due | Status |", "| --- | --- | --- | --- |", *rows]
