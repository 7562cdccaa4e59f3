"""Share and export: a read-only copy for anyone with the link (nothing of the memory, the
report or another conversation), revocable (then 404), listed on the profile; downloads as
Markdown and JSON for the owner only."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from chat.models import ConversationShare
from chat.services import conversation_create, message_create
from memory.models import Fact

pytestmark = pytest.mark.django_db


@pytest.fixture
def chat(alice):
    conversation = conversation_create(user=alice, title="Trip <plans>")
    question = message_create(conversation=conversation, role="user", content="Where <b>to</b>?")
    message_create(
        conversation=conversation,
        role="assistant",
        content="**Lyon**, then:\n\n```python\nif go:\n    ride()\n```",
        reply_to=question,
        context_report={"total_tokens": 12, "memories": [{"kind": "fact", "text": "SECRET"}]},
    )
    Fact.objects.create(user=alice, conversation=conversation, text="Alice fears SECRET heights")
    other = conversation_create(user=alice, title="Other private chat")
    message_create(conversation=other, role="user", content="private words")
    return conversation


def _share(client, conversation) -> str:
    response = client.post(reverse("chat:share", args=[conversation.pk]))
    assert response.status_code == 302
    return ConversationShare.objects.get(conversation=conversation).get_absolute_url()


def test_a_shared_link_shows_a_read_only_copy_signed_out(alice_client, chat):
    url = _share(alice_client, chat)
    assert len(url.split("/")[2]) >= 32  # the token: 192 random bits
    response = Client().get(url)
    page = response.content.decode()
    assert response.status_code == 200
    assert "Trip &lt;plans&gt;" in page and "Where &lt;b&gt;to&lt;/b&gt;?" in page
    assert "<strong>Lyon</strong>" in page and "    ride()" in page.replace("</span>", "")
    assert "SECRET" not in page and "Other private chat" not in page and "private words" not in page
    assert "<form" not in page.split("<main>")[1] and "composer" not in page
    assert response["X-Robots-Tag"] == "noindex, nofollow"
    assert "no-cache" in response["Cache-Control"] or "max-age=0" in response["Cache-Control"]


def test_a_copy_holds_the_messages_of_when_it_was_shared(alice_client, chat):
    url = _share(alice_client, chat)
    message_create(conversation=chat, role="user", content="a later question")
    assert "a later question" not in Client().get(url).content.decode()
    assert _share(alice_client, chat) == url  # updating keeps the link
    assert "a later question" in Client().get(url).content.decode()


def test_a_revoked_link_is_a_404(alice_client, chat):
    url = _share(alice_client, chat)
    response = alice_client.post(reverse("chat:share_revoke", args=[chat.pk]))
    assert response.status_code == 302
    assert Client().get(url).status_code == 404
    assert Client().get("/s/not-a-token/").status_code == 404


def test_the_profile_lists_shares_and_stops_them(alice_client, chat):
    url = _share(alice_client, chat)
    page = alice_client.get(reverse("profiles:profile")).content.decode()
    assert f'href="{url}"' in page and "Stop sharing" in page
    response = alice_client.post(reverse("chat:share_revoke", args=[chat.pk]), {"back": "profile"})
    assert response["Location"] == "/profile/#your-data"
    page = alice_client.get(reverse("profiles:profile")).content.decode()
    assert "no conversation is shared" in page


def test_nobody_else_shares_revokes_or_exports(client, bob, alice_client, chat):
    url = _share(alice_client, chat)
    client.force_login(bob)
    assert client.post(reverse("chat:share", args=[chat.pk])).status_code == 404
    assert client.get(reverse("chat:share", args=[chat.pk])).status_code == 404
    assert client.post(reverse("chat:share_revoke", args=[chat.pk])).status_code == 404
    assert Client().get(url).status_code == 200  # still shared
    for fmt in ("markdown", "json"):
        assert client.get(reverse("chat:export", args=[chat.pk, fmt])).status_code == 404
    page = client.get(reverse("profiles:profile")).content.decode()
    assert "Trip &lt;plans&gt;" not in page and "no conversation is shared" in page


def test_markdown_export(alice_client, chat):
    response = alice_client.get(reverse("chat:export", args=[chat.pk, "markdown"]))
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="memorychat-Trip-plans.md"'
    text = response.content.decode()
    assert text.startswith("# Trip <plans>\n")
    assert "## You · " in text and "Where <b>to</b>?" in text
    assert "## Assistant · " in text and "```python\nif go:\n    ride()\n```" in text
    assert "SECRET" not in text and "private words" not in text


def test_json_export(alice_client, chat):
    response = alice_client.get(reverse("chat:export", args=[chat.pk, "json"]))
    document = json.loads(response.content)
    assert document["format"] == "memorychat-conversation" and document["title"] == "Trip <plans>"
    assert [m["role"] for m in document["messages"]] == ["user", "assistant"]
    assert document["messages"][0]["content"] == "Where <b>to</b>?"
    assert "SECRET" not in response.content.decode()
    assert alice_client.get(reverse("chat:export", args=[chat.pk, "pdf"])).status_code == 404


def test_deleting_the_conversation_ends_the_share(alice_client, chat):
    url = _share(alice_client, chat)
    chat.delete()
    assert Client().get(url).status_code == 404
