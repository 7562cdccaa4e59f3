import pytest

from chat.services import conversation_create, message_create
from memory.services import memories_from_turn


@pytest.fixture
def conversation(alice):
    return conversation_create(user=alice, title="Family")


@pytest.fixture
def tell(conversation):
    """Alice tells the assistant something and gets a reply; the light extractor runs as
    after a turn. Returns (user message, reply)."""

    def tell(text, conversation=conversation):
        said = message_create(conversation=conversation, role="user", content=text)
        reply = message_create(
            conversation=conversation, role="assistant", content="Noted.", reply_to=said
        )
        memories_from_turn(conversation=conversation, message=said)
        return said, reply

    return tell
