"""``/mcp``: the MCP server's streamable HTTP endpoint, mounted beside Django in the ASGI app
(``config/asgi.py``). A request is checked here (the Host as Django checks it, then the
personal API key: ``profiles.keys``; nothing else opens it, a session cookie included), then
answered by the SDK's session manager, which runs the tools (``mcp_server.tools``).

Stateless and with JSON answers: every request stands alone, so any server process may take
it (several processes behind a load balancer share no session), and nothing is held open.
The SDK's manager needs a task group running for as long as it serves; daphne sends no ASGI
lifespan events, so each event loop starts its own manager on the first request, in a task
of that loop (uvicorn's lifespan shutdown stops them: ``lifespan``)."""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import weakref

from channels.db import database_sync_to_async
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from chat.limits import Verdict, hit
from mcp_server.tools import server
from profiles.keys import key_user

logger = logging.getLogger(__name__)

PATH = "/mcp"


async def _respond(send, status: int, body: dict, headers: tuple = ()) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


def _header(scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return ""


def _host_allowed(scope) -> bool:
    """Django's ALLOWED_HOSTS rule, as its pages get it (this path does not pass through
    Django's request handling)."""
    domain, _port = split_domain_port(_header(scope, b"host"))
    allowed = settings.ALLOWED_HOSTS
    if settings.DEBUG and not allowed:
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return bool(domain) and validate_host(domain, allowed)


def _secret(scope) -> str:
    scheme, _, secret = _header(scope, b"authorization").partition(" ")
    return secret.strip() if scheme.lower() == "bearer" else ""


def _admit_now(secret: str):
    """The key's user (None: no such key) and whether this request is within their
    per-minute limit: one thread trip (the key's row, the cache's counter)."""
    user = key_user(secret)
    if user is None:
        return None, Verdict(True)
    limit = settings.MEMORYCHAT_MCP_REQUESTS_PER_MINUTE
    return user, hit(f"mcp:{user.pk}", limit=limit, window=60)


_admit = database_sync_to_async(_admit_now, thread_sensitive=False)


class _Running:
    """One session manager running in a task of one event loop, for the loop's lifetime."""

    def __init__(self):
        # Each call builds a new manager (one runs once); only the manager is kept.
        server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            # The Host is checked above; a key, not a cookie, opens it: no rebinding risk.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        self.manager: StreamableHTTPSessionManager = server.session_manager
        self.started = asyncio.get_running_loop().create_future()
        self.stop = asyncio.Event()
        # A context of its own: not the first request's (its user, its history channel).
        self.task = asyncio.get_running_loop().create_task(
            self._run(), context=contextvars.Context()
        )

    async def _run(self) -> None:
        try:
            async with self.manager.run():
                self.started.set_result(None)
                await self.stop.wait()
        except BaseException as error:
            if not self.started.done():
                self.started.set_exception(RuntimeError("the MCP session manager did not start"))
            if not isinstance(error, asyncio.CancelledError):
                logger.exception("the MCP session manager stopped")
            raise


_running: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Running] = (
    weakref.WeakKeyDictionary()
)


async def _manager() -> StreamableHTTPSessionManager:
    loop = asyncio.get_running_loop()
    running = _running.get(loop)
    if running is None or running.task.done():
        running = _running[loop] = _Running()
    await asyncio.shield(running.started)
    return running.manager


async def stop() -> None:
    """End this event loop's manager, if it started (a server's shutdown)."""
    running = _running.pop(asyncio.get_running_loop(), None)
    if running is not None:
        running.stop.set()
        await asyncio.gather(running.task, return_exceptions=True)


async def endpoint(scope, receive, send) -> None:
    """The ASGI app of ``/mcp``: 400 for a host Django would refuse, 401 without a valid key
    (no key, a wrong or revoked one, a session cookie), 429 past the user's per-minute
    limit, else the MCP server as the key's user."""
    if not _host_allowed(scope):
        await _respond(send, 400, {"error": "bad_request", "error_description": "Bad host."})
        return
    secret = _secret(scope)
    user, verdict = await _admit(secret) if secret else (None, Verdict(True))
    if user is None:
        description = "Send your API key as 'Authorization: Bearer <key>'."
        if secret:
            description = "Incorrect or revoked API key."
        challenge = f'Bearer error="invalid_token", error_description="{description}"'
        await _respond(
            send,
            401,
            {"error": "invalid_token", "error_description": description},
            ((b"www-authenticate", challenge.encode()),),
        )
        return
    if not verdict.allowed:
        wait = str(verdict.retry_after)
        message = f"Too many requests: try again in {wait} s."
        body = {"error": "rate_limited", "error_description": message}
        await _respond(send, 429, body, ((b"retry-after", wait.encode()),))
        return
    # The tools read the user from the request's state (starlette's Request.state).
    scope = {**scope, "state": {**scope.get("state", {}), "user": user}}
    await (await _manager()).handle_request(scope, receive, send)


async def lifespan(scope, receive, send) -> None:
    """ASGI lifespan (uvicorn sends it; daphne does not): nothing to start (the manager
    starts with the first request), the manager stopped at shutdown."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await stop()
            await send({"type": "lifespan.shutdown.complete"})
            return
