"""A reply's "What the model saw": the chat page carries only its summary; the body comes from
chat:context_report when opened (HTMX) or as a page (no JS), for the owner only."""

import pytest
from django.urls import reverse

from chat.models import ReplyVersion
from chat.services import conversation_create, message_create, reply_finish

pytestmark = pytest.mark.django_db

REPORT = {
    "total_tokens": 120,
    "limit": 4000,
    "budget": 3000,
    "reserve": 500,
    "model": "m",
    "strategy": "token_limit",
    "blocks": [{"name": "message", "tokens": 7, "detail": ""}],
    "memories": [],
    "messages": [],
    "messages_left_out": {"count": 0, "reason": ""},
}


@pytest.fixture
def reply(alice):
    conversation = conversation_create(user=alice, title="Plans")
    question = message_create(conversation=conversation, role="user", content="hello")
    answer = message_create(
        conversation=conversation,
        role="assistant",
        content="",
        status="streaming",
        reply_to=question,
    )
    reply_finish(reply=answer, content="Hi.", status="complete", context_report=REPORT)
    return answer


def report_url(message, **query):
    url = reverse("chat:context_report", args=[message.conversation_id, message.pk])
    return url + "".join(f"?{k}={v}" for k, v in query.items())


def test_the_page_carries_the_summary_not_the_report(client, alice, reply):
    client.force_login(alice)
    html = client.get(reply.conversation.get_absolute_url()).text
    assert "What the model saw" in html and f'data-report-url="{report_url(reply)}"' in html
    assert f'<a href="{report_url(reply)}">' in html
    assert "120 of 4,000 tokens" not in html


def test_alice_gets_her_report_as_a_fragment_and_as_a_page(client, alice, reply):
    client.force_login(alice)
    fragment = client.get(report_url(reply), headers={"HX-Request": "true"})
    assert fragment.status_code == 200 and "120 of 4,000 tokens" in fragment.text
    assert "Your message" in fragment.text and "<html" not in fragment.text
    page = client.get(report_url(reply))
    assert page.status_code == 200 and "<html" in page.text
    assert "120 of 4,000 tokens" in page.text and "Back to “Plans”" in page.text


def test_bob_gets_404(client, bob, reply):
    client.force_login(bob)
    assert client.get(report_url(reply)).status_code == 404
    assert client.get(report_url(reply), headers={"HX-Request": "true"}).status_code == 404


def test_a_message_without_a_report_is_404(client, alice, reply):
    client.force_login(alice)
    question = reply.reply_to
    assert client.get(report_url(question)).status_code == 404  # a user message
    reply.context_report = None
    reply.save(update_fields=["context_report"])
    assert client.get(report_url(reply)).status_code == 404
    assert client.get(report_url(reply, version="x")).status_code == 404


def test_an_earlier_version_has_its_own_report(client, alice, reply):
    ReplyVersion.objects.create(
        reply=reply,
        number=1,
        content="Old.",
        status="complete",
        model="m",
        context_report={**REPORT, "total_tokens": 99},
        created_at=reply.created_at,
        question="hello",
    )
    client.force_login(alice)
    old = client.get(report_url(reply, version=1), headers={"HX-Request": "true"})
    assert old.status_code == 200 and "99 of 4,000 tokens" in old.text
    assert client.get(report_url(reply, version=3)).status_code == 404
    shown = client.get(reverse("chat:reply_version", args=[reply.conversation_id, reply.pk, 1]))
    assert report_url(reply, version=1) in shown.text


@pytest.mark.parametrize(
    "bad",
    [
        {"blocks": "system", "total_tokens": 3},
        {"memories": [{"text": 5, "message_ids": "1,2"}]},
        {"messages_left_out": {"count": "many"}, "total_tokens": [1]},
        {"summary": {"text": {"nested": True}}, "limit": "4000"},
    ],
)
def test_a_report_of_the_wrong_shape_is_shown_as_absent_never_a_500(
    client, alice, staff, reply, bad
):
    """A stored report that is not a ContextReport (an imported record, a bug) leaves every
    page that reads it answering (issue 40, low 4)."""
    type(reply).objects.filter(pk=reply.pk).update(context_report=bad)
    client.force_login(alice)
    assert client.get(reply.conversation.get_absolute_url()).status_code == 200
    assert client.get(report_url(reply)).status_code in (200, 404)
    assert client.get(report_url(reply), headers={"HX-Request": "true"}).status_code in (200, 404)
    client.force_login(staff)
    staff_page = reverse("staff:conversation", args=[reply.conversation_id])
    assert client.get(staff_page).status_code == 200
