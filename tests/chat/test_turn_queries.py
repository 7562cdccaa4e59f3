"""What a turn costs the database: the set-up before the model is called, the reply's store,
and the after-turn batch, counted statement by statement so that a regression shows."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from chat import turn
from chat.models import Conversation, Message
from chat.services import conversation_create

pytestmark = pytest.mark.django_db

# Before the model's request goes out, in one trip (issue 17 took the set-up from 20
# statements to 13; issue 36 stores first, so the busy and resend checks are made once):
# the store: the user's streaming replies (the busy check), the message (its unique
# client_id is the resend check), the conversation's activity, the reply's placeholder;
# where rows can be locked (PostgreSQL), the user's and the conversation's rows are locked
# first: two more. Then the context: the current summary, the newest history page, the
# recent replies' report totals (the token scale: read apart, since reading a total parses
# the whole report), the profile (memory switch and preferences); search: the user's index
# size, every term's row ids in one statement, the candidate rows (leaving out what the user
# forgot: the forget feature's own statement folded in), the hits' neighbours, the source
# titles; the pinned facts. The system prompt comes from the cache.
STORE_TURN_STATEMENTS = 4
CONTEXT_STATEMENTS = 10
# Storing the reply: the row (the conversation's activity moved to the after-turn batch).
STORE_STATEMENTS = 1
# After the reply, per batch (issue 17: from 6): the conversations' activity (one statement
# for the batch, where each reply's store made one), the users' profiles (the memory switch
# and the style learned from), the gaps since the previous replies (the pace, issue 41), one
# style update per user, the active summary runs, the tails; on SQLite, the search index's
# merge (memory.search.tidy).
AFTER_STATEMENTS = 6 + (connection.vendor == "sqlite")


def statements(queries) -> list[str]:
    """SQL statements, without the transaction's own (SAVEPOINT, BEGIN, COMMIT)."""
    return [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].lstrip("(").split()[0].upper() in ("SELECT", "INSERT", "UPDATE", "DELETE")
    ]


def one_turn(conversation, text, client_id):
    prepared = turn.prepare_turn(conversation=conversation, text=text, client_id=client_id)
    turn.reply._finish(
        reply=prepared.start.reply,
        content=f"About {text}: noted.",
        status=Message.Status.COMPLETE,
        prompt_tokens=120,
        completion_tokens=6,
        model=conversation.effective_model,
        context_report=prepared.built.report,
        system_prompt_version=prepared.built.report["system_prompt_version"],
    )
    turn.after.after_turns([(conversation, prepared.start.user_message)])
    return prepared


@pytest.fixture
def talked(alice):
    """Alice's conversation past its first few turns, and an earlier one that matches."""
    earlier = conversation_create(user=alice)
    one_turn(earlier, "the apple harvest in the orchard", "e1")
    conversation = conversation_create(user=alice)
    for i in range(4):
        one_turn(conversation, f"pears and plums, part {i}", f"c{i}")
    return conversation


def test_the_set_up_of_a_turn(talked):
    """Storing the message, then building the context (memory on, with search hits)."""
    text = "what about the apple harvest?"
    with CaptureQueriesContext(connection) as queries:
        prepared = turn.prepare_turn(conversation=talked, text=text, client_id="x")
    assert prepared.start.user_message.content == text and not prepared.start.replayed
    assert prepared.built.report["memories"], "the earlier conversation was recalled"
    assert prepared.built.report["token_scale"] is not None, "from the recent replies' reports"
    locks = 2 if connection.features.has_select_for_update else 0
    expected = STORE_TURN_STATEMENTS + locks + CONTEXT_STATEMENTS
    assert len(statements(queries)) == expected, statements(queries)
    sent = prepared.built.messages
    assert sent[-1] == {"role": "user", "content": text}, "the new message once, last"
    assert sum(m["content"] == text for m in sent) == 1


def test_a_resend_stores_nothing_and_builds_no_context(talked):
    """A resend (same client_id): the store's unique client_id refuses it, and what exists
    is returned: no context, no request."""
    first = turn.prepare_turn(conversation=talked, text="the plums", client_id="again")
    again = turn.prepare_turn(conversation=talked, text="the plums", client_id="again")
    assert again.start.replayed and again.built is None
    assert again.start.user_message.pk == first.start.user_message.pk
    assert Message.objects.filter(conversation=talked, client_id="again").count() == 1


def test_storing_the_reply(talked):
    prepared = turn.prepare_turn(conversation=talked, text="and the plums?", client_id="y")
    with CaptureQueriesContext(connection) as queries:
        turn.reply._finish(
            reply=prepared.start.reply, content="Ripe.", status=Message.Status.COMPLETE
        )
    assert len(statements(queries)) == STORE_STATEMENTS, statements(queries)


def test_the_after_turn_batch(talked, alice):
    """Two replies that ended together, one user: the batch's statements, style included."""
    other = conversation_create(user=alice)
    first = one_turn(talked, "a formal note, kind regards", "z1")
    second = one_turn(other, "hey lol gonna try that 😊", "z2")
    items = [(talked, first.start.user_message), (other, second.start.user_message)]
    stored = timezone.now()
    with CaptureQueriesContext(connection) as queries:
        turn.after.after_turns(items)
    assert len(statements(queries)) == AFTER_STATEMENTS, statements(queries)
    # The replies' conversations come first in the sidebar, as of the replies' end.
    touched = Conversation.objects.filter(pk__in=[talked.pk, other.pk], updated_at__gte=stored)
    assert touched.count() == 2


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's planner (PostgreSQL's costs)")
def test_the_resend_check_reads_one_index_entry(talked):
    """Asked for a resend: it must use the (conversation, client_id) index, not read the
    conversation's every message (the index is partial, which SQLite only uses when told)."""
    turn.prepare_turn(conversation=talked, text="and the plums?", client_id="z")
    with CaptureQueriesContext(connection) as queries:
        turn.prepare_turn(conversation=talked, text="and the plums?", client_id="z")
    check = next(q for q in statements(queries) if "client_id" in q and "SELECT 1" in q)
    assert "client_id" in check
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + check)
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    assert "msg_unique_client_id" in plan, plan


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's planner (PostgreSQL's costs)")
def test_the_busy_check_reads_only_unfinished_messages(talked):
    """Asked on every turn: it must read the index of messages not complete, not every
    message of every conversation the user has."""
    with CaptureQueriesContext(connection) as queries:
        turn.prepare_turn(conversation=talked, text="and the plums?", client_id="z")
    check = next(q for q in statements(queries) if "'streaming'" in q)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + check)
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    assert "msg_status" in plan, plan
