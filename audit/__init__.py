"""Who changed a row, and why: the user and reason django-simple-history records.

Shared by the apps' services (memory, profiles, staff), so none has to import another for it.
"""

from __future__ import annotations

from contextlib import contextmanager, suppress
from types import SimpleNamespace

from simple_history.models import HistoricalRecords


def attribute(obj, *, actor=None, reason: str = ""):
    """Mark ``obj`` so its next history record names ``actor`` and ``reason``. Either left out
    is left to simple-history: the request's user (if any), no reason."""
    if actor is not None:
        obj._history_user = actor
    if reason:
        obj._change_reason = reason[:100]
    return obj


@contextmanager
def acting_as(actor):
    """History records made inside (cascades, signals on objects we never hold) name ``actor``.

    Does what simple-history's HistoryRequestMiddleware does for a request, for code that runs
    outside one (commands, tests); inside a request the request's user is kept.
    """
    context = HistoricalRecords.context
    had_request = hasattr(context, "request")
    if not had_request:
        context.request = SimpleNamespace(user=actor)
    try:
        yield
    finally:
        if not had_request:
            with suppress(AttributeError):
                del context.request
