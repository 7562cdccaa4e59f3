"""Abuse limits: each refusal is a clear message and leaves nothing half-stored."""

import threading
import time
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model

from chat import limits, services
from chat.consumers import CLOSE_TOO_MANY_SOCKETS
from chat.models import Message
from chat.services import ChatError, conversation_create, turn_begin
from tests.chat.helpers import connected, frames_until, open_socket, turn_end

pytestmark = pytest.mark.django_db(transaction=True)


async def test_too_many_messages_a_minute_are_refused(
    aconversation, alice, settings, fake_llm, monkeypatch
):
    """Past MESSAGES_PER_MINUTE the message is refused with when to retry; nothing stored."""
    monkeypatch.setattr(limits.time, "time", lambda: 1_800_000_030.0)  # mid-window, fixed
    settings.MEMORYCHAT_MESSAGES_PER_MINUTE = 2
    socket = await connected(alice, aconversation.pk)
    for n in range(2):
        await socket.send_json_to({"type": "send", "text": f"message {n}"})
        await frames_until(socket, "reply_end")
    await socket.send_json_to({"type": "send", "text": "one too many", "client_id": "x3"})
    error = await socket.receive_json_from()
    await socket.disconnect()
    assert error["code"] == "rate_limited" and error["client_id"] == "x3"
    assert "too fast" in error["message"] and "try again in" in error["message"]
    assert await Message.objects.filter(role="user").acount() == 2


async def test_concurrent_streams_per_user_are_capped(alice, settings, fake_llm):
    """A second simultaneous reply beyond MAX_CONCURRENT_STREAMS is refused."""
    settings.MEMORYCHAT_MAX_CONCURRENT_STREAMS = 1
    fake_llm.behaviour.reply = " ".join(["slow"] * 100)
    fake_llm.behaviour.interval = 0.02
    first = await sync_to_async(conversation_create)(user=alice)
    second = await sync_to_async(conversation_create)(user=alice)
    socket_one = await connected(alice, first.pk)
    socket_two = await connected(alice, second.pk)
    await socket_one.send_json_to({"type": "send", "text": "long one"})
    await frames_until(socket_one, "chunk")
    await socket_two.send_json_to({"type": "send", "text": "second"})
    error = await socket_two.receive_json_from()
    assert error["code"] == "too_many_streams" and "Wait for one to finish" in error["message"]
    await socket_one.send_json_to({"type": "stop"})
    await frames_until(socket_one, "reply_end")
    await socket_one.disconnect()
    await socket_two.disconnect()
    assert await Message.objects.filter(conversation=second).acount() == 0


@pytest.mark.django_db
def test_signups_are_throttled_per_address(client, settings):
    """Past SIGNUPS_PER_HOUR from one address the form says so and creates no account."""
    settings.MEMORYCHAT_SIGNUPS_PER_HOUR = 1
    password = "a-long-passphrase-1"
    client.post(
        "/accounts/signup/", {"username": "one", "password1": password, "password2": password}
    )
    client.logout()
    response = client.post(
        "/accounts/signup/", {"username": "two", "password1": password, "password2": password}
    )
    assert response.status_code == 200
    assert "Too many accounts" in response.content.decode()
    assert list(get_user_model().objects.values_list("username", flat=True)) == ["one"]


async def test_a_retry_counts_against_the_message_limit(aconversation, alice, settings, fake_llm):
    """retry then stop, in a loop, is refused past MESSAGES_PER_MINUTE like send is."""
    settings.MEMORYCHAT_MESSAGES_PER_MINUTE = 3
    fake_llm.behaviour.reply = " ".join(["slow"] * 200)
    fake_llm.behaviour.interval = 0.02
    socket = await connected(alice, aconversation.pk)
    await socket.send_json_to({"type": "send", "text": "first"})
    start = await frames_until(socket, "reply_start")
    message_id = start[0]["id"]
    codes = []
    for _ in range(4):
        await socket.send_json_to({"type": "stop"})
        await frames_until(socket, "reply_end")
        await socket.send_json_to({"type": "retry", "message_id": message_id})
        frame = await socket.receive_json_from(timeout=10)
        codes.append(frame.get("code", frame["type"]))
        if frame["type"] == "error":
            break
    await socket.disconnect()
    assert codes == ["reply_start", "reply_start", "rate_limited"]


def _begin_in_thread(conversation, results, barrier):
    from django.db import connection

    try:
        barrier.wait()
        turn_begin(conversation=conversation, text="at the same moment")
        results.append("started")
    except ChatError as error:
        results.append(error.code)
    finally:
        connection.close()


def test_simultaneous_sends_cannot_pass_the_stream_limit_together(alice, settings, monkeypatch):
    """Six sends to six conversations at once start at most MAX_CONCURRENT_STREAMS replies."""
    settings.MEMORYCHAT_MAX_CONCURRENT_STREAMS = 3
    conversations = [conversation_create(user=alice) for _ in range(6)]
    real_create = services.message_create

    def slow_create(**kwargs):  # widen the window between the check and the claim
        if kwargs.get("status") == Message.Status.STREAMING:
            time.sleep(0.2)
        return real_create(**kwargs)

    monkeypatch.setattr(services, "message_create", slow_create)
    results: list[str] = []
    barrier = threading.Barrier(len(conversations))
    threads = [
        threading.Thread(target=_begin_in_thread, args=(c, results, barrier)) for c in conversations
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(results) == ["started"] * 3 + ["too_many_streams"] * 3
    assert Message.objects.filter(status="streaming").count() == 3


async def test_open_websockets_per_user_are_capped(alice, bob, settings):
    """Past MAX_SOCKETS_PER_USER the next socket is closed with 4429; closing one frees a slot;
    another user's sockets do not count."""
    settings.MEMORYCHAT_MAX_SOCKETS_PER_USER = 2
    first = await sync_to_async(conversation_create)(user=alice)
    second = await sync_to_async(conversation_create)(user=alice)
    sockets = [await connected(alice, first.pk), await connected(alice, second.pk)]
    third = await open_socket(alice, first.pk)
    await third.connect()
    closed = await third.receive_output(timeout=5)
    assert closed == {"type": "websocket.close", "code": CLOSE_TOO_MANY_SOCKETS}
    bobs = await connected(bob, (await sync_to_async(conversation_create)(user=bob)).pk)
    await sockets.pop().disconnect()
    sockets.append(await connected(alice, first.pk))
    for socket in [*sockets, bobs]:
        await socket.disconnect()


async def test_a_refused_socket_does_not_keep_a_slot(alice, bob, settings):
    """A socket refused for another user's conversation gives its slot back."""
    settings.MEMORYCHAT_MAX_SOCKETS_PER_USER = 1
    bobs = await sync_to_async(conversation_create)(user=bob)
    for _ in range(3):
        refused = await open_socket(alice, bobs.pk)
        assert (await refused.connect())[0]  # accepted, then closed with its code
        assert (await refused.receive_output())["code"] == 4403
    mine = await sync_to_async(conversation_create)(user=alice)
    socket = await connected(alice, mine.pk)
    await socket.disconnect()


async def test_a_frame_over_the_size_limit_gets_too_long(aconversation, alice, settings):
    """A frame longer than any message at the limit could be is refused unparsed with
    too_long, and the socket stays open."""
    settings.MEMORYCHAT_MAX_FRAME_CHARS = 1000
    socket = await connected(alice, aconversation.pk)
    await socket.send_to(text_data="[" * 5000)  # not parsed: no recursion to blow
    error = await socket.receive_json_from()
    assert error["code"] == "too_long" and "5,000" in error["message"]
    await socket.send_json_to({"type": "sync", "reply_id": 1})
    assert (await socket.receive_json_from())["code"] == "not_found"  # still open
    await socket.disconnect()


def test_the_servers_frame_limit_is_above_the_apps():
    """Every frame the app answers with too_long reaches it: the servers' own limit (daphne's
    settings, uvicorn's --ws-max-size in `make serve`) is above the app's, in UTF-8 bytes."""
    from django.conf import settings

    assert settings.DAPHNE_WEBSOCKET_MAX_MESSAGE_SIZE >= 4 * settings.MEMORYCHAT_MAX_FRAME_CHARS
    assert settings.DAPHNE_WEBSOCKET_MAX_FRAME_SIZE == settings.WEBSOCKET_MAX_BYTES
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    assert '--ws-max-size "$${WEBSOCKET_MAX_BYTES:-1048576}"' in makefile
    assert settings.WEBSOCKET_MAX_BYTES == 1048576


async def test_a_continue_counts_against_the_message_limit(alice, settings, fake_llm):
    """continue makes the model work too: past MESSAGES_PER_MINUTE it is refused."""
    from tests.chat.conftest import acreate_conversation

    settings.MEMORYCHAT_MESSAGES_PER_MINUTE = 1
    settings.MEMORYCHAT_REPLY_RESERVE = 5
    fake_llm.behaviour.strict_template = True
    fake_llm.behaviour.reply = "one two three four five six seven"
    conversation = await acreate_conversation(alice, context_budget=2000)
    socket = await connected(alice, conversation.pk)
    end = await turn_end(socket, "Count")
    assert end["continue"] is True
    await socket.send_json_to({"type": "continue", "message_id": end["id"]})
    refused = await socket.receive_json_from()
    await socket.disconnect()
    assert refused["type"] == "error" and refused["code"] == "rate_limited"


@pytest.fixture
def clock(monkeypatch):
    """The limiter's clock, set by the test (the cache it counts in is the real one)."""
    now = [1_800_000_000.0]  # the start of a minute window
    monkeypatch.setattr(limits.time, "time", lambda: now[0])
    return now


def test_a_window_boundary_lets_no_burst_through(clock):
    """The limit at a window's last second and again at the next one's first is refused:
    the last minute, not the calendar minute, holds the limit."""
    key = f"boundary-{time.monotonic_ns()}"
    clock[0] += 59.5
    assert [limits.hit(key, limit=2, window=60).allowed for _ in range(2)] == [True, True]
    clock[0] += 1.0
    refused = limits.hit(key, limit=2, window=60)
    assert not refused.allowed and 1 <= refused.retry_after <= 60


def test_a_refused_event_is_not_counted_and_the_wait_it_names_is_true(clock):
    """Refusals do not extend the wait; one more event is allowed after ``retry_after``."""
    key = f"retry-{time.monotonic_ns()}"
    clock[0] += 30
    assert limits.hit(key, limit=3, window=60).allowed
    clock[0] += 20
    assert all(limits.hit(key, limit=3, window=60).allowed for _ in range(2))
    clock[0] += 15  # the next window: 3 events in the last 35 s
    waits = [limits.hit(key, limit=3, window=60) for _ in range(5)]
    assert not any(v.allowed for v in waits)
    assert len({v.retry_after for v in waits}) == 1  # hammering does not push it back
    clock[0] += waits[0].retry_after - 1
    assert not limits.hit(key, limit=3, window=60).allowed
    clock[0] += 1
    assert limits.hit(key, limit=3, window=60).allowed


def test_the_limit_holds_again_once_the_last_window_is_quiet(clock):
    key = f"quiet-{time.monotonic_ns()}"
    assert all(limits.hit(key, limit=2, window=60).allowed for _ in range(2))
    assert not limits.hit(key, limit=2, window=60).allowed
    clock[0] += 120
    assert [limits.hit(key, limit=2, window=60).allowed for _ in range(3)] == [True, True, False]
