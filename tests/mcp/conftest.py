import httpx2
import pytest
from asgiref.sync import sync_to_async
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from config.asgi import application
from profiles.keys import key_create

ORIGIN = "http://localhost"
URL = f"{ORIGIN}/mcp"


@pytest.fixture
def alice_key(alice):
    return key_create(user=alice, name="desktop").secret


@pytest.fixture
def bob_key(bob):
    return key_create(user=bob, name="desktop").secret


def http(secret: str | None = None, headers: dict | None = None) -> httpx2.AsyncClient:
    """Raw HTTP to the real ASGI app (config.asgi), in the test's own event loop."""
    headers = dict(headers or {})
    if secret is not None:
        headers["Authorization"] = f"Bearer {secret}"
    return httpx2.AsyncClient(
        transport=httpx2.ASGITransport(app=application), base_url=ORIGIN, headers=headers
    )


def client(secret: str | None, headers: dict | None = None, url: str = URL) -> Client:
    """The mcp SDK's own client over its streamable HTTP transport, pointed at /mcp."""
    http_client = http(secret, headers) if url == URL else _remote(secret, headers)
    return Client(streamable_http_client(url, http_client=http_client))


def _remote(secret, headers):
    headers = dict(headers or {})
    if secret is not None:
        headers["Authorization"] = f"Bearer {secret}"
    return httpx2.AsyncClient(headers=headers, timeout=30)


async def call(session: Client, tool: str, **arguments) -> dict:
    """A tool's structured answer; fails the test on a tool error."""
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content


async def refusal(session: Client, tool: str, **arguments) -> str:
    """A tool's error, in words."""
    result = await session.call_tool(tool, arguments)
    assert result.is_error, result.structured_content
    return result.content[0].text


async def rows(model, **filters):
    return await sync_to_async(lambda: list(model.objects.filter(**filters)))()
