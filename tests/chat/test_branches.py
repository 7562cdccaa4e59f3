"""Branches: an earlier question edited starts a new branch from there; "1 / 2" on the
question switches it and everything after it; the page, the context, the summary and the
memory index follow the branch shown. On the real database (SQLite and PostgreSQL)."""

import json

import pytest
from django.db import connection

from chat import branches, services
from chat.models import Message
from chat.selectors import message_page
from chat.services import ChatError, reply_finish, turn_begin, turn_edit
from memory import context
from memory.models import Summary
from memory.search import search


def exchange(conversation, question: str, answer: str) -> tuple[Message, Message]:
    start = turn_begin(conversation=conversation, text=question)
    reply = reply_finish(reply=start.reply, content=answer, status=Message.Status.COMPLETE)
    return start.user_message, reply


def three_exchanges(conversation):
    return [
        exchange(conversation, "Plan a trip to Lisbon", "Lisbon in spring is lovely."),
        exchange(conversation, "What about trams there?", "Tram 28 crosses the old town."),
        exchange(conversation, "And pastries?", "Try pastel de nata in Belem."),
    ]


THREE_EXCHANGES_SHOWN = [  # three_exchanges' messages, in the page's order
    "Plan a trip to Lisbon",
    "Lisbon in spring is lovely.",
    "What about trams there?",
    "Tram 28 crosses the old town.",
    "And pastries?",
    "Try pastel de nata in Belem.",
]


def shown(conversation) -> list[str]:
    rows, _ = message_page(conversation=conversation)
    return [m.content for m in rows]


def edit(conversation, question: Message, text: str, answer: str) -> tuple[Message, Message]:
    start = turn_edit(conversation=conversation, user_message_id=question.pk, text=text)
    reply = reply_finish(reply=start.reply, content=answer, status=Message.Status.COMPLETE)
    return start.user_message, reply


def indexed_message_ids(user) -> set[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT object_id FROM memory_search WHERE kind = 'message' AND user_id = %s",
            [user.pk],
        )
        return {int(row[0]) for row in cursor.fetchall()}


@pytest.mark.django_db
def test_editing_the_first_question_starts_a_branch_and_hides_what_followed(conversation):
    exchanges = three_exchanges(conversation)
    first = exchanges[0][0]

    start = turn_edit(
        conversation=conversation, user_message_id=first.pk, text="Plan a trip to Porto"
    )

    assert start.branched_from == first.pk
    assert start.user_message.branch_of_id == first.pk and start.reply.status == "streaming"
    old = [m for pair in exchanges for m in pair]
    assert all(
        m.hidden_by_id == first.pk for m in Message.objects.filter(pk__in=[m.pk for m in old])
    )
    rows, _ = message_page(conversation=conversation)
    assert [m.content for m in rows] == ["Plan a trip to Porto", ""]
    question = rows[0]
    assert (question.branch_number, question.branch_count) == (2, 2)
    assert (question.branch_previous, question.branch_next) == (first.pk, None)


@pytest.mark.django_db
def test_switching_shows_the_question_and_everything_after_it_together(conversation):
    first = three_exchanges(conversation)[0][0]
    porto, _ = edit(conversation, first, "Plan a trip to Porto", "Porto has port wine.")

    switched = branches.branch_switch(conversation=conversation, message_id=first.pk)

    assert switched.hidden_id == porto.pk
    assert shown(conversation) == THREE_EXCHANGES_SHOWN
    rows, _ = message_page(conversation=conversation)
    assert (rows[0].branch_number, rows[0].branch_count, rows[0].branch_next) == (1, 2, porto.pk)
    branches.branch_switch(conversation=conversation, message_id=porto.pk)
    assert shown(conversation) == ["Plan a trip to Porto", "Porto has port wine."]


@pytest.mark.django_db
def test_a_branch_comes_back_with_its_own_inner_choices(conversation):
    exchanges = three_exchanges(conversation)
    first, third = exchanges[0][0], exchanges[2][0]
    edit(conversation, third, "And coffee?", "A bica, of course.")  # the last: in place
    second = exchanges[1][0]
    edit(conversation, second, "What about buses?", "Buses go everywhere.")
    edit(conversation, first, "Plan a trip to Porto", "Porto has port wine.")

    branches.branch_switch(conversation=conversation, message_id=first.pk)

    assert shown(conversation) == [
        "Plan a trip to Lisbon",
        "Lisbon in spring is lovely.",
        "What about buses?",
        "Buses go everywhere.",
    ]
    branches.branch_switch(conversation=conversation, message_id=second.pk)
    assert shown(conversation)[2:] == [
        "What about trams there?",
        "Tram 28 crosses the old town.",
        "And coffee?",
        "A bica, of course.",
    ]


@pytest.mark.django_db
def test_the_context_and_the_memory_index_read_only_the_branch_shown(conversation, alice):
    first = three_exchanges(conversation)[0][0]
    lisbon = set(Message.objects.filter(conversation=conversation).values_list("pk", flat=True))
    assert lisbon <= indexed_message_ids(alice)

    porto, porto_reply = edit(conversation, first, "Plan a trip to Porto", "Porto has port wine.")

    assert not lisbon & indexed_message_ids(alice)
    assert {porto.pk, porto_reply.pk} <= indexed_message_ids(alice)
    assert not [h for h in search(user=alice, query="tram pastel nata") if h.kind == "message"]
    follow_up = turn_begin(conversation=conversation, text="Which trams?").user_message
    built = context.build(
        conversation=conversation, user_text="Which trams?", user_message=follow_up
    )
    sent = " ".join(m["content"] for m in built.messages)
    assert "Porto has port wine." in sent and "Tram 28" not in sent and "Lisbon" not in sent

    reply_finish(reply=follow_up.replies.get(), content="None.", status=Message.Status.COMPLETE)
    branches.branch_switch(conversation=conversation, message_id=first.pk)
    assert lisbon <= indexed_message_ids(alice)
    assert porto.pk not in indexed_message_ids(alice)
    assert [h for h in search(user=alice, query="tram") if h.kind == "message"]


@pytest.mark.django_db
def test_the_title_follows_the_first_question_unless_the_user_chose_it(conversation):
    first = three_exchanges(conversation)[0][0]
    conversation.refresh_from_db()
    assert conversation.title == "Plan a trip to Lisbon"

    start = turn_edit(
        conversation=conversation, user_message_id=first.pk, text="Plan a trip to Porto"
    )
    reply_finish(reply=start.reply, content="Porto.", status=Message.Status.COMPLETE)

    assert start.new_title == "Plan a trip to Porto"
    conversation.refresh_from_db()
    assert conversation.title == "Plan a trip to Porto"
    services.conversation_rename(conversation=conversation, title="My trips")
    switched = branches.branch_switch(conversation=conversation, message_id=first.pk)
    conversation.refresh_from_db()
    assert (switched.new_title, conversation.title) == ("", "My trips")


@pytest.mark.django_db
def test_a_summary_of_the_old_branch_gives_way_to_one_of_what_they_share(conversation):
    exchanges = three_exchanges(conversation)
    second = exchanges[1][0]
    shared = Summary.objects.create(
        conversation=conversation,
        version=1,
        text="Lisbon trip.",
        covered_through=exchanges[0][1].pk,
    )
    Summary.objects.create(
        conversation=conversation,
        version=2,
        text="Lisbon trip, trams.",
        covered_through=exchanges[1][1].pk,
        is_current=True,
    )

    edit(conversation, second, "What about buses?", "Buses go everywhere.")

    current = Summary.objects.get(conversation=conversation, is_current=True)
    assert current.pk == shared.pk


@pytest.mark.django_db
def test_editing_or_switching_while_a_reply_streams_is_refused(conversation):
    first = three_exchanges(conversation)[0][0]
    turn_begin(conversation=conversation, text="One more thing")  # its reply streams

    with pytest.raises(ChatError) as refused:
        turn_edit(conversation=conversation, user_message_id=first.pk, text="Porto")
    assert refused.value.code == "busy"
    with pytest.raises(ChatError) as refused:
        branches.branch_switch(conversation=conversation, message_id=first.pk)
    assert refused.value.code == "busy"
    assert not Message.objects.filter(hidden_by__isnull=False).exists()


@pytest.mark.django_db
def test_another_users_question_is_not_found(conversation, bob):
    first = three_exchanges(conversation)[0][0]
    bobs = services.conversation_create(user=bob)
    exchange(bobs, "Bob's question", "Bob's answer.")

    for attempt in (
        lambda: turn_edit(conversation=bobs, user_message_id=first.pk, text="Mine now"),
        lambda: branches.branch_switch(conversation=bobs, message_id=first.pk),
    ):
        with pytest.raises(ChatError) as refused:
            attempt()
        assert refused.value.code == "not_found"
    assert not Message.objects.filter(hidden_by__isnull=False).exists()


@pytest.mark.django_db
def test_a_question_of_a_hidden_branch_cannot_be_edited_or_answered_again(conversation):
    exchanges = three_exchanges(conversation)
    first, second = exchanges[0][0], exchanges[1][0]
    edit(conversation, first, "Plan a trip to Porto", "Porto has port wine.")

    for attempt in (
        lambda: turn_edit(conversation=conversation, user_message_id=second.pk, text="Buses?"),
        lambda: services.turn_retry(conversation=conversation, user_message_id=second.pk),
        lambda: branches.branch_switch(conversation=conversation, message_id=second.pk),
    ):
        with pytest.raises(ChatError) as refused:
            attempt()
        assert refused.value.code == "not_found"


@pytest.mark.django_db
def test_what_only_the_abandoned_branch_taught_can_be_forgotten(conversation, alice, bob, client):
    from memory.models import Fact

    exchanges = three_exchanges(conversation)
    first, trams = exchanges[0][0], exchanges[1][0]
    porto, _ = edit(conversation, first, "Plan a trip to Porto", "Porto has port wine.")
    only_there = Fact.objects.create(user=alice, conversation=conversation, text="Likes trams")
    only_there.source_messages.add(trams)
    both = Fact.objects.create(user=alice, conversation=conversation, text="Likes old towns")
    both.source_messages.add(trams, porto)
    url = f"/c/{conversation.pk}/branch/{first.pk}/forget/"

    client.force_login(bob)
    assert client.get(url).status_code == 404 and client.post(url).status_code == 404
    client.force_login(alice)
    page = client.get(url)
    assert page.status_code == 200
    assert "1 memory learned only in this branch" in page.content.decode()
    assert client.post(url).status_code == 302

    assert not Fact.objects.filter(pk=only_there.pk).exists()
    assert list(Fact.objects.get(pk=both.pk).source_messages.all()) == [porto]
    assert Message.objects.filter(hidden_by=first).count() == 6  # the branch itself stays


@pytest.mark.django_db
def test_an_export_and_import_keep_the_branches(conversation, alice, staff):
    from staff.services.user_data import user_data_delete
    from userdata.transfer.export import user_data_export
    from userdata.transfer.importer import user_data_import

    first = three_exchanges(conversation)[0][0]
    edit(conversation, first, "Plan a trip to Porto", "Porto has port wine.")
    document = json.loads(json.dumps(user_data_export(user=alice)))
    user_data_delete(user=alice, actor=staff)

    user_data_import(document=document, actor=staff)

    imported = alice.conversations.get()
    assert shown(imported) == ["Plan a trip to Porto", "Porto has port wine."]
    original = Message.objects.get(conversation=imported, content="Plan a trip to Lisbon")
    assert Message.objects.filter(hidden_by=original).count() == 6
    branches.branch_switch(conversation=imported, message_id=original.pk)
    assert shown(imported)[-1] == "Try pastel de nata in Belem."


def test_a_title_is_made_from_the_first_exchange_of_the_branch_shown(conversation):
    """The title job reads the first question and reply as the page shows them: after the
    first question was edited, the new wording and its answer, not the hidden branch's."""
    from chat.titles import first_exchange

    (first, _), *_ = three_exchanges(conversation)
    edit(conversation, first, "Plan a trip to Porto", "Porto has port wine.")
    assert first_exchange(conversation.pk) == ("Plan a trip to Porto", "Porto has port wine.")


def test_forgetting_a_branch_keeps_what_another_conversation_taught_too(alice, conversation):
    """As forgetting a conversation does: a memory made in another conversation is kept (its
    source here dropped), one learned only in the branch is deleted."""
    from chat.services import conversation_create
    from memory.models import Fact
    from memory.services.forget import branch_forget, branch_forget_plan

    (q1, _), (q2, _), _ = three_exchanges(conversation)
    edit(conversation, q2, "What about buses there?", "Buses go everywhere.")
    q2.refresh_from_db()
    other = conversation_create(user=alice, title="Another")

    def fact(text, where, *sources):
        made = Fact.objects.create(user=alice, conversation=where, text=text, dedupe_key=text)
        made.source_messages.add(*sources)
        return made

    only_here = fact("Likes trams", conversation, q2)
    made_elsewhere = fact("Likes Lisbon", other, q2)
    also_shown = fact("Plans a trip", conversation, q2, q1)
    plan = branch_forget_plan(messages=branches.branch_messages(q2))
    assert plan.delete["facts"] == [only_here.pk]
    assert plan.detach["facts"] == sorted([made_elsewhere.pk, also_shown.pk])
    branch_forget(conversation=conversation, messages=branches.branch_messages(q2), actor=alice)
    assert set(Fact.objects.values_list("text", flat=True)) == {"Likes Lisbon", "Plans a trip"}
    assert not Fact.objects.get(pk=made_elsewhere.pk).source_messages.exists()
