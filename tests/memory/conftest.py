import pytest

from chat.services import conversation_create, message_create
from tests.support.fake_llm import Behaviour, FakeLLM


@pytest.fixture
def fake_llm(settings):
    """A local OpenAI-compatible server the real openai client talks to, no retries."""
    server = FakeLLM(Behaviour()).start()
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = server.base_url
    settings.OPENAI_MAX_RETRIES = 0
    yield server
    server.stop()


@pytest.fixture
def conversation(alice):
    return conversation_create(user=alice, title="Trip planning")


@pytest.fixture
def say(conversation):
    """Store a message in the fixture conversation (or another one)."""

    def say(content, role="user", conversation=conversation, **kwargs):
        return message_create(conversation=conversation, role=role, content=content, **kwargs)

    return say
