"""Faults a public chat service meets, with real processes: Redis restarted during a chat, the
database briefly unreachable, the server killed mid-stream. Each time the user's message is
kept, the page is told what happened, retry works and nothing is duplicated."""

from __future__ import annotations

import asyncio
import subprocess
import time

import pytest

from tests.support.live_server import ServerProcess, free_port
from tests.support.tcp_proxy import TcpProxy
from tests.support.ws_client import ChatSocket, login_cookie, new_conversation, run_async

pytestmark = pytest.mark.scaleout
PASSWORD = "alice-password-1"


class RedisServer:
    def __init__(self):
        self.port = free_port()
        self.process = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        import redis

        for _ in range(100):
            try:
                redis.Redis.from_url(self.url).ping()
                return self
            except redis.ConnectionError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def kill(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def app(scaleout_env):
    """Start a server with extra settings; stopped at the end of the test."""
    started = []

    def start(**overrides):
        server = ServerProcess({**scaleout_env["env"], **overrides}).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def stored(sql, conversation_id):
    return sql(
        "SELECT role, status, content FROM chat_message WHERE conversation_id = %s ORDER BY id",
        (conversation_id,),
    )


def chunks(frames):
    return "".join(f["text"] for f in frames if f["type"] == "chunk")


def test_redis_restarted_during_a_chat(app, fake_upstream, sql):
    """With Redis gone the sender still gets its reply, stored once; when Redis is back the
    other tab gets live frames again."""
    redis_server = RedisServer().start()
    server = app(REDIS_URL=redis_server.url)
    fake_upstream.behaviour.reply = "alpha beta gamma delta"
    fake_upstream.behaviour.interval = 0.01
    session = login_cookie(server.url, "alice", PASSWORD)
    conversation = new_conversation(server.url, session)

    async def scenario():
        async with (
            ChatSocket(server.url, session, conversation) as sender,
            ChatSocket(server.url, session, conversation) as watcher,
        ):
            await asyncio.sleep(0.5)  # the tabs hear of each other
            await sender.send({"type": "send", "text": "before", "client_id": "r-1"})
            await sender.until("reply_end")
            assert "alpha beta gamma delta" in (await watcher.until("reply_end"))[-1]["html"]

            redis_server.kill()
            await sender.send({"type": "send", "text": "during", "client_id": "r-2"})
            during = await sender.until("reply_end")
            assert during[-1]["status"] == "complete"
            assert chunks(during) == "alpha beta gamma delta"

            redis_server.start()  # same port, empty: the groups are gone
            await asyncio.sleep(6)  # the consumers rejoin their group
            await sender.send({"type": "send", "text": "after", "client_id": "r-3"})
            await sender.until("reply_end")
            seen = await watcher.until("reply_end")
            assert [f["type"] for f in seen if f["type"] == "user_message"]
            assert "alpha beta gamma delta" in seen[-1]["html"]

    try:
        run_async(scenario())
    finally:
        redis_server.kill()
    rows = stored(sql, conversation)
    assert [(r[0], r[1]) for r in rows] == [("user", "complete"), ("assistant", "complete")] * 3
    assert [r[2] for r in rows if r[0] == "user"] == ["before", "during", "after"]


def test_the_database_briefly_unavailable(app, scaleout_env, fake_upstream, sql):
    """A reply streaming while the database drops is stored once it is back; a message sent
    while it is down is refused clearly and goes through on the resend, once."""
    proxy = TcpProxy(5432)
    database = scaleout_env["database"]
    server = app(DATABASE_URL=f"postgres://postgres@127.0.0.1:{proxy.port}/{database}")
    fake_upstream.behaviour.reply = " ".join(f"w{i}" for i in range(40))
    fake_upstream.behaviour.interval = 0.05
    session = login_cookie(server.url, "alice", PASSWORD)
    conversation = new_conversation(server.url, session)

    async def scenario():
        async with ChatSocket(server.url, session, conversation) as socket:
            await socket.send({"type": "send", "text": "first", "client_id": "d-1"})
            await socket.until("chunk")
            proxy.cut()  # mid-stream
            await asyncio.sleep(1.5)
            proxy.restore()
            first = await socket.until("reply_end")
            assert first[-1]["status"] == "complete", first[-1]

            proxy.cut()
            await socket.send({"type": "send", "text": "second", "client_id": "d-2"})
            refused = await socket.until("error")
            assert refused[-1]["code"] == "unavailable" and refused[-1]["client_id"] == "d-2"
            proxy.restore()
            await socket.send({"type": "send", "text": "second", "client_id": "d-2"})
            second = await socket.until("reply_end")
            assert second[-1]["status"] == "complete"

    try:
        run_async(scenario())
    finally:
        proxy.close()
    rows = stored(sql, conversation)
    assert [(r[0], r[1]) for r in rows] == [("user", "complete"), ("assistant", "complete")] * 2
    assert rows[1][2] == fake_upstream.behaviour.reply


def test_the_server_killed_mid_stream(app, fake_upstream, sql):
    """The reply of a killed server shows as interrupted (with what was saved), never
    'streaming' forever; Retry answers the kept message in the same reply row."""
    server = app(STREAM_LEASE_SECONDS="2")
    fake_upstream.behaviour.reply = " ".join(f"k{i}" for i in range(100))
    fake_upstream.behaviour.interval = 0.05
    session = login_cookie(server.url, "alice", PASSWORD)
    conversation = new_conversation(server.url, session)

    async def start_reply():
        async with ChatSocket(server.url, session, conversation) as socket:
            await socket.send({"type": "send", "text": "long answer please", "client_id": "k-1"})
            await socket.until("chunk")
            await asyncio.sleep(1.5)  # long enough for a checkpoint of the partial text
            server.kill()

    run_async(start_reply())
    time.sleep(2.5)  # the reply's lease runs out
    server.start()

    async def after_restart():
        async with ChatSocket(server.url, session, conversation) as socket:
            assert socket.ready["streaming"] is None  # opening the page found it dead
            rows = stored(sql, conversation)
            assert rows[1][1] == "interrupted" and rows[1][2].startswith("k0")
            (user_id,) = sql(
                "SELECT id FROM chat_message WHERE conversation_id = %s AND role = 'user'",
                (conversation,),
            )[0]
            await socket.send({"type": "retry", "message_id": user_id})
            return await socket.until("reply_end")

    frames = run_async(after_restart())
    assert frames[-1]["status"] == "complete"
    rows = stored(sql, conversation)
    assert [(r[0], r[1]) for r in rows] == [("user", "complete"), ("assistant", "complete")]
