"""Turns set up in a process of their own (chat.setup_workers, SETUP_PROCESSES): the context
is built and the message stored there, against the same database, with what the page and
the model see unchanged."""

import asyncio
import os
import pickle
import signal
import subprocess
import sys
import time
import types
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings
from django.utils import timezone

from chat import setup_workers
from chat.models import Conversation, Message
from chat.protocol import FrameError
from chat.services import ChatError, message_create
from memory.models import SystemPrompt
from memory.report import Block
from tests.chat import setup_jobs
from tests.chat.helpers import connected, frames_until

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module", autouse=True)
def stop_workers_after():
    yield
    setup_workers.shutdown()


@pytest.fixture
def processes(settings):
    settings.MEMORYCHAT_SETUP_PROCESSES = 1
    yield
    setup_workers._broken_at, setup_workers._paused_until = None, 0.0


def reply_text(frames):
    return "".join(f["text"] for f in frames if f["type"] == "chunk")


async def turn(socket, text, **extra):
    await socket.send_json_to({"type": "send", "text": text, **extra})
    return await frames_until(socket, "reply_end", timeout=30.0)


def test_a_refusal_keeps_its_code_across_processes():
    """What a set-up refuses reaches the page with its code (busy, too_long, ...)."""
    for error in (ChatError("A reply is still being written.", code="busy"), FrameError("x")):
        again = pickle.loads(pickle.dumps(error))  # noqa: S301 (our own bytes)
        assert type(again) is type(error)
        assert (again.message, again.code, str(again)) == (error.message, error.code, str(error))


async def test_a_turn_set_up_in_a_process_streams_and_stores_once(
    processes, aconversation, alice, fake_llm
):
    """The first message is answered, titled and stored once; the next turn's context,
    built in the set-up process, holds the first exchange."""
    fake_llm.behaviour.reply = "Lisbon in May is warm."
    socket = await connected(alice, aconversation.pk)
    first = await turn(socket, "Plan a trip to Lisbon in May", client_id="t-1")
    assert setup_workers.worker_pids(), "no set-up process ran"
    second = await turn(socket, "And in June?", client_id="t-2")
    await socket.disconnect()

    assert [f["type"] for f in first[:3]] == ["user_message", "title", "reply_start"]
    assert first[0]["client_id"] == "t-1"
    assert reply_text(first) == reply_text(second) == "Lisbon in May is warm."
    conversation = await Conversation.objects.aget(pk=aconversation.pk)
    assert conversation.title == "Plan a trip to Lisbon in May"
    rows = [
        (m.role, m.content, m.status)
        async for m in Message.objects.filter(conversation=aconversation).order_by("id")
    ]
    assert rows == [
        ("user", "Plan a trip to Lisbon in May", "complete"),
        ("assistant", "Lisbon in May is warm.", "complete"),
        ("user", "And in June?", "complete"),
        ("assistant", "Lisbon in May is warm.", "complete"),
    ]
    sent = fake_llm.chat_requests()[-1]["body"]["messages"]
    assert [m["content"] for m in sent[1:]] == [
        "Plan a trip to Lisbon in May",
        "Lisbon in May is warm.",
        "And in June?",
    ]
    reply = await Message.objects.filter(role="assistant").alast()
    assert reply.context_report["blocks"][0]["name"] == Block.SYSTEM


async def test_a_new_system_prompt_reaches_the_set_up_process(
    processes, aconversation, alice, fake_llm
):
    """The worker keeps the prompt cached like the server; a new version saved in the
    server is sent on the next turn all the same."""
    socket = await connected(alice, aconversation.pk)
    await turn(socket, "hello")
    await SystemPrompt.objects.acreate(version=5, text="Answer like a pirate.")
    await turn(socket, "hello again")
    await socket.disconnect()
    sent = fake_llm.chat_requests()[-1]["body"]["messages"]
    assert sent[0] == {"role": "system", "content": "Answer like a pirate."}
    reply = await Message.objects.filter(role="assistant").alast()
    assert reply.system_prompt_version == 5


async def test_a_busy_conversation_is_refused_from_the_process(
    processes, aconversation, alice, fake_llm
):
    """The busy check runs in the set-up process; the page gets its words and code, and
    nothing is stored."""

    @sync_to_async
    def leave_streaming():
        asked = message_create(conversation=aconversation, role="user", content="hi")
        message_create(
            conversation=aconversation,
            role="assistant",
            content="",
            status="streaming",
            reply_to=asked,
        )
        Message.objects.filter(status="streaming").update(
            lease_expires_at=timezone.now() + timedelta(minutes=5)
        )

    await leave_streaming()
    socket = await connected(alice, aconversation.pk)
    await socket.send_json_to({"type": "send", "text": "another", "client_id": "b-1"})
    error = await frames_until(socket, "error", timeout=30.0)
    await socket.disconnect()
    assert error[-1]["code"] == "busy" and error[-1]["client_id"] == "b-1"
    assert "still being written" in error[-1]["message"]
    assert await Message.objects.filter(role="user").acount() == 1


async def test_a_killed_set_up_process_is_replaced(processes, aconversation, alice, fake_llm):
    """A worker that died: the turn that finds it is set up in a thread, answered and
    stored once; the next one has a new worker."""
    socket = await connected(alice, aconversation.pk)
    await turn(socket, "first")
    before = setup_workers.worker_pids()
    for pid in before:
        os.kill(pid, signal.SIGKILL)
    second = await turn(socket, "second", client_id="k-2")
    third = await turn(socket, "third", client_id="k-3")
    await socket.disconnect()
    assert second[-1]["status"] == third[-1]["status"] == "complete"
    assert setup_workers.worker_pids() and not setup_workers.worker_pids() & before
    contents = [
        m async for m in Message.objects.filter(role="user").values_list("content", flat=True)
    ]
    assert sorted(contents) == ["first", "second", "third"]


async def test_a_pool_that_keeps_breaking_is_paused(processes, aconversation, alice, fake_llm):
    """Broken twice within a minute: set-ups run in threads for a while rather than start
    a process a turn; every turn is still answered."""

    def kill_workers():
        for pid in setup_workers.worker_pids():
            os.kill(pid, signal.SIGKILL)

    socket = await connected(alice, aconversation.pk)
    frames = [await turn(socket, "a")]
    kill_workers()
    frames.append(await turn(socket, "b"))  # finds it broken: replaced at once
    assert setup_workers.enabled()
    frames.append(await turn(socket, "c"))  # a new worker
    assert setup_workers.worker_pids()
    kill_workers()
    frames.append(await turn(socket, "d"))  # broken again within a minute
    assert not setup_workers.enabled()
    frames.append(await turn(socket, "e"))  # in a thread
    await socket.disconnect()
    assert [f[-1]["status"] for f in frames] == ["complete"] * 5
    assert await Message.objects.filter(role="assistant", status="complete").acount() == 5


async def test_a_refused_rate_limit_stores_nothing(
    processes, aconversation, alice, fake_llm, settings
):
    """The per-minute count stays in the server (its cache), beside the process's build."""
    settings.MEMORYCHAT_MESSAGES_PER_MINUTE = 1
    socket = await connected(alice, aconversation.pk)
    await turn(socket, "one")
    await socket.send_json_to({"type": "send", "text": "two", "client_id": "r-2"})
    error = await frames_until(socket, "error", timeout=30.0)
    await socket.disconnect()
    assert error[-1]["code"] == "rate_limited" and error[-1]["client_id"] == "r-2"
    assert await Message.objects.filter(role="user").acount() == 1


def bare_conversation():
    return types.SimpleNamespace(title="", updated_at=None)


async def test_a_large_result_comes_back_whole(processes):
    """A result far larger than the socket's buffer is read over many reads, intact."""
    pid, data = await setup_workers.run(
        setup_jobs.echo, conversation=bare_conversation(), size=3_000_000
    )
    assert pid in setup_workers.worker_pids() and data == b"x" * 3_000_000


async def test_an_error_in_the_process_is_raised_with_where_it_came_from(processes):
    with pytest.raises(ValueError, match="on purpose") as raised:
        await setup_workers.run(setup_jobs.fail, conversation=bare_conversation())
    assert "setup_jobs.py" in str(raised.value.__cause__)
    # The worker lives on.
    pid, _ = await setup_workers.run(setup_jobs.echo, conversation=bare_conversation())
    assert pid in setup_workers.worker_pids()


async def test_jobs_wait_their_turn_and_a_cancelled_ones_reply_is_not_taken(processes):
    """One worker: jobs sent together are done one after another, first come first served;
    a job whose turn went away (cancelled mid-way) leaves its reply unread, and the next
    job on that worker gets its own reply, not that one."""
    slow = asyncio.ensure_future(
        setup_workers.run(setup_jobs.echo, conversation=bare_conversation(), size=1, delay=0.3)
    )
    await asyncio.sleep(0.1)
    slow.cancel()
    results = await asyncio.gather(
        *(
            setup_workers.run(setup_jobs.echo, conversation=bare_conversation(), size=n)
            for n in (2, 3, 4)
        )
    )
    assert [len(data) for _, data in results] == [2, 3, 4]
    with pytest.raises(asyncio.CancelledError):
        await slow


_SERVER = """
import asyncio, os, time, types
import django
from django.conf import settings

if __name__ == "__main__":
    django.setup()
    settings.MEMORYCHAT_SETUP_PROCESSES = 1
    from chat import setup_workers
    from chat.setup_process import ping
    setup_workers.warm()
    conversation = types.SimpleNamespace(title="", updated_at=None)
    print(asyncio.run(setup_workers.run(ping, conversation=conversation)), flush=True)
    time.sleep(60)
"""


def test_a_set_up_process_ends_with_its_killed_server(tmp_path):
    """A server killed outright leaves no set-up process behind."""
    script = tmp_path / "server.py"
    script.write_text(_SERVER)
    server = subprocess.Popen(
        [sys.executable, str(script)],
        env={**os.environ, "PYTHONPATH": str(settings.BASE_DIR)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        worker = int(server.stdout.readline())
        server.kill()
        server.wait(10)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and alive(worker):
            time.sleep(0.05)
        assert not alive(worker)
    finally:
        server.kill()


def alive(pid: int) -> bool:
    """Running (an exited child not yet reaped by init is a zombie: not running)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False
