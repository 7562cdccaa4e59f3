"""JSON from outside (websocket frames, staff imports), parsed with bounds: nesting depth, no
NaN or Infinity, no lone surrogates. What passes can be stored on SQLite and PostgreSQL alike
(a lone surrogate cannot be encoded as UTF-8 and fails the database driver, not a check)."""

from __future__ import annotations

import json
import math
from typing import Any

MAX_ID = 2**63 - 1  # the largest id a bigint column holds: past it, no row can match


class JSONRejected(ValueError):
    """The text is JSON we do not take; the message says why, fit for a page."""


def _no_constants(name: str) -> Any:
    raise JSONRejected(f"{name} is not a number JSON allows here.")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999 parses to inf
        raise JSONRejected(f"The number {text[:40]} is out of range.")
    return value


def loads(text: str, *, max_depth: int) -> Any:
    """``json.loads`` that refuses nesting deeper than ``max_depth``, non-finite numbers and
    strings with lone surrogates, with a ``JSONRejected`` (a ``ValueError``) saying which.
    Text that is not JSON raises ``json.JSONDecodeError`` as usual."""
    try:
        value = json.loads(text, parse_constant=_no_constants, parse_float=_finite)
    except RecursionError:
        raise JSONRejected(f"It is nested too deeply (more than {max_depth} levels).") from None
    check(value, max_depth=max_depth)
    return value


def check(value: Any, *, max_depth: int) -> None:
    """Walk ``value`` (without recursion) for depth and lone surrogates."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = [*item.keys(), *item.values()]
        elif isinstance(item, list):
            children = item
        else:
            if isinstance(item, str):
                _check_text(item)
            continue
        if depth > max_depth:
            raise JSONRejected(f"It is nested too deeply (more than {max_depth} levels).")
        stack.extend((child, depth + 1) for child in children)


def _check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise JSONRejected("It has text with a lone surrogate (\\ud800-\\udfff).") from None
