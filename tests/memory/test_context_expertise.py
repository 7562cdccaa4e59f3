"""memory.context.build: the user's level in the message's domain is its own block."""

import json

import pytest
from django.template.loader import render_to_string

from chat.models import Message
from chat.services import message_create
from chat.templatetags.chat_tags import report_view
from memory.context import build
from profiles.expertise import domains_set
from profiles.services import profile_observe_message

pytestmark = pytest.mark.django_db

EXPERT_CODE = [
    "My asyncio event loop stalls when a coroutine awaits a thread pool future.",
    "Is a race condition likely if two coroutines share the connection pool?",
    "I refactored the ORM queries behind the API endpoint; latency is still high.",
    "Would a mutex around the cache invalidation fix the deadlock?",
    "The migration adds an index but the transaction holds a lock too long.",
]


def names(built):
    return [b["name"] for b in built.report["blocks"]]


def test_two_domains_two_instructions(alice, conversation):
    for text in EXPERT_CODE:
        profile_observe_message(user=alice, text=text)
    code = build(conversation=conversation, user_text="Why does my coroutine deadlock?")
    assert "expertise" in names(code)
    sent = "\n".join(m["content"] for m in code.messages if m["role"] == "system")
    assert "expert in programming" in sent and "skip the basics" in sent
    source = code.report["expertise"]["sources"][0]
    assert (source["domain"], source["level"], source["origin"]) == (
        "programming", "expert", "learned",
    )  # fmt: skip
    cooking = build(conversation=conversation, user_text="I've never cooked. How do I boil rice?")
    assert "new to cooking" in cooking.report["expertise"]["text"]
    assert "programming" not in cooking.report["expertise"]["text"]
    json.dumps(cooking.report)


def test_no_domain_no_evidence_no_block(alice, conversation):
    built = build(conversation=conversation, user_text="Should I sell my shares?")
    assert "expertise" not in names(built) and "expertise" not in built.report
    built = build(conversation=conversation, user_text="Hello!")
    assert "expertise" not in names(built)


def test_a_level_set_by_hand_wins_and_is_shown(alice, conversation):
    domains_set(user=alice, settings={"finance": "beginner"})
    for text in ["I'm a financial analyst; my DCF uses a WACC with beta and leverage."] * 3:
        profile_observe_message(user=alice, text=text)
    built = build(conversation=conversation, user_text="Is an ETF's expense ratio worth it?")
    assert "new to finance" in built.report["expertise"]["text"]
    html = render_to_string("chat/_context_report_body.html", report_view(built.report))
    assert "Your level in this subject" in html
    assert "Finance: beginner" in html and "set by the user" in html


def test_the_message_stored_is_read_too(alice, conversation):
    """With the stored message (not pending), the same block."""
    text = "I'm a chef: does a beurre blanc break if I let it boil?"
    message = message_create(conversation=conversation, role=Message.Role.USER, content=text)
    built = build(conversation=conversation, user_text=message.content, user_message=message)
    assert "expert in cooking" in built.report["expertise"]["text"]
