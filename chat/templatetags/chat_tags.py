from django import template
from django.utils.safestring import mark_safe

from chat.rendering import render_markdown

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


@register.filter
def minutes(duration) -> int:
    """A timedelta in whole minutes, rounded up (the sign-in lockout page)."""
    return -(-int(duration.total_seconds()) // 60) if duration else 0
