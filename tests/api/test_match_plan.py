"""The history match of a /v1 request reads the user's own conversations, not every user's
messages: its cost before the first token does not grow with the whole table."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from api.conversations import conversation_matching
from api.wire import Turn
from chat.services import NewMessage, conversation_create, message_create_many

pytestmark = pytest.mark.django_db


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's query plan")
def test_the_match_walks_the_users_conversations_not_every_shown_message(alice, bob):
    history = [Turn("user", "Where was I?"), Turn("assistant", "In Lisbon.")]
    mine = conversation_create(user=alice)
    message_create_many(conversation=mine, messages=[NewMessage(t.role, t.text) for t in history])
    for n in range(3):
        other = conversation_create(user=bob)
        message_create_many(conversation=other, messages=[NewMessage("user", f"Bob {n}")])
    with CaptureQueriesContext(connection) as queries:
        assert conversation_matching(user=alice, history=history, temporary=False) == mine
    # The first looks for the digest a /v1 turn keeps (none here: the turns are compared).
    candidates = queries.captured_queries[1]["sql"]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {candidates}")
        plan = " / ".join(row[-1] for row in cursor.fetchall())
    assert "hidden_by" not in plan, plan  # that index holds every user's shown messages
    assert "chat_conversation_user_id" in plan, plan


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's query plan")
def test_the_digest_is_looked_up_by_its_index(alice):
    from api.conversations import conversation_remember

    history = [Turn("user", "Where was I?")]
    mine = conversation_create(user=alice)
    [question] = message_create_many(
        conversation=mine, messages=[NewMessage("user", "Where was I?")]
    )
    reply = message_create_many(
        conversation=mine, messages=[NewMessage("assistant", "In Lisbon.")]
    )[0]
    reply.reply_to = question
    conversation_remember(conversation=mine, history=[], question=question.content, reply=reply)
    sent_back = [*history, Turn("assistant", "In Lisbon.")]
    with CaptureQueriesContext(connection) as queries:
        assert conversation_matching(user=alice, history=sent_back, temporary=False) == mine
    [lookup] = queries.captured_queries
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {lookup['sql']}")
        plan = " / ".join(row[-1] for row in cursor.fetchall())
    assert "conv_api_digest (user_id=? AND api_digest=?)" in plan, plan
