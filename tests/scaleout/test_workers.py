"""`make serve`'s shape: uvicorn with 2 worker processes on one Redis channel layer and one
PostgreSQL database, many chats at once (bench/README.md "stream" gives its figures)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from tests.support.live_server import ServerProcess, manage
from tests.support.ws_client import ChatSocket, login_cookie, new_conversation

pytestmark = pytest.mark.scaleout

CHATS = 12


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        found += [int(child) for child in task.read_text().split()]
    return found


@pytest.fixture(scope="module")
def two_workers(scaleout_env):
    server = ServerProcess(scaleout_env["env"], server="uvicorn", workers=2).start(timeout=60)
    deadline = time.monotonic() + 30
    while len(_children(server.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    yield server
    server.stop()


def test_two_workers_serve_concurrent_chats_each_reply_exact_and_stored_once(
    two_workers, scaleout_env, fake_upstream, sql
):
    assert len(_children(two_workers.pid)) == 2  # uvicorn's 2 worker processes
    fake_upstream.behaviour.reply = " ".join(f"w{i}" for i in range(40))
    fake_upstream.behaviour.interval = 0.01
    manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; U = get_user_model();"
        " U.objects.filter(username='wkr').exists() or"
        " U.objects.create_user('wkr', password='wkr-password-1')",
        env=scaleout_env["env"],
    )
    session = login_cookie(two_workers.url, "wkr", "wkr-password-1")
    conversations = [new_conversation(two_workers.url, session) for _ in range(CHATS)]

    async def chat(conversation_id: int, i: int) -> list[str]:
        replies = []
        async with ChatSocket(two_workers.url, session, conversation_id) as socket:
            for turn in range(2):
                await socket.send({"type": "send", "text": f"chat {i} turn {turn}"})
                frames = await socket.until("reply_end", timeout=60)
                text = "".join(f["text"] for f in frames if f["type"] == "chunk")
                assert frames[-1]["status"] == "complete", frames[-1]
                replies.append(text)
        return replies

    # More than MAX_CONCURRENT_STREAMS replies of one user at once would be refused: the chats
    # run in groups of three.
    results = []
    for start in range(0, CHATS, 3):
        group = conversations[start : start + 3]

        async def some(group=group, start=start):
            return await asyncio.gather(*(chat(c, start + i) for i, c in enumerate(group)))

        results += asyncio.run(some())
    assert all(reply == fake_upstream.behaviour.reply for r in results for reply in r)
    rows = sql(
        "SELECT role, status, count(*) FROM chat_message WHERE conversation_id = ANY(%s)"
        " GROUP BY role, status ORDER BY role",
        (conversations,),
    )
    assert rows == [("assistant", "complete", 2 * CHATS), ("user", "complete", 2 * CHATS)]
