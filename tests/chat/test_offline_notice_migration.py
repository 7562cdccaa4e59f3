"""Offline replies stored before the page's offline banner began with a paragraph saying they
were offline; the banner says it once now, and chat's migration 0010 takes the paragraph out
of the replies already stored (and their earlier versions), counting their tokens again."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

from chat.models import Message, ReplyVersion
from chat.services import conversation_create, message_create
from contextwindow.tokens import count_tokens

BEFORE = [("chat", "0009_temporary_outside_projects")]
AFTER = [("chat", "0010_offline_replies_without_notice")]
OLD_NOTICE = (
    "*Offline reply: no language model is configured (`OPENAI_API_KEY` is not set), so this "
    "answer is assembled from what memorychat remembers, not generated.*"
)
BODY = "I have nothing stored yet that relates to this.\n\nYou said: “Hello”"


@pytest.mark.django_db(transaction=True)
def test_stored_offline_replies_lose_the_old_paragraph(alice, client, settings):
    conversation = conversation_create(user=alice, title="Hello")
    message_create(conversation=conversation, role="user", content="Hello")
    old = f"{OLD_NOTICE}\n\n{BODY}"
    offline = Message.objects.create(
        conversation=conversation, role="assistant", content=old, model="offline", token_count=99
    )
    ReplyVersion.objects.create(
        reply=offline,
        number=1,
        content=old,
        status="complete",
        model="offline",
        created_at=timezone.now(),
    )
    # A model's reply that quotes the paragraph is the model's: it stays as written.
    quoted = Message.objects.create(
        conversation=conversation, role="assistant", content=old, model="gpt-4o"
    )
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    try:
        executor = MigrationExecutor(connection)
        executor.migrate(AFTER)
    finally:
        MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes())

    offline.refresh_from_db()
    assert offline.content == BODY
    assert offline.token_count == count_tokens(BODY, settings.OPENAI_MODEL)
    assert ReplyVersion.objects.get(reply=offline).content == BODY
    assert Message.objects.get(pk=quoted.pk).content == old
    client.force_login(alice)
    page = client.get(conversation.get_absolute_url()).text
    article = page[page.index(f'id="m{offline.pk}"') :]
    article = article[: article.index("</article>")]
    assert "You said" in article and "Offline reply" not in article
