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


async def connected(user, conversation_id):
    socket = await open_socket(user, conversation_id)
    ok, code = await socket.connect()
    assert ok, code
    ready = await socket.receive_json_from()
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


async def settle():
    await asyncio.sleep(0)
