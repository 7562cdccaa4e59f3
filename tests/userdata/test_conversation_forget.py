"""Forgetting what was learned in one conversation (memory.services.conversation_forget)."""

from __future__ import annotations

import pytest

from chat.services import message_create
from memory import context
from memory.models import ActionItem, Decision, Fact, Summary
from memory.search import search
from memory.services import conversation_forget, conversation_forget_plan, summary_run_start
from memory.services.summaries import summary_run_execute

pytestmark = pytest.mark.django_db
MEMORY_KINDS = {"fact", "decision", "action_item", "summary"}


def memory_hits(user, query):
    return [hit for hit in search(user=user, query=query) if hit.kind in MEMORY_KINDS]


def test_the_plan_says_what_goes_and_what_stays(data):
    """Only-here memories are to be deleted; one also told elsewhere only loses a source."""
    plan = conversation_forget_plan(conversation=data["trip"])
    assert plan.delete == {
        "facts": [data["daughter"].pk],
        "decisions": [data["decision"].pk],
        "action_items": [data["action"].pk],
    }
    assert plan.detach == {"facts": [data["city"].pk], "decisions": [], "action_items": []}
    assert plan.summaries == 1


def test_it_deletes_what_came_only_from_the_conversation(alice, data):
    """Facts, decisions, action items and the summary learned only here are gone."""
    assert memory_hits(alice, "Zenobia") and memory_hits(alice, "night train")
    result = conversation_forget(conversation=data["trip"], actor=alice)
    assert result.deleted == {"facts": 1, "decisions": 1, "action_items": 1}
    assert result.kept == 1 and result.summaries == 1
    assert not Fact.objects.filter(pk=data["daughter"].pk).exists()
    assert not Decision.objects.filter(pk=data["decision"].pk).exists()
    assert not ActionItem.objects.filter(pk=data["action"].pk).exists()
    # The index follows at once: nothing learned here is found any more.
    assert memory_hits(alice, "Zenobia") == []
    assert memory_hits(alice, "night train") == []
    assert memory_hits(alice, "quokka hotel") == []
    # Nor is what was said there, though the conversation keeps it.
    assert search(user=alice, query="Zenobia") == []
    assert "Zenobia" in data["trip"].messages.first().content


def test_what_is_said_after_forgetting_is_found_again(alice, data):
    """Forgetting covers the messages up to it; a new one is recalled as usual."""
    conversation_forget(conversation=data["trip"], actor=alice)
    later = message_create(conversation=data["trip"], role="user", content="Zenobia turns five.")
    assert [(hit.kind, hit.id) for hit in search(user=alice, query="Zenobia")] == [
        ("message", later.pk)
    ]


def test_a_memory_also_learned_elsewhere_keeps_only_its_other_sources(alice, data):
    """The city, told in both conversations, stays, sourced and placed in "Work" only."""
    conversation_forget(conversation=data["trip"], actor=alice)
    city = Fact.objects.get(pk=data["city"].pk)
    assert {m.conversation_id for m in city.source_messages.all()} == {data["work"].pk}
    assert city.conversation_id == data["work"].pk
    assert [hit.id for hit in memory_hits(alice, "Grenoble") if hit.kind == "fact"] == [city.pk]
    record = city.history.latest("history_date")
    assert record.history_user == alice and "forgotten by the user" in record.history_change_reason


def test_every_deletion_is_history_naming_the_user(alice, data):
    """Each deleted memory and summary version has a '-' record with the user as actor."""
    conversation_forget(conversation=data["trip"], actor=alice)
    for model, pk in ((Fact, data["daughter"].pk), (Decision, data["decision"].pk)):
        record = model.history.filter(id=pk).latest("history_date")
        assert record.history_type == "-" and record.history_user == alice
        assert record.history_change_reason.startswith("forgotten by the user")
    deleted = Summary.history.filter(conversation_id=data["trip"].pk, history_type="-")
    assert deleted.count() == 1 and deleted.get().history_user == alice


def test_the_other_users_data_is_untouched(alice, bob, data):
    """Bob told the same thing: his fact and his search stay."""
    conversation_forget(conversation=data["trip"], actor=alice)
    assert Fact.objects.filter(pk=data["bob_fact"].pk).exists()
    assert [hit.kind for hit in memory_hits(bob, "Zenobia")] == ["fact"]


def test_the_forgotten_messages_are_not_summarised_again(alice, data):
    """A blank summary version keeps the place: the next run reads only newer messages, so
    nothing forgotten is learned again; the blank version is not shown to the model."""
    trip = data["trip"]
    conversation_forget(conversation=trip, actor=alice)
    marker = Summary.objects.get(conversation=trip, is_current=True)
    assert marker.text == "" and marker.covered_through == trip.messages.order_by("-id")[0].pk
    question = message_create(conversation=trip, role="user", content="What time is it?")
    built = context.build(conversation=trip, user_text=question.content, user_message=question)
    assert "Zenobia" in str(built.messages)  # the conversation's own messages stay in view
    assert "summary" not in {block["name"] for block in built.report["blocks"]}
    run = summary_run_start(conversation=trip)
    summary_run_execute(run_id=run.pk)
    assert not Fact.objects.filter(user=alice, text__icontains="Zenobia").exists()
    newest = Summary.objects.get(conversation=trip, is_current=True)
    assert newest.version > marker.version and "Zenobia" not in newest.text


def test_a_second_forget_has_nothing_left_to_delete(alice, data):
    conversation_forget(conversation=data["trip"], actor=alice)
    again = conversation_forget(conversation=data["trip"], actor=alice)
    assert again.memories == 0 and again.kept == 0


def test_links_to_a_forgotten_memory_are_let_go(alice, data):
    """What the collector would do, without its one-by-one signals: a surviving fact
    superseded by a forgotten one no longer points at it; a surviving action item no longer
    depends on a forgotten one."""
    older = Fact.objects.create(
        user=alice, conversation=data["work"], text="Zenobia is 4", status="superseded"
    )
    older.superseded_by = data["daughter"]
    older.save()
    kept_action = ActionItem.objects.create(
        user=alice, conversation=data["work"], what="Pack", dedupe_key="pack"
    )
    kept_action.depends_on.add(data["action"])
    conversation_forget(conversation=data["trip"], actor=alice)
    older.refresh_from_db()
    assert older.superseded_by is None and older.status == "superseded"
    assert list(kept_action.depends_on.all()) == []
    record = ActionItem.history.filter(id=data["action"].pk).latest("history_date")
    assert record.what == "Book the quokka hotel" and record.history_type == "-"


def test_a_full_re_summarise_does_not_read_what_was_forgotten(alice, staff, data):
    """Staff re-summarising from the first message still starts after what was forgotten."""
    from memory.services import conversation_resummarise

    conversation_forget(conversation=data["trip"], actor=alice)
    message_create(conversation=data["trip"], role="user", content="My dog is called Rex.")
    run = conversation_resummarise(conversation=data["trip"], actor=staff)
    summary_run_execute(run_id=run.pk)
    newest = Summary.objects.get(conversation=data["trip"], is_current=True)
    assert newest.model != Summary.FORGOTTEN and "Zenobia" not in newest.text
    assert not Fact.objects.filter(user=alice, text__icontains="Zenobia").exists()
