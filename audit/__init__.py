"""Who changed a row, and why: the user and reason django-simple-history records.

Shared by the apps' services (memory, profiles, staff), so none has to import another for it.
"""

from __future__ import annotations

from contextlib import contextmanager, suppress
from contextvars import ContextVar
from types import SimpleNamespace

from simple_history.models import HistoricalRecords
from simple_history.signals import pre_create_historical_record

REASON_MAX = 100  # simple-history's history_change_reason column

_channel: ContextVar[str] = ContextVar("audit_channel", default="")


def attribute(obj, *, actor=None, reason: str = ""):
    """Mark ``obj`` so its next history record names ``actor`` and ``reason``. Either left out
    is left to simple-history: the request's user (if any), no reason."""
    if actor is not None:
        obj._history_user = actor
    if reason:
        obj._change_reason = reason[:REASON_MAX]
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


def channel_suffix(channel: str) -> str:
    return f" through {channel}"


@contextmanager
def through(channel: str):
    """Every history record made inside says it was made through ``channel`` ("MCP"): its
    reason ends with " through MCP" (the services keep their own words for the rest), so the
    pages that show a memory's history, and the Memory page, can say so."""
    token = _channel.set(channel)
    try:
        yield
    finally:
        _channel.reset(token)


def _mark_channel(sender, history_instance, **kwargs) -> None:
    channel = _channel.get()
    if not channel:
        return
    suffix = channel_suffix(channel)
    reason = history_instance.history_change_reason or "changed"
    if not reason.endswith(suffix):
        history_instance.history_change_reason = reason[: REASON_MAX - len(suffix)] + suffix


pre_create_historical_record.connect(_mark_channel, dispatch_uid="audit.through")
