"""memory.report: a real context build matches the written contract; old reports still read."""

import pytest
from django.template import Context, Template

from chat.services import NewMessage, conversation_create, message_create_many
from memory.context import build
from memory.models import Fact, Summary
from memory.report import (
    SCHEMA_VERSION,
    Block,
    BlockItem,
    ContextReport,
    ExpertiseItem,
    LeftOutMemory,
    MemoryItem,
    MessageItem,
    MessagesLeftOut,
    PreferencesItem,
    ProjectItem,
    SummaryItem,
    report_read,
)
from profiles.expertise import domains_set
from profiles.instructions import MIN_MESSAGES
from profiles.services import profile_observe_message, profile_update_preferences
from projects.services import project_create

pytestmark = pytest.mark.django_db

CASUAL = "hey lol gonna grab food, wanna come?? haha"


def assert_matches(item: dict, contract) -> None:
    """Every required key is there and nothing undeclared: an extra key is a contract bug."""
    required, optional = contract.__required_keys__, contract.__optional_keys__
    assert required <= set(item) <= required | optional, (contract.__name__, sorted(item))


@pytest.fixture
def busy_conversation(alice):
    """A conversation whose report has every part: preferences, a learned style, a project's
    instructions, a summary, memories sent and left out, messages sent and left out."""
    profile_update_preferences(user=alice, preferences={"response_format": "bullets"})
    for _ in range(MIN_MESSAGES):  # casual: a learned tone line
        profile_observe_message(user=alice, text=CASUAL)
    domains_set(user=alice, settings={"gardening": "beginner"})  # "gardening tips": expertise
    for i in range(30):
        Fact.objects.create(
            user=alice, text=f"Fact {i} about gardening " + "soil " * 30, dedupe_key=f"g{i}"
        )
    garden = project_create(user=alice, name="Garden", instructions="Metric units.")
    conversation = conversation_create(user=alice, context_budget=2500, project=garden)
    message_create_many(
        conversation=conversation,
        messages=[NewMessage("user", f"turn {i} " + "blah " * 40) for i in range(60)],
    )
    Summary.objects.create(
        conversation=conversation,
        version=1,
        is_current=True,
        text="They talked about the garden.",
        covered_through=conversation.messages.order_by("id")[9].pk,
    )
    return conversation


def test_a_built_report_matches_the_contract(busy_conversation):
    """Each part of a real report has exactly its TypedDict's keys; block names are Blocks."""
    report = build(conversation=busy_conversation, user_text="gardening tips").report
    assert_matches(report, ContextReport)
    assert report["schema_version"] == SCHEMA_VERSION
    for block in report["blocks"]:
        assert_matches(block, BlockItem)
    # Every block but the one only a continued reply has (tests/chat/test_model_servers.py).
    assert {b["name"] for b in report["blocks"]} == set(Block) - {Block.CONTINUATION}
    assert_matches(report["preferences"], PreferencesItem)
    assert_matches(report["expertise"], ExpertiseItem)
    assert_matches(report["project"], ProjectItem)
    assert_matches(report["summary"], SummaryItem)
    assert "text" in report["summary"]  # sent
    assert report["memories"] and report["memories_left_out"] and report["messages"]
    for memory in report["memories"]:
        assert_matches(memory, MemoryItem)
    for memory in report["memories_left_out"]:
        assert_matches(memory, LeftOutMemory)
    for message in report["messages"]:
        assert_matches(message, MessageItem)
    left_out = report["messages_left_out"]
    assert_matches(left_out, MessagesLeftOut)
    assert left_out["count"] and "summarised_through" in left_out


def test_a_summary_that_does_not_fit_is_reported_without_its_text(alice):
    """Left out, the summary keeps its numbers and says why, but not its text."""
    conversation = conversation_create(user=alice, context_budget=600)
    Summary.objects.create(conversation=conversation, version=1, is_current=True, text="x " * 400)
    summary = build(conversation=conversation, user_text="hi").report["summary"]
    assert_matches(summary, SummaryItem)
    assert summary["left_out"] == "budget" and "text" not in summary


def test_a_report_stored_without_a_version_reads_as_version_1():
    """Reports stored before schema_version read as version 1, and are not changed."""
    stored = {"total_tokens": 10, "blocks": [{"name": "system", "tokens": 9, "detail": "v1"}]}
    assert report_read(stored)["schema_version"] == 1
    assert "schema_version" not in stored
    assert report_read({"schema_version": SCHEMA_VERSION})["schema_version"] == SCHEMA_VERSION
    assert report_read(None) is None and report_read({}) is None


def test_a_version_1_report_still_renders():
    """The "what the model saw" fragment renders a report stored before schema_version."""
    stored = {"total_tokens": 10, "limit": 90, "blocks": [{"name": "system", "tokens": 9}]}
    html = Template("{% load chat_tags %}{% context_report r %}").render(Context({"r": stored}))
    assert (
        "What the model saw" in html
        and "10 of 90 tokens" in html
        and "<td>System prompt</td>" in html
    )
