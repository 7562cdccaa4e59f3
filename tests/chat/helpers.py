"""Helpers for websocket tests: a signed-in communicator on the real ASGI stack."""

from __future__ import annotations

import asyncio

from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from config.asgi import application


@sync_to_async
def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


async def open_socket(user, conversation_id, *, origin=b"http://localhost", host=b"localhost"):
    headers = [(b"origin", origin), (b"host", host)]
    if user is not None:
        headers.append((b"cookie", f"sessionid={await session_cookie(user)}".encode()))
    return WebsocketCommunicator(application, f"/ws/chat/{conversation_id}/", headers=headers)


# Channels' communicator waits 1 s by default: on a busy shared machine a connect (a thread
# trip for the socket's slot, one for the conversation, one for its state) can take longer.
CONNECT_TIMEOUT = 10.0


async def connected(user, conversation_id):
    socket = await open_socket(user, conversation_id)
    ok, code = await socket.connect(timeout=CONNECT_TIMEOUT)
    assert ok, code
    ready = await socket.receive_json_from(timeout=CONNECT_TIMEOUT)
    assert ready["type"] == "ready"
    return socket


async def frames_until(socket, frame_type, timeout=10.0):
    """Every frame received up to and including the first of ``frame_type``."""
    frames = []
    while True:
        frame = await socket.receive_json_from(timeout=timeout)
        frames.append(frame)
        if frame["type"] == frame_type:
            return frames


async def turn(socket, text: str, client_id: str | None = None) -> list[dict]:
    """``text`` sent as a message: every frame up to and including its reply's end."""
    frame = {"type": "send", "text": text}
    if client_id is not None:
        frame["client_id"] = client_id
    await socket.send_json_to(frame)
    return await frames_until(socket, "reply_end")


async def turn_end(socket, text: str, client_id: str | None = None) -> dict:
    """``text`` sent as a message: its reply's end frame."""
    return (await turn(socket, text, client_id))[-1]


def reply_text(frames) -> str:
    """A reply's text as its chunks carried it."""
    return "".join(f["text"] for f in frames if f["type"] == "chunk")


async def settle():
    await asyncio.sleep(0)
