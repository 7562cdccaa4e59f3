"""JSON checked against a type: a TypedDict (its required and optional keys, no others), a
list of a type, ``X | None``, ``Literal``, and str, int, float, bool, ``dict[str, Any]``.
For data stored as JSON that pages read back (a context report, an import's JSON fields), so
that a record of the wrong shape is refused where it comes in, or read as absent, and never
answers 500 where it is shown."""

from __future__ import annotations

import math
import types
import typing
from functools import cache
from typing import Any, Literal, NotRequired, Union, get_args, get_origin, get_type_hints


class ShapeError(ValueError):
    """``str()`` names where the value is and what was expected."""


def check(value: Any, expected: Any, where: str = "", *, partial: bool = False) -> None:
    """Raise ShapeError unless ``value`` (parsed JSON) has the shape ``expected``. With
    ``partial``, a TypedDict's keys may be missing and unknown ones are let be (records
    written by older versions, whose readers read every key with a default); the type of
    every known key is checked all the same."""
    if expected is Any:
        return
    origin = get_origin(expected)
    if origin is NotRequired:
        return check(value, get_args(expected)[0], where, partial=partial)
    if origin in (Union, types.UnionType):
        problems = []
        for option in get_args(expected):
            try:
                return check(value, option, where, partial=partial)
            except ShapeError as error:
                if option is not type(None):  # "must be null" says least
                    problems.append(str(error))
        raise ShapeError(problems[0] if problems else f"{where}: must be null.")
    if origin is Literal:
        if value not in get_args(expected):
            raise ShapeError(f"{where}: must be one of {', '.join(map(repr, get_args(expected)))}.")
        return None
    if origin is list:
        if not isinstance(value, list):
            raise ShapeError(f"{where}: must be a list.")
        (item,) = get_args(expected) or (Any,)
        for n, element in enumerate(value):
            check(element, item, f"{where}[{n}]", partial=partial)
        return None
    if origin is dict or expected is dict:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise ShapeError(f"{where}: must be an object.")
        return None
    if typing.is_typeddict(expected):
        return _check_typeddict(value, expected, where, partial)
    _check_scalar(value, expected, where)
    return None


def _check_typeddict(value: Any, expected: type, where: str, partial: bool) -> None:
    if not isinstance(value, dict):
        raise ShapeError(f"{where}: must be an object.")
    hints = _hints(expected)
    # A TypedDict class (is_typeddict checked), which plain ``type`` does not describe.
    required = expected.__required_keys__  # type: ignore[attr-defined]
    missing = [k for k in required if k not in value]
    if missing and not partial:
        raise ShapeError(f"{where}: {missing[0]!r} is missing.")
    unknown = [k for k in value if k not in hints]
    if unknown and not partial:
        raise ShapeError(f"{where}: unknown key {str(unknown[0])[:40]!r}.")
    for key, item in value.items():
        if key in hints:
            check(item, hints[key], f"{where}.{key}" if where else key, partial=partial)


@cache
def _hints(typed_dict: type) -> dict[str, Any]:
    return get_type_hints(typed_dict, include_extras=True)


def _check_scalar(value: Any, expected: Any, where: str) -> None:
    if expected is None or expected is type(None):
        ok = value is None
    elif expected is bool:
        ok = isinstance(value, bool)
    elif expected is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif expected is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    elif expected is str:
        ok = isinstance(value, str)
    else:
        raise TypeError(f"no shape check for {expected!r}")
    if not ok:
        name = "null" if expected in (None, type(None)) else expected.__name__
        raise ShapeError(f"{where}: must be {name}, not {str(value)[:40]!r}.")
