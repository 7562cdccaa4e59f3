"""A question about a period matches the turns of that period (issue 35, item 4)."""

from datetime import UTC, datetime

import pytest

from chat.services import conversation_create, message_create
from memory.search import search

pytestmark = pytest.mark.django_db


def test_a_question_naming_a_day_prefers_that_days_turns(alice, settings):
    """The same words said on two days: "on 25 May, 2022" finds that day's turn first,
    though the other one is newer."""
    settings.MEMORYCHAT_EMBEDDINGS = "off"
    settings.OPENAI_EMBEDDING_MODEL = ""
    day = message_create(
        conversation=conversation_create(user=alice),
        role="user",
        content="I got a stuffed animal for Joanna",
        created_at=datetime(2022, 5, 25, 12, tzinfo=UTC),
    )
    message_create(
        conversation=conversation_create(user=alice),
        role="user",
        content="I got a stuffed animal for Joanna too",
        created_at=datetime(2022, 9, 2, 12, tzinfo=UTC),
    )
    hits = search(user=alice, query="What did I get for Joanna on 25 May, 2022?", k=5)
    assert hits[0].id == day.pk
