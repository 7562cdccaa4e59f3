"""A continued /v1 conversation is found by the digest of the thread its last /v1 turn left,
in one query of the user's conversations; whenever the thread changed since (a message
stored, a question edited, a reply answered again, a branch switched), the turns are
compared as before, so what is continued is what the comparison alone would continue."""

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

from api.conversations import conversation_matching, conversation_remember, thread_digest
from api.wire import Turn
from chat import branches
from chat.models import Conversation, Message
from chat.services import (
    NewMessage,
    conversation_create,
    message_create,
    message_create_many,
    reply_finish,
    turn_edit,
    turn_regenerate,
)
from tests.api.conftest import client, rows

HISTORY = [
    Turn("user", "Where is the spare key?"),
    Turn("assistant", "Under the blue pot."),
    Turn("user", "And the ladder?"),
]
REPLY = "In the shed, behind the bikes."
SENT_BACK = [*HISTORY, Turn("assistant", REPLY)]  # what the client sends next, before its message


def answered(user, *, temporary=False, project=None) -> Conversation:
    """A conversation as a /v1 turn leaves it: HISTORY stored, REPLY to its last question."""
    conversation = conversation_create(user=user, temporary=temporary, project=project)
    stored = message_create_many(
        conversation=conversation, messages=[NewMessage(t.role, t.text) for t in HISTORY]
    )
    reply = message_create(
        conversation=conversation, role="assistant", content=REPLY, reply_to=stored[-1]
    )
    conversation_remember(
        conversation=conversation, history=HISTORY[:-1], question=HISTORY[-1].text, reply=reply
    )
    return conversation


def match(user, history=SENT_BACK, **kwargs):
    with CaptureQueriesContext(connection) as queries:
        found = conversation_matching(user=user, history=history, temporary=False, **kwargs)
    return found, len(queries.captured_queries)


@pytest.mark.django_db
def test_a_continued_conversation_is_found_in_one_query(alice):
    mine = answered(alice)
    mine.refresh_from_db()
    assert mine.api_digest == thread_digest(SENT_BACK)
    assert match(alice) == (mine, 1)
    # The client's whitespace around a turn does not matter, as in the comparison.
    spaced = [Turn(t.role, f" {t.text}\n") for t in SENT_BACK]
    assert match(alice, spaced) == (mine, 1)


@pytest.mark.django_db
def test_a_message_stored_since_falls_back_to_the_comparison(alice):
    mine = answered(alice)
    message_create(conversation=mine, role="user", content="Asked in the web page")
    found, queries = match(alice)
    assert found is None and queries > 1  # the thread holds one more turn than the client's
    longer = [*SENT_BACK, Turn("user", "Asked in the web page")]
    assert match(alice, longer)[0] == mine  # compared: continued, as before


@pytest.mark.django_db
def test_a_question_edited_in_the_web_page_is_not_continued_from_the_old_thread(alice):
    mine = answered(alice)
    question = Message.objects.get(conversation=mine, content="And the ladder?")
    start = turn_edit(conversation=mine, user_message_id=question.pk, text="And the rake?")
    assert match(alice)[0] is None  # while its new reply streams
    reply_finish(reply=start.reply, content="Also in the shed.", status="complete")
    assert match(alice)[0] is None
    edited = [*HISTORY[:-1], Turn("user", "And the rake?"), Turn("assistant", "Also in the shed.")]
    assert match(alice, edited)[0] == mine


@pytest.mark.django_db
def test_a_reply_answered_again_is_not_continued_from_the_old_reply(alice):
    mine = answered(alice)
    question = Message.objects.get(conversation=mine, content="And the ladder?")
    start = turn_regenerate(conversation=mine, user_message_id=question.pk)
    assert match(alice)[0] is None  # while it streams
    reply_finish(reply=start.reply, content="It was lent to Ana.", status="complete")
    assert match(alice)[0] is None


@pytest.mark.django_db
def test_a_branch_switched_away_and_back(alice):
    mine = answered(alice)
    first = Message.objects.get(conversation=mine, content="Where is the spare key?")
    start = turn_edit(conversation=mine, user_message_id=first.pk, text="Where is the car key?")
    reply_finish(reply=start.reply, content="On the hook.", status="complete")
    assert match(alice)[0] is None  # the old branch is hidden
    branches.branch_switch(conversation=mine, message_id=first.pk)
    assert match(alice)[0] == mine  # shown again, as the comparison finds it


@pytest.mark.django_db
def test_another_users_identical_thread_is_never_continued(alice, bob):
    answered(bob)
    assert match(alice)[0] is None
    mine = answered(alice)
    assert match(alice)[0] == mine and match(bob)[0] != mine


@pytest.mark.django_db
def test_temporary_and_project_conversations_are_found_only_as_asked(alice):
    from projects.services import project_create

    temporary = answered(alice, temporary=True)
    assert match(alice)[0] is None
    found = conversation_matching(user=alice, history=SENT_BACK, temporary=True)
    assert found == temporary
    garden = project_create(user=alice, name="Garden")
    in_garden = answered(alice, project=garden)
    assert match(alice)[0] is None
    assert match(alice, project=garden) == (in_garden, 1)


@pytest.mark.django_db(transaction=True)
async def test_each_v1_reply_leaves_the_digest_of_what_the_client_holds(alice, alice_key, fake_llm):
    api = client(alice_key)
    model = settings.OPENAI_MODEL
    held = [{"role": "user", "content": "Count to three"}]
    stream = await api.chat.completions.create(model=model, messages=held, stream=True)
    text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    held += [{"role": "assistant", "content": text}, {"role": "user", "content": "Again"}]
    answer = await api.chat.completions.create(model=model, messages=held)
    held.append({"role": "assistant", "content": answer.choices[0].message.content})
    [conversation] = await rows(Conversation, user=alice)
    assert conversation.api_digest == thread_digest([Turn(m["role"], m["content"]) for m in held])


@pytest.mark.django_db(transaction=True)
def test_the_digest_migration_applies_under_the_memory_index_triggers(alice):
    """SQLite adds the columns in place: a remade conversations table would fail under (or
    drop) the memory index's triggers that name it."""
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    executor.migrate([("chat", "0011_message_branch_title")])
    MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes())
    assert match(alice)[0] is None
    mine = answered(alice)
    assert match(alice) == (mine, 1)
