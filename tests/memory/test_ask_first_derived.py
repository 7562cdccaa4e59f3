"""Memory mode "ask first": nothing derived states a suggestion before the user keeps it.

Every path from a suggestion to derived text: the rolling summary (offline and a model's),
its topics and its decisions and action items, the search index (summaries are indexed),
the context of a later turn (summary block, recall, a new session's resumption), the Memory
page's list of summaries, and the staff reports (minutes, briefing, progress update).
"""

import pytest

from chat.services import NewMessage, conversation_create, message_create_many
from memory import context, services, summariser
from memory.extraction import ExtractedDecision, ExtractedFact, Extraction, withhold
from memory.models import Decision, Fact, MemoryState, Summary
from memory.search import search
from profiles.services import profile_set_memory_mode
from staff.reports import REPORTS
from staff.selectors.reports import report_data_for_conversation, report_data_for_user

pytestmark = pytest.mark.django_db(transaction=True)

LINES = [
    "Hi! My name is Alice, I live in Lyon and my daughter's name is Ada.",
    "Nice to meet you, Alice.",
    "We decided to go to Porto in August. I need to fix the fence by Friday.",
    "Sounds like a busy summer.",
    "What is a good stretch for a stiff back after gardening?",
    "Try a gentle cat-cow stretch and child's pose.",
]
SECRETS = ("Lyon", "Ada", "Porto", "fence")


def stored(conversation, lines=LINES):
    return message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(lines)
        ],
    )


def turns_then_run(conversation):
    """Each user message through the light extractor, as after its reply; then a run."""
    messages = stored(conversation)
    for message in messages[::2]:
        services.memories_from_turn(conversation=conversation, message=message)
    run = services.summary_run_start(conversation=conversation)
    services.summary_run_execute(run_id=run.pk)
    return Summary.objects.get(conversation=conversation, is_current=True)


def leaks(text):
    return [secret for secret in SECRETS if secret.lower() in text.lower()]


@pytest.fixture
def asking(alice):
    profile_set_memory_mode(user=alice, mode="ask")
    return conversation_create(user=alice, title="Summer")


def test_the_summary_states_no_suggestion(alice, asking):
    summary = turns_then_run(asking)
    assert set(Fact.objects.values_list("state", flat=True)) == {MemoryState.SUGGESTED}
    assert leaks(summary.text) == []
    assert leaks(" ".join(summary.topics)) == []
    assert summary.decisions == [] and summary.action_items == []
    assert "stretch" in summary.text  # what is no memory is still summarised


def test_in_automatic_mode_the_summary_states_them(alice, conversation):
    """The rule is about suggestions, not a summary that says less."""
    summary = turns_then_run(conversation)
    assert "Lyon" in summary.text and summary.decisions == ["Go to Porto in August"]


def test_a_models_summary_in_other_words_states_no_suggestion(alice, asking, monkeypatch):
    """A model words the summary its own way; the sentences stating a suggestion go."""
    answer = Extraction(
        summary="- Alice mentioned that her daughter Ada loves drawing.\n"
        "- The family chose Porto for an August trip. The user asked about back stretches.\n"
        "- Fence repairs are due on Friday.",
        topics=["Porto trip", "back stretches", "Lyon"],
        facts=[
            ExtractedFact("personal", "daughter's name", "Alice's daughter is Ada.", 0.7, 0),
        ],
        decisions=[ExtractedDecision(what="Travel to Porto in August", message_index=2)],
    )
    monkeypatch.setattr(
        summariser,
        "summarise",
        lambda **kwargs: summariser.Summarised(answer, summariser.JSON_SCHEMA),
    )
    summary = turns_then_run(asking)
    assert leaks(summary.text) == []
    assert summary.text == "- The user asked about back stretches."
    assert summary.topics == ["back stretches"]
    assert Decision.objects.get().state == MemoryState.SUGGESTED  # merged, not a second one


def test_no_later_turn_sees_a_suggestion_through_derived_text(alice, asking):
    """Search finds no summary stating one; the context of a new conversation neither."""
    turns_then_run(asking)
    for query in ("Lyon", "Porto August", "fence"):
        assert not [hit for hit in search(user=alice, query=query) if hit.kind != "message"]
    later = conversation_create(user=alice)
    built = context.build(conversation=later, user_text="Where do I live and when is Porto?")
    derived = [m for m in built.report["memories"] if m["kind"] != "message"]
    assert leaks(" ".join(m["text"] for m in derived)) == []
    same = context.build(conversation=asking, user_text="What did we plan?")
    assert leaks((same.report.get("summary") or {}).get("text", "")) == []


def test_no_report_states_a_suggestion(alice, asking):
    turns_then_run(asking)
    for data in (
        report_data_for_conversation(conversation=asking),
        report_data_for_user(user=alice),
    ):
        for report in REPORTS.values():
            assert leaks(report.build(data)) == [], report.slug


def test_the_memory_pages_summaries_state_no_suggestion(alice_client, alice, asking):
    turns_then_run(asking)
    page = alice_client.get("/memory/", {"kind": "summary"}).content.decode()
    listed = page.split('id="memory-list"')[1]  # the suggestions wait in their own section
    assert "stretch" in listed and leaks(listed) == []


def test_a_later_run_states_no_suggestion_of_an_earlier_one_until_it_is_kept(alice, asking):
    """A suggestion still waiting is left out of later summaries too; kept, it may be said."""
    turns_then_run(asking)
    stored(asking, ["Porto in August will be hot, I think.", "Bring a hat."])
    run = services.summary_run_start(conversation=asking)
    services.summary_run_execute(run_id=run.pk)
    assert "Porto" not in Summary.objects.get(conversation=asking, is_current=True).text
    services.memory_keep(memory=Decision.objects.get(user=alice), actor=alice)
    stored(asking, ["Porto in August: we booked the flights today.", "Great."])
    run = services.summary_run_start(conversation=asking)
    services.summary_run_execute(run_id=run.pk)
    assert "Porto" in Summary.objects.get(conversation=asking, is_current=True).text


def test_withhold_leaves_what_states_no_suggestion():
    result = Extraction(
        summary="- The user lives in Lyon. The user asked about stretches.\n- Nothing else.",
        topics=["Lyon", "stretches"],
    )
    kept = withhold(result, ["The user lives in Lyon."])
    assert kept.summary == "- The user asked about stretches.\n- Nothing else."
    assert kept.topics == ["stretches"]
    assert withhold(result, []) is result
