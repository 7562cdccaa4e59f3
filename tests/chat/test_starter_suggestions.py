"""A new chat's suggestions pick up a recent conversation only where its latest reply came
whole: never one that failed."""

import pytest

from chat.models import Message
from chat.selectors import starter_suggestions
from chat.services import conversation_create, message_create

pytestmark = pytest.mark.django_db


def _exchange(user, title, status):
    conversation = conversation_create(user=user, title=title)
    message_create(conversation=conversation, role="user", content=f"About {title}")
    message_create(conversation=conversation, role="assistant", content="", status=status)
    return conversation


def test_a_failed_conversation_is_never_suggested(alice):
    _exchange(alice, "Sourdough starter", Message.Status.COMPLETE)
    _exchange(alice, "Broken upstream", Message.Status.FAILED)
    labels = [s.label for s in starter_suggestions(user=alice)]
    assert "Pick up “Sourdough starter”" in labels
    assert not [label for label in labels if "Broken upstream" in label]


def test_with_only_failed_conversations_the_generic_ones_are_offered(alice):
    _exchange(alice, "Broken upstream", Message.Status.FAILED)
    labels = [s.label for s in starter_suggestions(user=alice)]
    assert len(labels) == 3 and not [label for label in labels if "Pick up" in label]
