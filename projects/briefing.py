"""A project's briefing, as Markdown, for its user: the staff reports' format (a title, a line
of what it covers, then sections; every stored text escaped by ``web.markdown_text.md``) over
what the project knows (``projects.selectors.Knowledge``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from memory.models import Decision
from projects.models import Project
from projects.selectors import OPEN_STATUSES, Knowledge
from web.markdown_text import md


@dataclass(frozen=True)
class BriefingData:
    project: Project
    knowledge: Knowledge
    conversation_count: int
    message_count: int
    first_message_at: datetime | None
    last_message_at: datetime | None
    today: date


def _counted(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _period(data: BriefingData) -> str:
    if data.first_message_at is None or data.last_message_at is None:
        return "no messages yet"
    first, last = data.first_message_at.date(), data.last_message_at.date()
    return first.isoformat() if first == last else f"{first.isoformat()} to {last.isoformat()}"


def _action_line(item, today: date) -> str:
    details = []
    if item.owner:
        details.append(f"owner: {md(item.owner)}")
    if item.due_date:
        overdue = item.due_date < today and item.status in OPEN_STATUSES
        late = " (overdue)" if overdue else ""
        details.append(f"due {item.due_date.isoformat()}{late}")
    waiting = [other for other in item.depends_on.all() if other.status != "done"]
    if waiting:
        details.append("waiting on: " + "; ".join(md(other.what) for other in waiting))
    return md(item.what) + (f" — {', '.join(details)}" if details else "")


def project_briefing(data: BriefingData) -> str:
    project, knowledge, today = data.project, data.knowledge, data.today
    conversations = _counted(data.conversation_count, "conversation")
    messages = _counted(data.message_count, "message")
    lines = [
        f"# Project briefing: {md(project.name)}",
        "",
        f"*{conversations} · {_period(data)} · {messages} · prepared {today.isoformat()}*",
        "",
    ]
    if project.description:
        lines += [md(project.description), ""]
    decided = [r.obj for r in knowledge.decisions if r.obj.status == Decision.Status.DECIDED]
    proposed = [r.obj for r in knowledge.decisions if r.obj.status == Decision.Status.PROPOSED]
    open_items = [r.obj for r in knowledge.open_items]
    overdue = [i for i in open_items if i.due_date and i.due_date < today]
    lines += [
        "## At a glance",
        "",
        f"- Decisions taken: {len(decided)}; awaiting a decision: {len(proposed)}",
        f"- Action items open: {len(open_items)} (overdue: {len(overdue)}); "
        f"done: {len(knowledge.done_items)}",
        f"- Facts: {len(knowledge.facts)}",
        "",
        "## Decisions",
        "",
    ]
    if knowledge.decisions:
        for number, row in enumerate(knowledge.decisions, start=1):
            decision = row.obj
            lines.append(f"{number}. **{md(decision.what)}** ({decision.get_status_display()})")
            for label, value in (
                ("Context", decision.context),
                ("Rationale", decision.rationale),
                ("Alternatives considered", ", ".join(map(str, decision.alternatives))),
                ("Stakeholders", ", ".join(map(str, decision.stakeholders))),
            ):
                if value:
                    lines.append(f"   - {label}: {md(value)}")
    else:
        lines.append("None recorded.")
    lines += ["", "## Action items", ""]
    rows = knowledge.open_items + knowledge.done_items
    if rows:
        lines += ["| Action | Owner | Due | Status |", "| --- | --- | --- | --- |"]
        for item_row in rows:
            item = item_row.obj
            due = item.due_date.isoformat() if item.due_date else "—"
            lines.append(
                f"| {md(item.what)} | {md(item.owner) or '—'} | {due} | "
                f"{item.get_status_display()} |"
            )
    else:
        lines.append("None recorded.")
    lines += ["", "## Needs attention", ""]
    attention = [f"- Overdue: {_action_line(i, today)}" for i in overdue]
    attention += [f"- Awaiting a decision: {md(d.what)}" for d in proposed]
    lines += attention or ["Nothing needs attention."]
    lines += ["", "## Timeline", ""]
    lines += [
        f"- {entry.day.isoformat()} · {entry.label}: {md(entry.row.text)}"
        for entry in knowledge.timeline
    ] or ["Nothing dated yet."]
    lines += ["", "## Facts", ""]
    lines += [f"- {md(row.text)}" for row in knowledge.facts] or ["None recorded."]
    return "\n".join(lines).rstrip() + "\n"
