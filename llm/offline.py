"""The offline reply: what memorychat can say with no model, built from the context report."""

from __future__ import annotations

import re

from memory.report import ContextReport, memories_sent, summary_text

MAX_MEMORIES = 6
_PIECE = re.compile(r"\S+\s*|\s+")


def _short(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def compose_offline_reply(user_text: str, report: ContextReport | None) -> str:
    """Markdown: the memories the context engine chose, the rolling summary. That it is
    offline is said once, by the chat page's banner and the reply's "offline" badge."""
    lines: list[str] = []
    memories = memories_sent(report)
    if memories:
        lines.append("What I remember that may be relevant:")
        for memory in memories[:MAX_MEMORIES]:
            when = f", {memory['date']}" if memory.get("date") else ""
            lines.append(f"- {_short(memory['text'], 300)} ({memory['kind']}{when})")
        lines.append("")
    summary = summary_text(report)
    if summary:
        lines += ["Earlier in this conversation: " + _short(summary, 600), ""]
    if not memories and not summary:
        lines += ["I have nothing stored yet that relates to this.", ""]
    if user_text.strip():
        lines.append(f"You said: “{_short(user_text, 200)}”")
    return "\n".join(lines).strip()


def split_for_streaming(text: str) -> list[str]:
    """Word-sized pieces whose concatenation is exactly ``text``."""
    return _PIECE.findall(text)
