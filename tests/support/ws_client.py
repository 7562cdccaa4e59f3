"""A websocket chat client for tests and benchmarks against real server processes (the
`websockets` library), signed in with a session cookie obtained through the real login form."""

from __future__ import annotations

import asyncio
import json
import re

import httpx2
from websockets.asyncio.client import connect


def login_cookie(base_url: str, username: str, password: str) -> str:
    """Log in through /accounts/login/ and return the session cookie value."""
    with httpx2.Client(base_url=base_url, follow_redirects=False, timeout=10) as http:
        page = http.get("/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text).group(1)
        response = http.post(
            "/accounts/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": token},
            headers={"Referer": f"{base_url}/accounts/login/"},
        )
        assert response.status_code == 302, response.text[:500]
        return http.cookies["sessionid"]


def new_conversation(base_url: str, session: str) -> int:
    with httpx2.Client(base_url=base_url, timeout=10, cookies={"sessionid": session}) as http:
        http.get("/")
        token = http.cookies["csrftoken"]
        response = http.post(
            "/c/new/",
            headers={"X-CSRFToken": token, "Accept": "application/json", "Referer": f"{base_url}/"},
        )
        assert response.status_code == 201, response.text[:500]
        return response.json()["id"]


def run_async(coroutine):
    """asyncio.run in a thread of its own: a browser test's Playwright may already run a loop
    in this one."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


class NotReady(AssertionError):
    """The server's first frame was not ``ready``."""


class ChatSocket:
    """One browser tab on one conversation. ``base_url`` is the server's address, http(s) or
    ws(s); the origin header is its http(s) form, as a page's would be."""

    not_ready: type[Exception] = NotReady  # raised by connect (a benchmark counts its own)

    def __init__(self, base_url: str, session: str, conversation_id: int):
        self.origin = base_url.replace("ws://", "http://", 1).replace("wss://", "https://", 1)
        self.url = self.origin.replace("http", "ws", 1) + f"/ws/chat/{conversation_id}/"
        self.headers = {"Cookie": f"sessionid={session}"}
        self.session = session
        self.conversation_id = conversation_id
        self.connection = None
        self.ready: dict | None = None

    async def connect(
        self, timeout: float = 10.0, ready_timeout: float = 15.0, **options
    ) -> ChatSocket:
        """Open the socket and read its ``ready`` frame; ``options`` go to websockets."""
        self.connection = await connect(
            self.url,
            origin=self.origin,
            additional_headers=self.headers,
            open_timeout=timeout,
            **options,
        )
        self.ready = await self.receive(ready_timeout)
        if self.ready.get("type") != "ready":
            raise self.not_ready(f"expected a ready frame, got {self.ready}")
        return self

    async def close(self) -> None:
        if self.connection is not None:
            await self.connection.close()

    async def __aenter__(self) -> ChatSocket:
        return await self.connect()

    async def __aexit__(self, *exc) -> None:
        await self.close()

    async def send(self, frame: dict) -> None:
        await self.connection.send(json.dumps(frame))

    async def receive(self, timeout: float = 15.0) -> dict:
        return json.loads(await asyncio.wait_for(self.connection.recv(), timeout))

    async def until(self, frame_type: str, timeout: float = 30.0) -> list[dict]:
        frames = []
        while True:
            frames.append(await self.receive(timeout))
            if frames[-1]["type"] == frame_type:
                return frames
