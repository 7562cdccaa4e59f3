"""Every value of an import checked before it is stored, with a message naming the field.

A value is refused unless its type is the field's (no strings for numbers, no floats for
integers, no booleans for either), integers are within the range PostgreSQL gives the column
(the same on SQLite, so a file valid on one database is valid on the other), floats are
finite, text fits its column and its choices, and dates parse and are not in the future.
Scores in 0..1 (a fact's importance, the learned style) are clamped into it. Rules that
belong to one model (roles, statuses, leases, message lengths, budgets, preferences) are in
``row_rules``.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import models
from django.db.backends.base.operations import BaseDatabaseOperations
from django.utils import timezone
from django.utils.dateparse import parse_date, parse_datetime

from chat.models import Conversation, Message
from memory.models import Decision, Fact, Summary
from memory.report import report_check
from profiles.models import DomainLevel, DomainSnapshot, StyleSnapshot, UserProfile
from profiles.style import METRICS
from projects.models import Project
from web.fields import concrete_field
from web.shapes import ShapeError, check
from web.visible import has_visible_text

INTEGER_RANGES = BaseDatabaseOperations.integer_field_ranges
SUMMARY_LISTS = ("topics", "decisions", "action_items", "open_questions")
# Replies are not bound by the message limit (the model writes them), but by this.
ASSISTANT_MAX_CHARS = 200_000
BUDGET_RANGE = (512, 2_000_000)  # as the conversation settings form
FUTURE_SLACK = timedelta(days=1)  # clocks differ; a date beyond this is not a past event
UNIT_FIELDS = {
    Fact: {"importance"},
    UserProfile: set(METRICS),
    StyleSnapshot: set(METRICS),
}
CLIENT_ID = re.compile(r"[A-Za-z0-9_-]{0,64}")  # fullmatch: "$" would let "\n" end one
HISTORY_TYPES = {"+", "~", "-"}
# Every JSON field an import can fill, with its shape (web.shapes); a JSON field not listed
# is refused, so a new one cannot come in unchecked.
JSON_SHAPES: dict[tuple[type[models.Model], str], Any] = {
    **{(Summary, name): list[str] for name in SUMMARY_LISTS},
    (Decision, "alternatives"): list[str],
    (Decision, "stakeholders"): list[str],
    (UserProfile, "topics_of_interest"): list[str],
}


class Invalid(ValueError):
    """A value the import refuses; ``str()`` names where it is and why."""


def clean_value(model: type[models.Model], field: models.Field, raw: Any, where: str) -> Any:
    """``raw`` from the file as the value to store in ``field``, or ``Invalid``."""
    name = f"{where}.{field.name}"
    if raw is None:
        if not field.null:
            raise Invalid(f"{name}: must not be null.")
        return None
    if isinstance(field, models.BooleanField):
        if not isinstance(raw, bool):
            raise Invalid(f"{name}: must be true or false, not {raw!r:.40}.")
        return raw
    if isinstance(field, models.IntegerField):
        return _integer(field, raw, name)
    if isinstance(field, models.FloatField):
        return _float(model, field, raw, name)
    if isinstance(field, models.DateTimeField):
        return _datetime(raw, name)
    if isinstance(field, models.DateField):
        if not isinstance(raw, str) or parse_date_safe(raw) is None:
            raise Invalid(f"{name}: not a date (YYYY-MM-DD): {raw!r:.40}.")
        return parse_date_safe(raw)
    if isinstance(field, models.CharField | models.TextField):
        return _text(field, raw, name)
    if isinstance(field, models.JSONField):
        return _json(model, field, raw, name)
    raise Invalid(f"{name}: a {type(field).__name__} cannot be imported.")


def _json(model: type[models.Model], field: models.Field, raw: Any, name: str) -> Any:
    """JSON of the field's shape (its depth and text were checked when the file was read)."""
    try:
        if field.name == "context_report" and model is Message:
            report_check(raw, name)  # "what the model saw", as the pages read it
        elif (model, field.name) in JSON_SHAPES:
            check(raw, JSON_SHAPES[model, field.name], name)
        else:
            raise Invalid(f"{name}: this field cannot be imported.")
    except ShapeError as error:
        raise Invalid(str(error)) from None
    return raw


def _integer(field: models.Field, raw: Any, name: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise Invalid(f"{name}: must be a whole number, not {raw!r:.40}.")
    low, high = INTEGER_RANGES.get(field.get_internal_type(), (None, None))
    if (low is not None and raw < low) or (high is not None and raw > high):
        raise Invalid(f"{name}: {raw} is outside {low}..{high}.")
    return raw


def _float(model, field: models.Field, raw: Any, name: str) -> float:
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        raise Invalid(f"{name}: must be a number, not {raw!r:.40}.")
    value = float(raw)
    if not math.isfinite(value):
        raise Invalid(f"{name}: must be a finite number.")
    if field.name in UNIT_FIELDS.get(model, ()):
        return min(1.0, max(0.0, value))
    if value < 0:
        raise Invalid(f"{name}: must not be negative.")
    return value


def parse_date_safe(raw: str) -> date | None:
    try:
        return parse_date(raw)
    except ValueError:  # well formed, impossible ("2024-02-30")
        return None


def _datetime(raw: Any, name: str) -> datetime:
    try:
        value = parse_datetime(raw) if isinstance(raw, str) else None
    except ValueError:
        value = None
    if value is None:
        raise Invalid(f"{name}: not a date and time (ISO 8601): {raw!r:.40}.")
    try:
        if timezone.is_naive(value):
            value = timezone.make_aware(value, UTC)
        utc = value.astimezone(UTC)
    except (OverflowError, ValueError):
        raise Invalid(f"{name}: {raw!r:.40} is out of range.") from None
    if utc > timezone.now() + FUTURE_SLACK:
        raise Invalid(f"{name}: {raw!r:.40} is in the future.")
    return utc


def _text(field: models.Field, raw: Any, name: str) -> str:
    if not isinstance(raw, str):
        raise Invalid(f"{name}: must be text, not {raw!r:.40}.")
    value = raw.replace("\x00", "")  # PostgreSQL text cannot hold NUL; it means nothing here
    if field.max_length is not None and len(value) > field.max_length:
        raise Invalid(f"{name}: longer than {field.max_length} characters.")
    choices = {str(choice) for choice, _label in field.flatchoices} if field.choices else None
    if choices is not None and value not in choices and (value or not field.blank):
        allowed = ", ".join(repr(c) for c in sorted(choices))
        raise Invalid(f"{name}: {value!r:.40} is not one of {allowed}.")
    return value


def row_rules(model: type[models.Model], values: dict[str, Any], where: str) -> dict[str, Any]:
    """The rules of one model on a row's cleaned values (changed in place and returned)."""
    if model is Message:
        _message_rules(values, where)
    elif model is Conversation:
        if values.get("temporary") and values.get("project_id") is not None:
            raise Invalid(f"{where}.project: a temporary chat stays outside every project.")
        budget = values.get("context_budget")
        if budget is not None and not BUDGET_RANGE[0] <= budget <= BUDGET_RANGE[1]:
            raise Invalid(
                f"{where}.context_budget: {budget} is outside {BUDGET_RANGE[0]}..{BUDGET_RANGE[1]}."
            )
    elif model is UserProfile:
        _profile_rules(values, where)
    elif model is Project:
        if not (values.get("name") or "").strip():
            raise Invalid(f"{where}.name: a project needs a name.")
    elif model in (DomainLevel, DomainSnapshot):
        _domain_rules(model, values, where)
    return values


def _domain_rules(model, values: dict[str, Any], where: str) -> None:
    """A subject's level: a known subject (its choices, checked with the text), a score in
    0..1 (refused, not clamped: it is not a style reading but what a level rests on)."""
    if "domain" not in values:
        raise Invalid(f"{where}.domain: a subject is needed.")
    score = values.get("score")
    if score is not None and not 0.0 <= score <= 1.0:
        raise Invalid(f"{where}.score: {score} is outside 0..1.")
    for name in ("evidence", "score") if model is DomainSnapshot else ():
        if name not in values:
            raise Invalid(f"{where}.{name}: needed.")


def _message_rules(values: dict[str, Any], where: str) -> None:
    role = values.get("role")
    if role not in (Message.Role.USER, Message.Role.ASSISTANT):
        raise Invalid(f"{where}.role: must be 'user' or 'assistant', not {role!r:.40}.")
    limit = (
        settings.MEMORYCHAT_MAX_MESSAGE_CHARS if role == Message.Role.USER else ASSISTANT_MAX_CHARS
    )
    if len(values.get("content", "")) > limit:
        raise Invalid(f"{where}.content: longer than the limit of {limit:,} characters.")
    if role == Message.Role.USER and not has_visible_text(values.get("content", "")):
        raise Invalid(f"{where}.content: empty (no visible character).")
    if not CLIENT_ID.fullmatch(values.get("client_id", "")):
        raise Invalid(f"{where}.client_id: at most 64 letters, digits, '-' or '_'.")
    # No imported reply is being written by anyone: a "streaming" row would leave the
    # conversation busy (a lease in the future) or swept at random (one in the past).
    if values.get("status") == Message.Status.STREAMING:
        values["status"] = Message.Status.INTERRUPTED
        values["error"] = values.get("error") or "Imported while it was being written."
    values["lease_expires_at"] = None


def _profile_rules(values: dict[str, Any], where: str) -> None:
    from profiles.services import validate_preferences  # profiles imports nothing from staff

    profile = UserProfile(**{k: v for k, v in values.items() if k != "id"})
    try:
        validate_preferences(profile)
    except ValidationError as error:
        field, messages = next(iter(error.message_dict.items()))
        raise Invalid(f"{where}.{field}: {' '.join(messages)}") from None


def clean_history(record: Any, where: str) -> tuple[datetime, str, str | None]:
    """A history record's date, type and change reason."""
    if not isinstance(record, dict):
        raise Invalid(f"{where}: must be an object.")
    history_type = record.get("history_type")
    if history_type not in HISTORY_TYPES:
        raise Invalid(f"{where}.history_type: must be '+', '~' or '-', not {history_type!r:.10}.")
    reason = record.get("history_change_reason")
    if reason is not None and (not isinstance(reason, str) or len(reason) > 100):
        raise Invalid(f"{where}.history_change_reason: text of at most 100 characters.")
    return _datetime(record.get("history_date"), f"{where}.history_date"), history_type, reason


def clean_username(raw: Any, where: str) -> str:
    """A username valid by the rules of sign-up: the user model's validator and length, and
    not another user's name in other letter case."""
    User = get_user_model()
    field = concrete_field(User, User.USERNAME_FIELD)
    if not isinstance(raw, str) or not raw:
        raise Invalid(f"{where}: a username is needed.")
    try:
        field.run_validators(raw)
    except ValidationError as error:
        raise Invalid(f"{where}: {' '.join(error.messages)}") from None
    if field.max_length and len(raw) > field.max_length:
        raise Invalid(f"{where}: longer than {field.max_length} characters.")
    clash = (
        User.objects.filter(**{f"{User.USERNAME_FIELD}__iexact": raw})
        .exclude(**{User.USERNAME_FIELD: raw})
        .exists()
    )
    if clash:
        raise Invalid(f"{where}: a user with that username in other letter case exists.")
    return raw


def clean_imported_from(raw: Any, where: str) -> tuple[str, str] | None:
    """A conversation's ``imported_from``: the assistant and the conversation's id in its
    export (``userdata.models.ImportedConversation``), or None."""
    from userdata.models import ChatImport, ImportedConversation

    if raw is None:
        return None
    if not isinstance(raw, dict) or set(raw) != {"source", "id"}:
        raise Invalid(f"{where}: must be null or an object with a “source” and an “id”.")
    source, ident = raw["source"], raw["id"]
    if source not in ChatImport.Source.values:
        allowed = ", ".join(repr(c) for c in ChatImport.Source.values)
        raise Invalid(f"{where}.source: {source!r:.40} is not one of {allowed}.")
    most = ImportedConversation._meta.get_field("source_id").max_length
    if not isinstance(ident, str) or not ident.strip() or (most is not None and len(ident) > most):
        raise Invalid(f"{where}.id: the conversation's id there, text of at most {most}.")
    return source, ident
