import pytest
from asgiref.sync import sync_to_async

from chat.services import conversation_create
from tests.support.fake_llm import Behaviour, FakeLLM


@pytest.fixture
def fake_llm(settings):
    """A local OpenAI-compatible server the real openai client talks to."""
    server = FakeLLM(Behaviour()).start()
    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = server.base_url
    settings.OPENAI_MAX_RETRIES = 2
    settings.OPENAI_TIMEOUT = 5.0
    yield server
    server.stop()


@pytest.fixture
def conversation(alice):
    return conversation_create(user=alice)


@pytest.fixture
def aconversation(alice):
    """For async tests: created through the sync ORM before the test's loop runs."""
    return conversation_create(user=alice)


async def acreate_conversation(user, **kwargs):
    return await sync_to_async(conversation_create)(user=user, **kwargs)
