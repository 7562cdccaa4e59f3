"""/mcp is opened by a personal key and nothing else: no key, a wrong, revoked or inactive
user's key, a signed-in browser's cookie get 401 before the MCP server sees the request; the
key that opens /mcp opens no web page."""

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.test import Client as WebClient
from mcp import MCPError

from memory.models import Fact
from profiles.keys import key_revoke
from profiles.models import ApiKey
from tests.mcp.conftest import call, client, http, rows

pytestmark = pytest.mark.django_db(transaction=True)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "curl", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def assert_401(response):
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer ")
    assert response.json()["error"] == "invalid_token"


@sync_to_async
def session_cookie(user) -> str:
    web = WebClient()
    web.force_login(user)
    return web.cookies["sessionid"].value


async def test_a_key_opens_mcp_over_plain_http(alice_key):
    """What curl sends (docs/api.md): one JSON answer, no session to keep."""
    async with http(alice_key, ACCEPT) as raw:
        response = await raw.post("/mcp", json=INITIALIZE)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.json()["result"]["serverInfo"]["name"] == "memorychat"
    assert "mcp-session-id" not in response.headers  # stateless: any process answers


async def test_missing_wrong_and_revoked_keys_are_401(alice, alice_key):
    for secret in (None, "", "mc-not-a-key", alice_key + "x"):
        async with http(secret, ACCEPT) as raw:
            assert_401(await raw.post("/mcp", json=INITIALIZE))
            assert_401(await raw.get("/mcp"))
    async with http(headers={"Authorization": f"Basic {alice_key}", **ACCEPT}) as raw:
        assert_401(await raw.post("/mcp", json=INITIALIZE))
    key = await sync_to_async(ApiKey.objects.get)(user=alice)
    await sync_to_async(key_revoke)(key=key, actor=alice)
    async with http(alice_key, ACCEPT) as raw:
        assert_401(await raw.post("/mcp", json=INITIALIZE))


async def test_the_sdk_client_is_refused_without_a_valid_key(alice, alice_key):
    """The client fails to connect: nothing is read or written."""
    await sync_to_async(get_user_model().objects.filter(pk=alice.pk).update)(is_active=False)
    for secret in (None, "mc-wrong", alice_key):
        with pytest.raises(ExceptionGroup) as raised:
            async with client(secret) as session:
                await call(session, "remember", kind="fact", text="I like tea")
        assert raised.group_contains(MCPError, match="error response", depth=None)
    assert await rows(Fact, user=alice) == []


async def test_a_session_cookie_does_not_open_mcp(alice):
    """A signed-in browser (or a cross-site page riding its cookie) gets nothing."""
    cookie = await session_cookie(alice)
    async with http(headers={"Cookie": f"sessionid={cookie}", **ACCEPT}) as raw:
        assert_401(await raw.post("/mcp", json=INITIALIZE))


async def test_a_host_django_refuses_is_refused(alice_key):
    async with http(alice_key, {"Host": "evil.example", **ACCEPT}) as raw:
        response = await raw.post("/mcp", json=INITIALIZE)
    assert response.status_code == 400


async def test_the_key_that_opens_mcp_opens_no_web_page(alice_key):
    """Through the same ASGI app: each page sends the key's bearer to the login page."""
    async with http(alice_key) as raw:
        assert (await raw.post("/mcp", json=INITIALIZE, headers=ACCEPT)).status_code == 200
        for path in ("/", "/memory/", "/profile/", "/account/export/", "/staff/"):
            response = await raw.get(path)
            assert response.status_code == 302, path
            assert response.headers["location"].startswith("/accounts/login/"), path


async def test_a_tool_is_called_with_one_plain_post(alice, alice_key):
    """The curl example of docs/api.md: no handshake, no session, one JSON answer."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "remember", "arguments": {"kind": "fact", "text": "I like tea"}},
    }
    async with http(alice_key, ACCEPT) as raw:
        response = await raw.post("/mcp", json=body)
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["memory"]["text"] == "I like tea"
    assert [fact.text for fact in await rows(Fact, user=alice)] == ["I like tea"]


async def test_past_the_per_minute_limit_it_is_429_with_retry_after(alice_key, settings):
    settings.MEMORYCHAT_MCP_REQUESTS_PER_MINUTE = 2
    async with http(alice_key, ACCEPT) as raw:
        answers = [await raw.post("/mcp", json=INITIALIZE) for _ in range(3)]
    assert [a.status_code for a in answers] == [200, 200, 429]
    assert int(answers[2].headers["Retry-After"]) >= 1
    assert answers[2].json()["error"] == "rate_limited"
