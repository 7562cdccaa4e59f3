"""Reports built from summaries, decisions and action items, as Markdown: meeting minutes, an
executive briefing and a progress update (the seed's "Report Generation"). Pure functions of a
``selectors.reports.ReportData``; the pages render the Markdown with
``chat.rendering.render_markdown`` (which sanitises) and offer it as a download."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from memory.markdown import (
    action_line,
    action_table,
    decision_list,
    overdue,
    period,
)
from memory.models import OPEN_STATUSES, ActionItem, Decision
from staff.selectors.reports import ReportData
from web.markdown_text import md

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_BULLET = re.compile(r"^[-*•]\s+(.*)$")


def _paragraphs(text: str) -> str:
    """A summary's lines: "- " lines stay bullets, other lines become paragraphs."""
    blocks: list[str] = []
    items: list[str] = []
    for raw in (text or "").splitlines():
        line = raw.strip()
        if not line:
            continue
        bullet = _BULLET.match(line)
        if bullet:
            items.append(f"- {md(bullet.group(1))}")
            continue
        if items:
            blocks.append("\n".join(items))
            items = []
        blocks.append(md(line))
    if items:
        blocks.append("\n".join(items))
    return "\n\n".join(blocks)


def _first_sentences(text: str, n: int) -> str:
    sentences = [s for s in _SENTENCE_END.split(" ".join((text or "").split())) if s]
    return md(" ".join(sentences[:n]))


def _open(item: ActionItem) -> bool:
    return item.status in OPEN_STATUSES


def _overdue(item: ActionItem, data: ReportData) -> bool:
    return overdue(item, data.today)


def _action_line(item: ActionItem, data: ReportData) -> str:
    return action_line(item, data.today, getattr(item, "waiting_on", []))


def _by_due(items: list[ActionItem]) -> list[ActionItem]:
    return sorted(items, key=lambda i: (i.due_date or date.max, i.pk))


def _header(kind: str, data: ReportData) -> list[str]:
    if data.scope == "conversation":
        where = f"Conversation of {md(data.username)}"
    else:
        n = len(data.conversations)
        where = f"All {n} conversation{'' if n == 1 else 's'} of {md(data.username)}"
    messages = f"{data.message_count} message{'' if data.message_count == 1 else 's'}"
    span = period(data.first_message_at, data.last_message_at)
    return [
        f"# {kind}: {md(data.title)}",
        "",
        f"*{where} · {span} · {messages} · prepared {data.today.isoformat()}*",
        "",
    ]


def _summary_section(data: ReportData, *, sentences: int | None = None) -> list[str]:
    lines = []
    if not data.summaries:
        return ["No summary has been made yet.", ""]
    for summary in data.summaries:
        text = (
            _paragraphs(summary.text)
            if sentences is None
            else _first_sentences(summary.text, sentences)
        )
        if data.scope == "user":
            lines.append(f"### {md(summary.conversation.display_title)}")
            lines.append("")
        lines += [text or "(empty summary)", ""]
    return lines


def meeting_minutes(data: ReportData) -> str:
    lines = _header("Meeting minutes", data)
    lines += [f"**Participants:** {md(data.username)}, the assistant", ""]
    lines += ["## Summary", "", *_summary_section(data)]
    topics = list(dict.fromkeys(t for s in data.summaries for t in s.topics))
    lines += ["## Topics discussed", ""]
    lines += [f"- {md(t)}" for t in topics] or ["None recorded."]
    lines += ["", "## Decisions", "", *decision_list(data.decisions)]
    lines += ["", "## Action items", "", *action_table(data.action_items)]
    questions = list(dict.fromkeys(q for s in data.summaries for q in s.open_questions))
    lines += ["", "## Open questions", ""]
    lines += [f"- {md(q)}" for q in questions] or ["None recorded."]
    return "\n".join(lines).rstrip() + "\n"


def executive_briefing(data: ReportData) -> str:
    decided = [d for d in data.decisions if d.status == Decision.Status.DECIDED]
    proposed = [d for d in data.decisions if d.status == Decision.Status.PROPOSED]
    open_items = [i for i in data.action_items if _open(i)]
    overdue = [i for i in open_items if _overdue(i, data)]
    done = [i for i in data.action_items if i.status == ActionItem.Status.DONE]
    lines = _header("Executive briefing", data)
    lines += [
        "## At a glance",
        "",
        f"- Decisions taken: {len(decided)}; awaiting a decision: {len(proposed)}",
        f"- Action items open: {len(open_items)} (overdue: {len(overdue)}); done: {len(done)}",
        f"- Conversations: {len(data.conversations)}; messages: {data.message_count}",
        "",
        "## Key points",
        "",
        *_summary_section(data, sentences=3),
        "## Key decisions",
        "",
    ]
    lines += [
        f"- **{md(d.what)}**" + (f": {md(d.rationale)}" if d.rationale else "") for d in decided
    ] or ["None recorded."]
    lines += ["", "## Needs attention", ""]
    attention = [f"- Overdue: {_action_line(i, data)}" for i in _by_due(overdue)]
    attention += [f"- Awaiting a decision: {md(d.what)}" for d in proposed]
    attention += [
        f"- Open question: {md(q)}"
        for q in dict.fromkeys(q for s in data.summaries for q in s.open_questions)
    ]
    lines += attention or ["Nothing needs attention."]
    lines += ["", "## Next steps", ""]
    lines += [f"- {_action_line(i, data)}" for i in _by_due(open_items)[:5]] or ["None planned."]
    return "\n".join(lines).rstrip() + "\n"


def progress_update(data: ReportData) -> str:
    groups = {
        "Completed": [i for i in data.action_items if i.status == ActionItem.Status.DONE],
        "In progress": [i for i in data.action_items if i.status == ActionItem.Status.IN_PROGRESS],
        "Open": [i for i in data.action_items if i.status == ActionItem.Status.OPEN],
    }
    blocked = [
        i
        for i in data.action_items
        if _open(i) and (_overdue(i, data) or getattr(i, "waiting_on", []))
    ]
    lines = _header("Progress update", data)
    for title, items in groups.items():
        lines += [f"## {title}", ""]
        lines += [f"- {_action_line(i, data)}" for i in _by_due(items)] or ["None."]
        lines.append("")
    lines += ["## Blockers and delays", ""]
    lines += [f"- {_action_line(i, data)}" for i in _by_due(blocked)] or ["None."]
    lines += ["", "## Decisions", ""]
    lines += [
        f"- {md(d.what)} ({d.get_status_display().lower()}"
        + (f", {d.decided_at.date().isoformat()}" if d.decided_at else "")
        + ")"
        for d in data.decisions
    ] or ["None recorded."]
    lines += ["", "## Where things stand", "", *_summary_section(data, sentences=2)]
    return "\n".join(lines).rstrip() + "\n"


@dataclass(frozen=True)
class ReportKind:
    slug: str
    title: str
    build: Callable[[ReportData], str]


REPORTS = {
    r.slug: r
    for r in (
        ReportKind("minutes", "Meeting minutes", meeting_minutes),
        ReportKind("briefing", "Executive briefing", executive_briefing),
        ReportKind("progress", "Progress update", progress_update),
    )
}
