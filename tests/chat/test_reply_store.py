"""What the page is told when a reply cannot be stored, and what a failed retry keeps."""

import time

import pytest
from asgiref.sync import sync_to_async
from django.db import DatabaseError, OperationalError

from chat import services
from chat.models import Message
from chat.services import message_create
from tests.chat.helpers import connected, frames_until, turn_end

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_reply_that_cannot_be_stored_says_so(aconversation, alice, fake_llm, monkeypatch):
    """A database error no retry can help (not a lock, not a lost connection) at the reply's
    end: reply_end is not "complete", and says why."""
    fake_llm.behaviour.reply = "A reply the database never sees."

    def unavailable(**fields):
        raise DatabaseError("value too long for type character varying(20)")

    monkeypatch.setattr(services, "reply_finish", unavailable)
    socket = await connected(alice, aconversation.pk)
    end = await turn_end(socket, "Hello")
    await socket.disconnect()
    assert end["status"] == "interrupted" and end["saved"] is False
    assert "could not be saved" in end["error"]
    assert "never sees" in end["html"]  # the text is still shown


async def test_a_reply_ending_while_the_database_is_busy_lands_once_it_is_free(
    aconversation, alice, fake_llm, monkeypatch
):
    """The database is locked (a staff import, say) for longer than the store used to wait
    (STORE_RETRY_SECONDS, monkeypatched short here as main had it): the store is retried until
    it lands, the reply is saved whole (issue 40, low 8)."""
    fake_llm.behaviour.reply = "A reply that waits for the lock."
    real = services.reply_finish
    busy_until = []

    def busy(**fields):
        if not busy_until:
            busy_until.append(time.monotonic() + 1.5)
        if time.monotonic() < busy_until[0]:
            raise OperationalError("database is locked")
        return real(**fields)

    monkeypatch.setattr(services, "reply_finish", busy)
    socket = await connected(alice, aconversation.pk)
    await socket.send_json_to({"type": "send", "text": "Hello"})
    end = (await frames_until(socket, "reply_end", timeout=20))[-1]
    await socket.disconnect()
    assert end["status"] == "complete" and end["saved"] is True
    stored = await Message.objects.aget(pk=end["id"])
    assert stored.content == "A reply that waits for the lock." and stored.status == "complete"


async def test_a_stored_reply_says_it_was_saved(aconversation, alice, fake_llm):
    """The normal case: saved is true."""
    socket = await connected(alice, aconversation.pk)
    end = await turn_end(socket, "Hello")
    await socket.disconnect()
    assert end["status"] == "complete" and end["saved"] is True


@sync_to_async
def _interrupted_turn(conversation):
    question = message_create(conversation=conversation, role="user", content="Tell me more")
    reply = message_create(
        conversation=conversation,
        role="assistant",
        content="The earlier partial text",
        status=Message.Status.INTERRUPTED,
        reply_to=question,
    )
    return question, reply


async def test_a_failed_retry_keeps_the_earlier_partial_text(aconversation, alice, fake_llm):
    """Retry of an interrupted reply that fails before any text: the old text stays."""
    question, reply = await _interrupted_turn(aconversation)
    fake_llm.behaviour.fail_status = 500
    fake_llm.behaviour.fail_times = 10
    socket = await connected(alice, aconversation.pk)
    await socket.send_json_to({"type": "retry", "message_id": question.pk})
    end = (await frames_until(socket, "reply_end"))[-1]
    await socket.disconnect()
    assert end["id"] == reply.pk and end["status"] == "interrupted"
    assert "earlier partial text" in end["html"] and "HTTP 500" in end["error"]
    stored = await Message.objects.aget(pk=reply.pk)
    assert (stored.content, stored.status) == ("The earlier partial text", "interrupted")


async def test_a_retry_that_writes_text_replaces_the_earlier_text(aconversation, alice, fake_llm):
    """A retry that succeeds stores its own text, not the old one."""
    question, reply = await _interrupted_turn(aconversation)
    fake_llm.behaviour.reply = "A fresh answer."
    socket = await connected(alice, aconversation.pk)
    await socket.send_json_to({"type": "retry", "message_id": question.pk})
    end = (await frames_until(socket, "reply_end"))[-1]
    await socket.disconnect()
    stored = await Message.objects.aget(pk=reply.pk)
    assert (stored.content, stored.status, end["status"]) == (
        "A fresh answer.",
        "complete",
        "complete",
    )


def test_a_finished_reply_is_stored_whole_and_a_vanished_one_is_an_error(conversation):
    """Every field the end of a stream writes reads back; a reply whose row is gone (its
    conversation deleted meanwhile) raises DatabaseError, as the ORM's save did, so the turn
    says it could not be stored instead of calling it complete."""
    question = message_create(conversation=conversation, role="user", content="Hi")
    reply = message_create(
        conversation=conversation,
        role="assistant",
        content="",
        status="streaming",
        reply_to=question,
    )
    before = conversation.updated_at
    services.reply_finish(
        reply=reply,
        content="Hello there.",
        status="truncated",
        error="cut",
        error_kind="length",
        prompt_tokens=12,
        completion_tokens=3,
        time_to_first_token=0.25,
        duration=1.5,
        model="gpt-4o",
        context_report={"total_tokens": 15},
        system_prompt_version=2,
    )
    stored = Message.objects.get(pk=reply.pk)
    assert (stored.content, stored.status, stored.error, stored.error_kind) == (
        "Hello there.",
        "truncated",
        "cut",
        "length",
    )
    assert (stored.prompt_tokens, stored.completion_tokens, stored.token_count) == (12, 3, 3)
    assert (stored.time_to_first_token, stored.duration, stored.model) == (0.25, 1.5, "gpt-4o")
    assert stored.context_report == {"total_tokens": 15} and stored.system_prompt_version == 2
    assert stored.lease_expires_at is None
    conversation.refresh_from_db()
    assert conversation.updated_at > before  # touch=True (the default) marks it active

    Message.objects.filter(pk=reply.pk).delete()
    with pytest.raises(DatabaseError, match="did not affect any rows"):
        services.reply_finish(reply=reply, content="Late.", status="complete")
