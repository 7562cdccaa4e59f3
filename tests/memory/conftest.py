import pytest

from chat.services import conversation_create, message_create


@pytest.fixture
def conversation(alice):
    return conversation_create(user=alice, title="Trip planning")


@pytest.fixture
def say(conversation):
    """Store a message in the fixture conversation (or another one)."""

    def say(content, role="user", conversation=conversation, **kwargs):
        return message_create(conversation=conversation, role=role, content=content, **kwargs)

    return say
