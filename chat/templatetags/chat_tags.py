from django import template
from django.utils.safestring import mark_safe

from chat.rendering import render_markdown
from memory.report import ContextReport, report_read

register = template.Library()


@register.filter
def markdown(text: str) -> str:
    """Markdown rendered and sanitised by nh3 (see chat.rendering), so safe to insert."""
    return mark_safe(render_markdown(text))  # noqa: S308 — sanitised by nh3 above


@register.filter
def percent(used, limit) -> int:
    try:
        return max(0, min(100, round(100 * int(used) / int(limit))))
    except (TypeError, ValueError, ZeroDivisionError):
        return 0


@register.inclusion_tag("chat/_context_report.html")
def context_report(stored: dict | None) -> dict[str, ContextReport | None]:
    """The "what the model saw" fragment, for a stored report of any schema version."""
    return {"report": report_read(stored)}


@register.filter
def minutes(duration) -> int:
    """A timedelta in whole minutes, rounded up (the sign-in lockout page)."""
    return -(-int(duration.total_seconds()) // 60) if duration else 0
