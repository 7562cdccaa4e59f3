"""A project's briefing, as Markdown, for its user: the staff reports' format (a title, a line
of what it covers, then sections; every stored text escaped by ``web.markdown_text.md``) over
what the project knows (``projects.selectors.Knowledge``); its decisions and action items
written as the reports write them (``memory.markdown``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from memory.markdown import action_line, action_table, decision_list, period
from memory.models import ActionItem, Decision
from projects.models import Project
from projects.selectors import Knowledge
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


def _waiting(item: ActionItem) -> list[ActionItem]:
    return [other for other in item.depends_on.all() if other.status != ActionItem.Status.DONE]


def project_briefing(data: BriefingData) -> str:
    project, knowledge, today = data.project, data.knowledge, data.today
    conversations = _counted(data.conversation_count, "conversation")
    messages = _counted(data.message_count, "message")
    span = period(data.first_message_at, data.last_message_at)
    lines = [
        f"# Project briefing: {md(project.name)}",
        "",
        f"*{conversations} · {span} · {messages} · prepared {today.isoformat()}*",
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
    lines += decision_list(row.obj for row in knowledge.decisions)
    lines += ["", "## Action items", ""]
    lines += action_table(row.obj for row in knowledge.open_items + knowledge.done_items)
    lines += ["", "## Needs attention", ""]
    attention = [f"- Overdue: {action_line(i, today, _waiting(i))}" for i in overdue]
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
