"""Decisions and action items within the turn, like facts; the summary run merges into them."""

import datetime

import pytest

from chat.services import NewMessage, conversation_create, message_create, message_create_many
from memory import services
from memory.extraction import (
    ExtractedAction,
    ExtractedDecision,
    ExtractedFact,
    Extraction,
    extract,
    extract_turn,
)
from memory.models import ActionItem, Decision, Fact, MemoryEvent, MemoryState
from profiles.services import profile_set_memory_mode

TODAY = datetime.date(2026, 1, 7)  # a Wednesday


def turn(text):
    return extract_turn([{"role": "user", "content": text}], today=TODAY)


def test_the_turn_extractor_finds_clear_decisions_and_action_items():
    found = turn("We decided to go to Porto in August. I need to fix the fence by Friday.")
    assert [d.what for d in found.decisions] == ["Go to Porto in August"]
    assert [(a.what, a.owner, a.due_date) for a in found.action_items] == [
        ("Fix the fence", "user", datetime.date(2026, 1, 9))
    ]
    assert found.summary == "" and found.topics == []


def test_the_turn_extractor_leaves_proposals_and_completions_to_the_summary_run():
    """A proposal is not a decision taken; closing an item needs what was said before."""
    found = turn("Maybe we should use Rust. I finished the report.")
    assert found.decisions == [] and found.action_items == []


@pytest.mark.parametrize(
    "text",
    [
        "I wonder if I need to fix the fence.",
        "Maybe I need to call the bank.",
        "Do you think I need to renew my passport?",
        "If we decided to go to Porto, would August be too hot?",
    ],
)
def test_a_hedge_or_a_question_is_no_record(text):
    found = turn(text)
    assert found.decisions == [] and found.action_items == []


def test_a_decision_ends_with_its_clause():
    """The task told in the same sentence is no part of the decision; two decisions in one
    sentence are two."""
    found = turn("Quick update: we decided to go to Porto in August, and I need to fix the fence.")
    assert [d.what for d in found.decisions] == ["Go to Porto in August"]
    assert [a.what for a in found.action_items] == ["Fix the fence"]
    found = turn("We decided to use Postgres and we agreed to launch in May.")
    assert [d.what for d in found.decisions] == ["Use Postgres", "Launch in May"]
    found = turn("We'll use Postgres instead of MySQL, and I will call Bob tomorrow.")
    assert [(d.what, d.alternatives) for d in found.decisions] == [("Use Postgres", ["MySQL"])]


@pytest.mark.parametrize(
    "after",
    [
        "The weather was nice there last year.",
        "Since then I have been busy with work.",
        "Why is the sky blue?",
        "Reason I ask: my brother lives there.",
        "Since 2020 we have gone every summer.",
    ],
)
def test_a_decisions_rationale_is_never_the_next_unrelated_sentence(after):
    found = extract(
        [{"role": "user", "content": f"We decided to go to Porto in August. {after}"}],
        today=TODAY,
    )
    assert [(d.what, d.rationale) for d in found.decisions] == [("Go to Porto in August", "")]


@pytest.mark.parametrize(
    "text",
    [
        "We decided to go to Porto because flights are cheap.",
        "We decided to go to Porto. Because flights are cheap.",
        "We decided to go to Porto. The reason is that flights are cheap.",
        "We decided to go to Porto. That's because flights are cheap.",
        "We decided to go to Porto. Reason: flights are cheap.",
        "We decided to go to Porto since flights are cheap.",
    ],
)
def test_a_decisions_own_reason_is_its_rationale(text):
    found = extract([{"role": "user", "content": text}], today=TODAY)
    assert [(d.what, d.rationale) for d in found.decisions] == [
        ("Go to Porto", "flights are cheap")
    ]


@pytest.fixture
def conversation(alice):
    return conversation_create(user=alice, title="Summer")


def said(conversation, text):
    message = message_create(conversation=conversation, role="user", content=text)
    message_create(conversation=conversation, role="assistant", content="Noted.", reply_to=message)
    return message


@pytest.mark.django_db
def test_a_decision_and_a_task_are_records_within_the_turn(conversation, alice):
    message = said(
        conversation, "We decided to go to Porto in August. I need to fix the fence by Friday."
    )
    services.memories_from_turn(conversation=conversation, message=message)
    decision = Decision.objects.get(user=alice)
    item = ActionItem.objects.get(user=alice)
    assert decision.what == "Go to Porto in August" and decision.state == MemoryState.LEARNED
    assert list(decision.source_messages.all()) == [message]
    assert item.what == "Fix the fence" and item.due_date is not None
    assert item.status == ActionItem.Status.OPEN
    event = MemoryEvent.objects.get(conversation=conversation)  # "Remembered: ..." with Undo
    assert {i["kind"] for i in event.items} == {"decision", "action_item"}


@pytest.mark.django_db(transaction=True)
def test_the_summary_run_merges_into_the_turns_records(conversation, alice):
    """The run reads the same messages again: one decision, one action item, no new notice."""
    lines = [
        "Where should we go this summer?",
        "Lisbon or Porto are both lovely.",
        "We decided to go to Porto in August. I need to fix the fence by Friday.",
        "Noted.",
    ]
    messages = message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(lines)
        ],
    )
    services.memories_from_turn(conversation=conversation, message=messages[2])
    run = services.summary_run_start(conversation=conversation)
    services.summary_run_execute(run_id=run.pk)
    assert Decision.objects.filter(user=alice).count() == 1
    assert ActionItem.objects.filter(user=alice).count() == 1
    assert Decision.objects.get(user=alice).source_messages.count() == 1


@pytest.mark.django_db
def test_a_summary_models_other_wording_of_the_same_message_merges(conversation, alice):
    """A model words it differently; from the same message it is the same decision and task.
    From another message, other words are another decision."""
    message = said(
        conversation, "We decided to go to Porto in August. I need to fix the fence by Friday."
    )
    services.memories_from_turn(conversation=conversation, message=message)
    model_says = Extraction(
        summary="- The user plans a trip.",
        decisions=[
            ExtractedDecision(
                what="Travel to Porto in August", rationale="", context="Summer plans"
            )
        ],
        action_items=[ExtractedAction(what="Fix the garden fence", owner="user")],
    )
    services.memories_merge(conversation=conversation, extraction=model_says, messages=[message])
    decision = Decision.objects.get(user=alice)
    assert decision.what == "Go to Porto in August" and decision.context == "Summer plans"
    assert ActionItem.objects.filter(user=alice).count() == 1
    other = said(conversation, "Anything else?")
    services.memories_merge(conversation=conversation, extraction=model_says, messages=[other])
    assert Decision.objects.filter(user=alice).count() == 2


@pytest.mark.django_db
def test_in_ask_first_mode_the_turns_decision_and_task_wait_as_suggestions(conversation, alice):
    profile_set_memory_mode(user=alice, mode="ask")
    message = said(conversation, "We decided to go to Porto. I need to fix the fence by Friday.")
    services.memories_from_turn(conversation=conversation, message=message)
    states = set(Decision.objects.values_list("state", flat=True))
    states |= set(ActionItem.objects.values_list("state", flat=True))
    assert states == {MemoryState.SUGGESTED}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("mode", ["automatic", "ask"])
def test_what_the_user_deleted_after_the_turn_does_not_come_back_with_the_summary_run(
    conversation, alice, mode
):
    """Discarded, undone or deleted: the run reading the same message again leaves it out;
    saying it again in a later message is news."""
    profile_set_memory_mode(user=alice, mode=mode)
    lines = ["We decided to go to Porto. I need to fix the fence. I live in Lyon.", "Noted."]
    messages = message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(lines)
        ],
    )
    services.memories_from_turn(conversation=conversation, message=messages[0])
    for model in (Decision, ActionItem, Fact):
        for memory in model.objects.filter(user=alice):
            services.memory_delete(memory=memory, actor=alice, reason="deleted by the user")
    run = services.summary_run_start(conversation=conversation)
    services.summary_run_execute(run_id=run.pk)
    assert not Decision.objects.exists() and not ActionItem.objects.exists()
    assert not Fact.objects.exists()
    again = said(conversation, "We decided to go to Porto.")
    services.memories_from_turn(conversation=conversation, message=again)
    assert Decision.objects.filter(user=alice).count() == 1


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["automatic", "ask"])
def test_a_models_other_wording_of_the_turns_fact_is_the_same_fact(conversation, alice, mode):
    """Same message, same subject or nearly the same words: one fact, not a second one, nor
    a second suggestion."""
    profile_set_memory_mode(user=alice, mode=mode)
    message = said(conversation, "Hi! My name is Alice, I live in Lyon.")
    services.memories_from_turn(conversation=conversation, message=message)
    model_says = Extraction(
        summary="- Alice lives in Lyon.",
        facts=[
            ExtractedFact("personal", "location", "Alice lives in Lyon.", 0.7, 0),
            ExtractedFact("personal", "", "The user's name is Alice", 0.7, 0),
        ],
    )
    services.memories_merge(conversation=conversation, extraction=model_says, messages=[message])
    facts = Fact.objects.filter(user=alice)
    assert sorted(facts.values_list("text", flat=True)) == [
        "The user lives in Lyon.",
        "The user's name is Alice.",
    ]
    assert {f.status for f in facts} == {"active"}
