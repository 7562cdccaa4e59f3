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

# Before the model's request goes out (issue 17 took the set-up from 20 statements to 13,
# then moved the store after the request): whether the message is a resend, whether a reply
# still streams (the busy check, read again by the store under its locks), the current
# summary, the newest history page, the recent replies' report totals (the token scale: read
# apart, since reading a total parses the whole report), the profile (memory switch and
# preferences); search: the user's index size, every term's row ids in one
# statement, the candidate rows (leaving out what the user forgot: the forget feature's own
# statement folded in), the hits' neighbours, the source titles; the pinned facts. The system
# prompt comes from the cache.
BEFORE_REQUEST_STATEMENTS = 12
# While the request waits for its first token: the user's streaming replies (the busy check),
# the message, the conversation's activity, the reply's placeholder. Where rows can be locked
# (PostgreSQL), the user's and the conversation's rows are locked first: two more.
STORE_TURN_STATEMENTS = 4
# Storing the reply: the row (the conversation's activity moved to the after-turn batch).
STORE_STATEMENTS = 1
# After the reply, per batch (issue 17: from 6): the conversations' activity (one statement
# for the batch, where each reply's store made one), the users' profiles (the memory switch
# and the style learned from), one style update per user, the active summary runs, the tails;
# on SQLite, the search index's merge (memory.search.tidy).
AFTER_STATEMENTS = 5 + (connection.vendor == "sqlite")


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
    """Building the context (memory on, with search hits), then storing the message."""
    text = "what about the apple harvest?"
    with CaptureQueriesContext(connection) as queries:
        draft = turn.prepare_context(conversation=talked, text=text, client_id="x")
    assert draft.start is None, "nothing stored before the request goes out"
    assert draft.built.report["memories"], "the earlier conversation was recalled"
    assert draft.built.report["token_scale"] is not None, "from the recent replies' reports"
    assert len(statements(queries)) == BEFORE_REQUEST_STATEMENTS, statements(queries)

    with CaptureQueriesContext(connection) as queries:
        prepared = turn.store_turn(conversation=talked, text=text, client_id="x", built=draft.built)
    assert prepared.start.user_message.content == text and prepared.built is draft.built
    locks = 2 if connection.features.has_select_for_update else 0
    assert len(statements(queries)) == STORE_TURN_STATEMENTS + locks, statements(queries)


def test_a_resend_is_known_before_any_request(talked):
    """A resend (same client_id) is known from the first statement: no context, no request."""
    turn.prepare_turn(conversation=talked, text="the plums", client_id="again")
    with CaptureQueriesContext(connection) as queries:
        draft = turn.prepare_context(conversation=talked, text="the plums", client_id="again")
    assert draft.start.replayed and draft.built is None
    assert len(statements(queries)) == 3, statements(queries)  # the check, the message, its reply


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
    """Asked before every turn: it must use the (conversation, client_id) index, not read the
    conversation's every message (the index is partial, which SQLite only uses when told)."""
    with CaptureQueriesContext(connection) as queries:
        turn.prepare_context(conversation=talked, text="and the plums?", client_id="z")
    check = statements(queries)[0]
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
        turn.prepare_context(conversation=talked, text="and the plums?", client_id="z")
    check = next(q for q in statements(queries) if "'streaming'" in q)
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN QUERY PLAN " + check)
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    assert "msg_status" in plan, plan
