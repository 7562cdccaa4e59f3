"""Words for people on the profile page: a preference or learned metric by its label, never
by its field name ("tone", "emoji_use")."""

from django import template
from django.core.exceptions import FieldDoesNotExist

from profiles.instructions import METRIC_LABELS
from profiles.models import UserProfile
from web.fields import concrete_field

register = template.Library()


@register.filter
def source_label(source: dict) -> str:
    """Where a line of the instructions comes from, e.g. "your preference for tone: casual"
    or "learned formality (72%) over 12 messages"."""
    name = source.get("name", "")
    if source.get("kind") == "metric":
        label = METRIC_LABELS.get(name, name.replace("_", " ")).lower()
        percent = round(100 * float(source.get("value") or 0))
        count = source.get("messages", 0)
        return f"learned {label} ({percent}%) over {count} message{'' if count == 1 else 's'}"
    try:
        field = concrete_field(UserProfile, name)
    except FieldDoesNotExist:
        return f"your preference: {name.replace('_', ' ')}"
    value = source.get("value", "")
    shown = dict(field.choices).get(value, value) if field.choices else value
    return f"your preference for {str(field.verbose_name).lower()}: {str(shown).lower()}"


@register.filter
def metric_name(name: str) -> str:
    return METRIC_LABELS.get(name, name.replace("_", " "))
