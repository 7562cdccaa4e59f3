"""A model's field by name, as the code that reads its value, choices or column needs it:
``_meta.get_field`` may also give a reverse relation, which has none of those."""

from __future__ import annotations

from django.db.models import Field, Model


def concrete_field(model: type[Model], name: str) -> Field:
    """``model``'s field ``name``, one with a value of its own (not a reverse relation);
    ``FieldDoesNotExist`` for an unknown name, as ``get_field``."""
    field = model._meta.get_field(name)
    if not isinstance(field, Field):
        raise TypeError(f"{model.__name__}.{name} is a relation, not a field with a value")
    return field
