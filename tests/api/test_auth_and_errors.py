"""/v1 is opened by a personal key and nothing else, and a key opens nothing but /v1; every
refusal is in OpenAI's error shape."""

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.test import Client
from django.urls import reverse

from chat.models import Conversation
from profiles.keys import key_revoke
from profiles.models import ApiKey
from tests.api.conftest import http, rows

pytestmark = pytest.mark.django_db(transaction=True)

BODY = {"model": "", "messages": [{"role": "user", "content": "hi"}]}


def body(**changes):
    return {**BODY, "model": settings.OPENAI_MODEL, **changes}


def assert_openai_error(response, status, code=None):
    assert response.status_code == status
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["message"]
    if code is not None:
        assert error["code"] == code
    return error


@sync_to_async
def session_cookie(user) -> str:
    web = Client()
    web.force_login(user)
    return web.cookies["sessionid"].value


async def test_missing_wrong_and_revoked_keys_are_401(alice, alice_key):
    for secret in (None, "", "mc-not-a-key", alice_key + "x"):
        async with http(secret) as api:
            for response in (
                await api.get("/models"),
                await api.post("/chat/completions", json=body()),
            ):
                assert_openai_error(response, 401, "invalid_api_key")
                assert response.headers["WWW-Authenticate"] == "Bearer"
    async with http(headers={"Authorization": f"Basic {alice_key}"}) as api:
        assert_openai_error(await api.get("/models"), 401)
    key = await sync_to_async(ApiKey.objects.get)(user=alice)
    await sync_to_async(key_revoke)(key=key, actor=alice)
    async with http(alice_key) as api:
        assert_openai_error(await api.post("/chat/completions", json=body()), 401)
    assert await rows(Conversation, user=alice) == []


async def test_a_session_cookie_does_not_open_v1(alice):
    """No key, a signed-in browser's cookie: refused, so a cross-site form cannot chat."""
    cookie = await session_cookie(alice)
    async with http(headers={"Cookie": f"sessionid={cookie}"}) as api:
        assert_openai_error(await api.post("/chat/completions", json=body()), 401)
        assert_openai_error(await api.get("/models"), 401)
    assert await rows(Conversation, user=alice) == []


def test_a_key_opens_no_web_page(alice, alice_key):
    """A key sent to the web pages is nobody: each sends it to the login page."""
    web = Client(headers={"Authorization": f"Bearer {alice_key}"})
    names = ("chat:home", "profiles:profile", "memory:page", "userdata:export", "staff:home")
    for url in map(reverse, names):
        response = web.get(url)
        assert response.status_code == 302 and response.url.startswith("/accounts/login/"), url


async def test_malformed_bodies_are_400_with_the_apps_own_checks(alice, alice_key, settings):
    settings.MEMORYCHAT_MAX_MESSAGE_CHARS = 50
    cases = [
        (b"not json", None),
        (b"[]", None),
        (body(model=None), None),
        (body(messages=[]), None),
        (body(messages=[{"role": "user", "content": "   "}]), "empty"),
        (body(messages=[{"role": "user", "content": "x" * 51}]), "too_long"),
        (body(messages=[{"role": "assistant", "content": "hi"}]), None),
        (body(messages=[{"role": "tool", "content": "hi"}]), None),
        (body(messages=[{"role": "user", "content": [{"type": "image_url"}]}]), None),
        (body(stream="yes"), None),
        (body(n=2), None),
    ]
    async with http(alice_key) as api:
        for sent, code in cases:
            if isinstance(sent, bytes):
                response = await api.post("/chat/completions", content=sent)
            else:
                response = await api.post("/chat/completions", json=sent)
            error = assert_openai_error(response, 400, code)
            assert error["type"] == "invalid_request_error", sent
        parts = [{"type": "text", "text": "Hello "}, {"type": "text", "text": "parts"}]
        ok = await api.post(
            "/chat/completions", json=body(messages=[{"role": "user", "content": parts}])
        )
        assert ok.status_code == 200
        one = await api.post("/chat/completions", json=body(n=1))
        assert one.status_code == 200
    assert len(await rows(Conversation, user=alice)) == 2


async def test_an_unknown_model_is_404_and_methods_are_checked(alice_key):
    async with http(alice_key) as api:
        error = assert_openai_error(
            await api.post("/chat/completions", json=body(model="no-such-model")),
            404,
            "model_not_found",
        )
        assert error["param"] == "model"
        assert_openai_error(await api.get("/chat/completions"), 405)
        assert_openai_error(await api.post("/models"), 405)


async def test_v1_keeps_the_sites_host_check_and_security_headers(alice, alice_key):
    """/v1 runs beside the pages' middleware (api.asgi), not without what guards every
    request: the allowed hosts, the security headers; and no session is ever touched."""
    async with http(alice_key) as api:
        response = await api.get("/models")
        assert response.status_code == 200
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert int(response.headers["Content-Length"]) == len(response.content)
        assert "set-cookie" not in response.headers
        foreign = await api.get("/models", headers={"Host": "evil.example"})
        assert foreign.status_code == 400
