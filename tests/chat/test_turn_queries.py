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

# Before the model is called (issue 17 took it from 20 to 13): the user's streaming replies
# (the busy check), the message, the conversation's activity, the reply's placeholder; the
# current summary, the newest history page (which also gives the token scale), the profile
# (memory switch and preferences); search: the user's index size, every term's row ids in one
# statement, the candidate rows (leaving out what the user forgot: the forget feature's own
# statement folded in, 14 -> 13), the hits' neighbours, the source titles; the pinned facts.
# The system prompt comes from the cache. Where rows can be locked (PostgreSQL), the user's and
# the conversation's rows are locked first: two more.
SETUP_STATEMENTS = 13
# Storing the reply: the row (the conversation's activity moved to the after-turn batch).
STORE_STATEMENTS = 1
# After the reply, per batch (issue 17: from 6): the conversations' activity (one statement
# for the batch, where each reply's store made one), the users' profiles (the memory switch
# and the style learned from), one style update per user, the active summary runs, the tails.
AFTER_STATEMENTS = 5


def statements(queries) -> list[str]:
    """SQL statements, without the transaction's own (SAVEPOINT, BEGIN, COMMIT)."""
    return [
        q["sql"]
        for q in queries.captured_queries
        if q["sql"].lstrip("(").split()[0].upper() in ("SELECT", "INSERT", "UPDATE", "DELETE")
    ]


def one_turn(conversation, text, client_id):
    prepared = turn.prepare_turn(conversation=conversation, text=text, client_id=client_id)
    turn._finish(
        reply=prepared.start.reply,
        content=f"About {text}: noted.",
        status=Message.Status.COMPLETE,
        prompt_tokens=120,
        completion_tokens=6,
        model=conversation.effective_model,
        context_report=prepared.built.report,
        system_prompt_version=prepared.built.report["system_prompt_version"],
    )
    turn._after_turns([(conversation, prepared.start.user_message)])
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
    """Storing the message and building the context, memory on, with search hits."""
    with CaptureQueriesContext(connection) as queries:
        prepared = turn.prepare_turn(
            conversation=talked, text="what about the apple harvest?", client_id="x"
        )
    assert prepared.built.report["memories"], "the earlier conversation was recalled"
    assert prepared.built.report["token_scale"] is not None, "read with the history page"
    locks = 2 if connection.features.has_select_for_update else 0
    assert len(statements(queries)) == SETUP_STATEMENTS + locks, statements(queries)


def test_storing_the_reply(talked):
    prepared = turn.prepare_turn(conversation=talked, text="and the plums?", client_id="y")
    with CaptureQueriesContext(connection) as queries:
        turn._finish(reply=prepared.start.reply, content="Ripe.", status=Message.Status.COMPLETE)
    assert len(statements(queries)) == STORE_STATEMENTS, statements(queries)


def test_the_after_turn_batch(talked, alice):
    """Two replies that ended together, one user: the batch's statements, style included."""
    other = conversation_create(user=alice)
    first = one_turn(talked, "a formal note, kind regards", "z1")
    second = one_turn(other, "hey lol gonna try that 😊", "z2")
    items = [(talked, first.start.user_message), (other, second.start.user_message)]
    stored = timezone.now()
    with CaptureQueriesContext(connection) as queries:
        turn._after_turns(items)
    assert len(statements(queries)) == AFTER_STATEMENTS, statements(queries)
    # The replies' conversations come first in the sidebar, as of the replies' end.
    touched = Conversation.objects.filter(pk__in=[talked.pk, other.pk], updated_at__gte=stored)
    assert touched.count() == 2
