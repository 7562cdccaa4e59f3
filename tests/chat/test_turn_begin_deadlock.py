"""turn_begin tries again when PostgreSQL breaks a deadlock (nothing was stored)."""

import pytest
from django.db import OperationalError

from chat import services
from chat.models import Message

pytestmark = pytest.mark.django_db


class Deadlock(Exception):
    sqlstate = services.DEADLOCK_SQLSTATE


def failing_once(monkeypatch, cause):
    real = services.lock_and_check_idle
    calls = []

    def lock(conversation):
        calls.append(conversation.pk)
        if len(calls) == 1:
            raise OperationalError("deadlock detected") from cause
        return real(conversation)

    monkeypatch.setattr(services, "lock_and_check_idle", lock)
    return calls


def test_a_deadlock_is_tried_again_and_stored_once(conversation, monkeypatch):
    """The first attempt is chosen as the deadlock's victim: the second stores the turn."""
    calls = failing_once(monkeypatch, Deadlock())
    start = services.turn_begin(conversation=conversation, text="hello", client_id="c1")
    assert len(calls) == 2
    assert start.user_message.content == "hello" and start.reply is not None
    assert Message.objects.filter(conversation=conversation).count() == 2


def test_another_operational_error_is_not_retried(conversation, monkeypatch):
    """Any other database error goes to the caller at once, nothing stored."""
    calls = failing_once(monkeypatch, ValueError("disk I/O error"))
    with pytest.raises(OperationalError):
        services.turn_begin(conversation=conversation, text="hello", client_id="c1")
    assert len(calls) == 1
    assert not Message.objects.filter(conversation=conversation).exists()
