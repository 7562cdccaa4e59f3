"""How a stored reply's state reads on the pages: Continue for a cut reply, no Retry for a
refused request, the model server's own words for staff only."""

import pytest
from django.urls import reverse

from chat.services import message_create, reply_finish

pytestmark = pytest.mark.django_db


def a_reply(conversation, **fields):
    question = message_create(conversation=conversation, role="user", content="Tell me more")
    reply = message_create(
        conversation=conversation,
        role="assistant",
        content="",
        status="streaming",
        reply_to=question,
    )
    return reply_finish(reply=reply, **fields)


def test_a_cut_reply_offers_continue_and_retry(alice_client, conversation):
    reply = a_reply(
        conversation,
        content="The first part",
        status="truncated",
        error="The reply reached its length limit (1,024 tokens). Continue asks for the rest.",
    )
    html = alice_client.get(conversation.get_absolute_url()).content.decode()
    assert "Cut short: The reply reached its length limit" in html
    assert f'data-continue="{reply.pk}"' in html and 'data-retry="' in html


def test_a_refused_request_offers_no_retry_and_hides_the_servers_body(alice_client, conversation):
    a_reply(
        conversation,
        content="",
        status="failed",
        error="The model server refused the request (HTTP 400): Conversation roles must alternate",
        error_kind="refused",
        upstream_detail='HTTP 400 from http://llm/v1/chat/completions: {"error": "secret-ish"}',
    )
    html = alice_client.get(conversation.get_absolute_url()).content.decode()
    assert "refused the request (HTTP 400): Conversation roles must alternate" in html
    assert "data-retry" not in html and "data-continue" not in html
    assert "secret-ish" not in html


def test_staff_see_what_the_model_server_said(client, staff, alice, conversation):
    a_reply(
        conversation,
        content="",
        status="failed",
        error="The model server failed (HTTP 500). Try again.",
        error_kind="server_error",
        upstream_detail="HTTP 500 from http://llm/v1/chat/completions: out of memory",
    )
    client.force_login(staff)
    html = client.get(reverse("staff:conversation", args=[conversation.pk])).content.decode()
    assert "What the model server said" in html and "out of memory" in html
