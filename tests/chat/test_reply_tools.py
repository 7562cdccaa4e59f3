"""A reply's tools: Retry and Regenerate are never offered side by side for the same reply."""

import pytest

from chat.models import Message
from chat.services import conversation_create, message_create

pytestmark = pytest.mark.django_db


def _page_with_last_reply(client, user, status, error_kind=""):
    conversation = conversation_create(user=user)
    question = message_create(conversation=conversation, role="user", content="Hello")
    reply = message_create(
        conversation=conversation,
        role="assistant",
        content="Partial" if status != Message.Status.FAILED else "",
        status=status,
        reply_to=question,
    )
    if error_kind:
        Message.objects.filter(pk=reply.pk).update(error="Refused.", error_kind=error_kind)
    return client.get(conversation.get_absolute_url()).content.decode()


@pytest.mark.parametrize("status", [Message.Status.FAILED, Message.Status.INTERRUPTED])
def test_a_reply_that_offers_retry_offers_no_regenerate(alice_client, alice, status):
    page = _page_with_last_reply(alice_client, alice, status)
    assert "data-retry=" in page and "data-regenerate=" not in page


def test_a_complete_reply_offers_regenerate_and_no_retry(alice_client, alice):
    page = _page_with_last_reply(alice_client, alice, Message.Status.COMPLETE)
    assert "data-regenerate=" in page and "data-retry=" not in page


def test_a_refused_reply_has_no_retry_so_it_keeps_regenerate(alice_client, alice):
    page = _page_with_last_reply(alice_client, alice, Message.Status.FAILED, "refused")
    assert "data-retry=" not in page and "data-regenerate=" in page
