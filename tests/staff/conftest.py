"""Fixtures for the staff dashboard: a signed-in staff client and a small world to review."""

from __future__ import annotations

import pytest

from chat.services import conversation_create, message_create
from memory.extraction import Extraction
from memory.models import ActionItem, Decision, Fact, Summary
from memory.report import Block
from memory.services import summary_create


@pytest.fixture
def staff_client(client, staff):
    client.force_login(staff)
    return client


@pytest.fixture
def conversation(alice):
    return conversation_create(user=alice, title="Launch planning")


@pytest.fixture
def world(alice, bob, conversation):
    """Alice's conversation with a summary in two versions and one memory of each kind."""
    user_message = message_create(
        conversation=conversation, role="user", content="We chose PostgreSQL for the launch."
    )
    reply = message_create(
        conversation=conversation,
        role="assistant",
        content="Noted: PostgreSQL it is.",
        reply_to=user_message,
        # Stored without schema_version, as replies before the contract were: version 1.
        context_report={
            "total_tokens": 120,
            "limit": 15000,
            "budget": 16000,
            "reserve": 1000,
            "model": "gpt-4o",
            "strategy": "summary_buffer",
            "blocks": [{"name": Block.SYSTEM.value, "tokens": 40, "detail": "system prompt v1"}],
            "memories": [],
            "messages": [],
        },
    )
    for text in ("The team discussed the launch.", "The team chose PostgreSQL for the launch."):
        summary_create(
            conversation=conversation,
            extraction=Extraction(summary=text, topics=["launch"]),
            covered_through=reply.pk,
            message_count=2,
            source=Summary.Source.AUTO,
        )
    fact = Fact.objects.create(
        user=alice, conversation=conversation, category="project", text="Alice leads the launch."
    )
    fact.source_messages.add(user_message)
    decision = Decision.objects.create(
        user=alice,
        conversation=conversation,
        what="Use PostgreSQL",
        rationale="it scales",
        dedupe_key="use postgresql",
    )
    action = ActionItem.objects.create(
        user=alice,
        conversation=conversation,
        what="Write the migration plan",
        owner="Alice",
        dedupe_key="write the migration plan",
    )
    bob_fact = Fact.objects.create(user=bob, text="Bob likes tea.")
    return {
        "conversation": conversation,
        "messages": [user_message, reply],
        "fact": fact,
        "decision": decision,
        "action": action,
        "bob_fact": bob_fact,
        "summaries": list(Summary.objects.filter(conversation=conversation).order_by("version")),
    }
