"""Field values to JSON and back, generically over a model's concrete fields."""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Any

from django.db import models


def encode(value: Any) -> Any:
    """JSON-safe, without loss: datetimes keep their microseconds and offset."""
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return value


def decode(field: models.Field, value: Any) -> Any:
    if value is None:
        return None
    if isinstance(field, models.DateTimeField | models.DateField | models.TimeField):
        return field.to_python(value)
    return value
