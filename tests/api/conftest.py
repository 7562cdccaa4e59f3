import httpx
import openai
import pytest
from asgiref.sync import sync_to_async

from config.asgi import application
from profiles.keys import key_create
from tests.chat.conftest import fake_llm  # noqa: F401 (the fake model server)

BASE = "http://localhost/v1"


@pytest.fixture
def alice_key(alice):
    return key_create(user=alice, name="client").secret


@pytest.fixture
def bob_key(bob):
    return key_create(user=bob, name="client").secret


def http(secret: str | None = None, headers: dict | None = None) -> httpx.AsyncClient:
    """Raw HTTP to the real ASGI app, in the test's own event loop."""
    headers = dict(headers or {})
    if secret is not None:
        headers["Authorization"] = f"Bearer {secret}"
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=application), base_url=BASE, headers=headers
    )


def client(secret: str) -> openai.AsyncOpenAI:
    """The real openai client, pointed at /v1 of the app."""
    return openai.AsyncOpenAI(api_key=secret, base_url=BASE, http_client=http(), max_retries=0)


async def rows(model, **filters):
    return await sync_to_async(lambda: list(model.objects.filter(**filters)))()
