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


@pytest.fixture(autouse=True)
async def replies_end():
    """A reply outlives its tab (chat.live): each test ends once its replies, their
    after-turn work included, have ended, before the database is flushed."""
    import asyncio

    from chat import live

    yield
    async with asyncio.timeout(30):
        await live.settle()
