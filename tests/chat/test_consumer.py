"""The chat websocket, end to end through the ASGI stack, with the real openai client talking
to a local OpenAI-compatible server."""

import asyncio

import pytest
from asgiref.sync import sync_to_async

from chat.consumers import CLOSE_FORBIDDEN, CLOSE_UNAUTHENTICATED
from chat.models import Conversation, Message
from memory.report import Block
from tests.chat.helpers import connected, frames_until, open_socket, reply_text, turn, turn_end

pytestmark = pytest.mark.django_db(transaction=True)


@sync_to_async
def stored(conversation):
    return list(
        Message.objects.filter(conversation=conversation)
        .order_by("id")
        .values("role", "content", "status", "error", "client_id", "token_count")
    )


async def refused_with(socket) -> int:
    """A refusal is an accepted socket closed at once with our code: a socket closed during
    the handshake reaches the browser as a plain drop (1006), and the page retries."""
    connected_ok, _ = await socket.connect()
    assert connected_ok
    closed = await socket.receive_output()
    assert closed["type"] == "websocket.close"
    return closed["code"]


async def test_it_refuses_anonymous_visitors(aconversation):
    """No session: the socket is closed with 4401 (the page goes to the login page)."""
    socket = await open_socket(None, aconversation.pk)
    assert await refused_with(socket) == CLOSE_UNAUTHENTICATED


async def test_it_refuses_another_users_conversation(aconversation, bob):
    """Bob cannot open Alice's conversation; a missing id looks the same."""
    for conversation_id in (aconversation.pk, 999_999):
        socket = await open_socket(bob, conversation_id)
        assert await refused_with(socket) == CLOSE_FORBIDDEN


async def test_it_refuses_a_foreign_origin(aconversation, alice):
    """The origin must be an allowed host (cross-site websocket hijacking)."""
    socket = await open_socket(alice, aconversation.pk, origin=b"http://evil.example")
    connected_ok, _ = await socket.connect()
    assert not connected_ok


async def test_a_turn_streams_and_stores_once(aconversation, alice, fake_llm):
    """User message first, the reply in pieces, then stored once with usage and timings."""
    fake_llm.behaviour.reply = "One two three four five six seven eight."
    socket = await connected(alice, aconversation.pk)
    frames = await turn(socket, "Count to eight", client_id="a-1")
    await socket.disconnect()

    assert [f["type"] for f in frames[:3]] == ["user_message", "title", "reply_start"]
    assert frames[0]["client_id"] == "a-1"
    assert reply_text(frames) == "One two three four five six seven eight."
    end = frames[-1]
    assert end["status"] == "complete"
    assert "One two three" in end["html"]
    assert end["context"]["used"] <= end["context"]["limit"]

    rows = await stored(aconversation)
    assert [(r["role"], r["status"]) for r in rows] == [
        ("user", "complete"),
        ("assistant", "complete"),
    ]
    assert rows[0]["token_count"] == 3 and rows[1]["token_count"] > 0
    reply = await Message.objects.aget(role="assistant")
    assert reply.completion_tokens == 8 and reply.prompt_tokens > 0
    assert reply.time_to_first_token is not None and reply.duration >= reply.time_to_first_token
    assert reply.context_report["blocks"][0]["name"] == Block.SYSTEM
    assert reply.system_prompt_version == 1
    sent = fake_llm.chat_requests()[-1]["body"]["messages"]
    assert sent[0]["role"] == "system" and sent[-1] == {"role": "user", "content": "Count to eight"}


async def test_the_first_message_titles_the_conversation(aconversation, alice, fake_llm):
    """The title frame follows the first message, and the row keeps it."""
    socket = await connected(alice, aconversation.pk)
    frames = await turn(socket, "Plan a trip to Lisbon in May")
    await socket.disconnect()
    assert {"type": "title", "title": "Plan a trip to Lisbon in May"} in frames
    conversation = await Conversation.objects.aget(pk=aconversation.pk)
    assert conversation.title == "Plan a trip to Lisbon in May"


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ({"type": "send", "text": "   "}, "empty"),
        ({"type": "send", "text": ""}, "empty"),
        ({"type": "send", "text": 42}, "bad_frame"),
        ({"type": "send"}, "bad_frame"),
        ({"type": "send", "text": "hi", "client_id": "bad id!"}, "bad_frame"),
        ({"type": "dance"}, "bad_frame"),
        ({"type": "retry", "message_id": "1"}, "bad_frame"),
        (["send"], "bad_frame"),
    ],
)
async def test_bad_frames_get_a_clear_error_and_store_nothing(aconversation, alice, frame, code):
    """Each refusal names the problem; the socket stays usable."""
    socket = await connected(alice, aconversation.pk)
    await socket.send_json_to(frame)
    error = await socket.receive_json_from()
    assert error["type"] == "error" and error["code"] == code and error["message"]
    assert await stored(aconversation) == []
    await socket.send_json_to({"type": "send", "text": "still works"})
    assert (await socket.receive_json_from())["type"] == "user_message"
    await frames_until(socket, "reply_end")
    await socket.disconnect()


async def test_nul_characters_are_dropped_not_fatal(aconversation, alice, fake_llm):
    """A NUL in the text (which PostgreSQL cannot store) is removed; the rest is kept."""
    fake_llm.behaviour.reply = "ok\x00 done"
    socket = await connected(alice, aconversation.pk)
    end = await turn_end(socket, "a\x00b")
    await socket.disconnect()
    rows = await stored(aconversation)
    assert [r["content"] for r in rows] == ["ab", "ok done"]
    assert end["status"] == "complete"


async def test_non_json_text_is_a_bad_frame(aconversation, alice):
    """A frame that is not JSON is refused, not a crash."""
    socket = await connected(alice, aconversation.pk)
    await socket.send_to(text_data="{not json")
    error = await socket.receive_json_from()
    assert error["code"] == "bad_frame"
    await socket.disconnect()


async def test_an_oversized_message_is_refused(aconversation, alice, settings):
    """Over MAX_MESSAGE_CHARS: refused with the limit in the message, nothing stored."""
    settings.MEMORYCHAT_MAX_MESSAGE_CHARS = 100
    socket = await connected(alice, aconversation.pk)
    await socket.send_json_to({"type": "send", "text": "x" * 101, "client_id": "big"})
    error = await socket.receive_json_from()
    assert error["code"] == "too_long" and "100" in error["message"]
    assert error["client_id"] == "big"
    assert await stored(aconversation) == []
    await socket.disconnect()


async def test_a_resend_with_the_same_client_id_stores_nothing_twice(
    aconversation, alice, fake_llm
):
    """After a reconnect the browser resends; the server replays what it has."""
    socket = await connected(alice, aconversation.pk)
    first = await turn(socket, "Hello", client_id="same-1")
    await socket.disconnect()

    socket = await connected(alice, aconversation.pk)
    replay = await turn(socket, "Hello", client_id="same-1")
    await socket.disconnect()
    assert [f["type"] for f in replay] == ["user_message", "reply_end"]
    assert replay[-1]["id"] == first[-1]["id"]
    assert len(await stored(aconversation)) == 2
    assert len(fake_llm.chat_requests()) == 1


async def test_stop_keeps_the_partial_reply(aconversation, alice, fake_llm):
    """Stop cancels the upstream call; the text so far is stored as interrupted."""
    fake_llm.behaviour.reply = " ".join(f"word{i}" for i in range(200))
    fake_llm.behaviour.interval = 0.02
    socket = await connected(alice, aconversation.pk)
    await socket.send_json_to({"type": "send", "text": "Talk a lot"})
    frames = await frames_until(socket, "chunk")
    await socket.send_json_to({"type": "stop"})
    frames += await frames_until(socket, "reply_end")
    await socket.disconnect()
    end = frames[-1]
    assert end["status"] == "interrupted" and "Stopped" in end["error"]
    reply = (await stored(aconversation))[1]
    assert reply["status"] == "interrupted"
    assert reply["content"].startswith("word0") and "word199" not in reply["content"]
    assert reply["content"] == reply_text(frames)


async def test_an_upstream_error_keeps_the_message_and_retry_works(aconversation, alice, fake_llm):
    """HTTP 500 after retries: the page is told, the user message stays; Retry answers it."""
    fake_llm.behaviour.fail_status = 500
    fake_llm.behaviour.fail_times = 3  # the first try and both client retries
    socket = await connected(alice, aconversation.pk)
    frames = await turn(socket, "Are you there?", client_id="r1")
    end = frames[-1]
    assert end["status"] == "failed" and "HTTP 500" in end["error"]
    assert [r["role"] for r in await stored(aconversation)] == ["user", "assistant"]

    await socket.send_json_to({"type": "retry", "message_id": frames[0]["id"]})
    again = await frames_until(socket, "reply_end")
    await socket.disconnect()
    assert again[-1]["status"] == "complete" and again[-1]["id"] == end["id"]
    rows = await stored(aconversation)
    assert [(r["role"], r["status"]) for r in rows] == [
        ("user", "complete"),
        ("assistant", "complete"),
    ]


async def test_a_429_before_the_first_token_is_retried(aconversation, alice, fake_llm):
    """Rate limiting is retried by the client before any text flows."""
    fake_llm.behaviour.fail_status = 429
    fake_llm.behaviour.fail_times = 1
    socket = await connected(alice, aconversation.pk)
    frames = await turn(socket, "Hi")
    await socket.disconnect()
    assert frames[-1]["status"] == "complete"
    assert len(fake_llm.chat_requests()) == 2


async def test_persistent_429_says_rate_limited(aconversation, alice, fake_llm):
    """429 on every try: a clear message, the reply failed, nothing lost."""
    fake_llm.behaviour.fail_status = 429
    fake_llm.behaviour.fail_times = 10
    socket = await connected(alice, aconversation.pk)
    end = await turn_end(socket, "Hi")
    await socket.disconnect()
    assert end["status"] == "failed" and "rate limited" in end["error"]


async def test_a_slow_upstream_times_out(aconversation, alice, fake_llm, settings):
    """No answer within OPENAI_TIMEOUT: failed with a timeout message."""
    settings.OPENAI_TIMEOUT = 1.0
    settings.OPENAI_MAX_RETRIES = 0
    fake_llm.behaviour.stall_before = 2.0
    socket = await connected(alice, aconversation.pk)
    await socket.send_json_to({"type": "send", "text": "Hi"})
    end = (await frames_until(socket, "reply_end", timeout=15))[-1]
    await socket.disconnect()
    assert end["status"] == "failed" and "too long" in end["error"]


async def test_a_stream_that_stalls_mid_reply_times_out(aconversation, alice, fake_llm, settings):
    """Tokens stop coming: the partial reply is kept as interrupted."""
    settings.OPENAI_TIMEOUT = 1.0
    fake_llm.behaviour.reply = "alpha beta gamma delta"
    fake_llm.behaviour.stall_after = 2
    socket = await connected(alice, aconversation.pk)
    await socket.send_json_to({"type": "send", "text": "Hi"})
    end = (await frames_until(socket, "reply_end", timeout=15))[-1]
    await socket.disconnect()
    assert end["status"] == "interrupted" and "too long" in end["error"]
    assert (await stored(aconversation))[1]["content"] == "alpha beta "


async def test_a_connection_cut_mid_stream_keeps_the_partial_reply(aconversation, alice, fake_llm):
    """The upstream drops the connection after some text: interrupted, text kept."""
    fake_llm.behaviour.reply = "alpha beta gamma delta epsilon"
    fake_llm.behaviour.cut_after = 2
    socket = await connected(alice, aconversation.pk)
    end = await turn_end(socket, "Hi")
    await socket.disconnect()
    assert end["status"] == "interrupted"
    assert end["error"]
    assert (await stored(aconversation))[1]["content"] == "alpha beta "


async def test_a_malformed_stream_is_reported(aconversation, alice, fake_llm):
    """A broken event: the reply is interrupted with a clear reason."""
    fake_llm.behaviour.reply = "alpha beta gamma"
    fake_llm.behaviour.malformed_after = 1
    socket = await connected(alice, aconversation.pk)
    end = await turn_end(socket, "Hi")
    await socket.disconnect()
    assert end["status"] == "interrupted" and "malformed" in end["error"]


async def test_two_tabs_both_see_the_reply(aconversation, alice, fake_llm):
    """A second tab on the same conversation receives the user message and every chunk."""
    fake_llm.behaviour.reply = "shared reply text here"
    fake_llm.behaviour.interval = 0.1
    first = await connected(alice, aconversation.pk)
    second = await connected(alice, aconversation.pk)
    await asyncio.sleep(0.1)  # the tabs hear of each other
    seen_first = await turn(first, "Hi both")
    seen_second = await frames_until(second, "reply_end")
    await first.disconnect()
    await second.disconnect()
    assert reply_text(seen_first) == "shared reply text here"
    assert seen_second[0]["type"] == "user_message"
    # In the reply's own process every tab gets the chunks (chat.live); other processes get
    # snapshots (tests/chat/test_reply_outlives_tab.py).
    assert reply_text(seen_second) == "shared reply text here"
    assert "shared reply text here" in seen_second[-1]["html"]


async def second_message_while_streaming(conversation, user, fake_llm) -> list[dict]:
    """Send "first", and while its reply streams, "second": the frames up to the refusal.
    Then stop the first reply and let it end."""
    fake_llm.behaviour.reply = " ".join(["slow"] * 100)
    fake_llm.behaviour.interval = 0.02
    socket = await connected(user, conversation.pk)
    await socket.send_json_to({"type": "send", "text": "first"})
    await frames_until(socket, "chunk")
    await socket.send_json_to({"type": "send", "text": "second", "client_id": "c2"})
    frames = await frames_until(socket, "error")
    await socket.send_json_to({"type": "stop"})
    await frames_until(socket, "reply_end")
    await socket.disconnect()
    return frames


async def test_a_second_message_while_streaming_is_refused(aconversation, alice, fake_llm):
    """One reply at a time per conversation; the refusal stores nothing."""
    frames = await second_message_while_streaming(aconversation, alice, fake_llm)
    assert frames[-1]["code"] == "busy" and frames[-1]["client_id"] == "c2"
    assert [r["content"] for r in await stored(aconversation) if r["role"] == "user"] == ["first"]
    assert len(fake_llm.chat_requests()) == 1, "the refused turn asked the model nothing"


async def test_stop_from_another_tab_stops_the_reply(aconversation, alice, fake_llm):
    """The Stop button works in a tab that did not send the message."""
    fake_llm.behaviour.reply = " ".join(["more"] * 200)
    fake_llm.behaviour.interval = 0.02
    sender = await connected(alice, aconversation.pk)
    watcher = await connected(alice, aconversation.pk)
    await asyncio.sleep(0.1)  # the tabs hear of each other
    await sender.send_json_to({"type": "send", "text": "go"})
    await frames_until(watcher, "chunk")
    await watcher.send_json_to({"type": "stop"})
    end = (await frames_until(watcher, "reply_end"))[-1]
    await sender.disconnect()
    await watcher.disconnect()
    assert end["status"] == "interrupted"


async def test_offline_replies_stream_and_say_so(aconversation, alice, settings):
    """With no API key the offline provider answers, labelled offline by its badge (the page's
    banner says why once, not a paragraph in every reply)."""
    settings.OPENAI_API_KEY = ""
    socket = await connected(alice, aconversation.pk)
    frames = await turn(socket, "Hello offline")
    await socket.disconnect()
    assert sum(f["type"] == "chunk" for f in frames) > 1
    assert "Offline reply" not in frames[-1]["html"]
    assert 'class="badge offline"' in frames[-1]["article"]
    reply = await Message.objects.aget(role="assistant")
    assert reply.model == "offline" and reply.status == "complete"


async def test_a_dead_servers_streaming_reply_is_shown_interrupted(aconversation, alice):
    """A reply left 'streaming' by a crashed server is interrupted once its lease expires."""
    from datetime import timedelta

    from django.utils import timezone

    from chat.services import message_create

    @sync_to_async
    def leave_streaming():
        user_message = message_create(conversation=aconversation, role="user", content="hi")
        reply = message_create(
            conversation=aconversation,
            role="assistant",
            content="",
            status="streaming",
            reply_to=user_message,
        )
        Message.objects.filter(pk=reply.pk).update(
            content="partial", lease_expires_at=timezone.now() - timedelta(seconds=1)
        )
        return reply

    reply = await leave_streaming()
    socket = await connected(alice, aconversation.pk)
    await socket.disconnect()
    reply = await Message.objects.aget(pk=reply.pk)
    assert reply.status == "interrupted" and reply.content == "partial"
    assert "restarted" in reply.error


def test_a_reply_streaming_under_its_lease_is_left_alone_without_a_write(conversation):
    """Every page load and socket asks for stale replies: with none, it only reads (an
    UPDATE would wait for SQLite's write lock behind the replies in flight)."""
    from datetime import timedelta

    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from chat.services import message_create, replies_interrupt_stale

    question = message_create(conversation=conversation, role="user", content="hi")
    reply = message_create(
        conversation=conversation,
        role="assistant",
        content="",
        status="streaming",
        reply_to=question,
    )
    Message.objects.filter(pk=reply.pk).update(
        lease_expires_at=timezone.now() + timedelta(seconds=30)
    )
    with CaptureQueriesContext(connection) as queries:
        assert replies_interrupt_stale(conversation=conversation) == 0
    assert not [q for q in queries if "UPDATE" in q["sql"].upper()]
    reply.refresh_from_db()
    assert reply.status == "streaming"


async def test_many_quick_deltas_are_batched(aconversation, alice, fake_llm):
    """A fast model does not flood the socket: far fewer frames than deltas."""
    fake_llm.behaviour.reply = " ".join(f"t{i}" for i in range(400))
    socket = await connected(alice, aconversation.pk)
    frames = await turn(socket, "Hi")
    await socket.disconnect()
    chunks = [f for f in frames if f["type"] == "chunk"]
    assert len(chunks) < 200
    assert reply_text(frames) == fake_llm.behaviour.reply


async def test_an_unreachable_upstream_is_reported(aconversation, alice, settings):
    """Nothing listens at OPENAI_BASE_URL: failed with 'could not reach', message kept."""
    from tests.support.live_server import free_port

    settings.OPENAI_API_KEY = "test-key"
    settings.OPENAI_BASE_URL = f"http://127.0.0.1:{free_port()}/v1"
    settings.OPENAI_MAX_RETRIES = 0
    socket = await connected(alice, aconversation.pk)
    end = await turn_end(socket, "Anyone?")
    await socket.disconnect()
    assert end["status"] == "failed" and "Could not reach" in end["error"]
    assert (await stored(aconversation))[0]["content"] == "Anyone?"


async def test_a_tab_can_ask_where_a_reply_stands(aconversation, alice, bob, fake_llm):
    """sync answers with the stored reply; another user's or a missing id is refused."""
    from chat.services import conversation_create, message_create

    @sync_to_async
    def bobs_reply():
        theirs = conversation_create(user=bob)
        return message_create(conversation=theirs, role="assistant", content="bob's secret").pk

    bobs_reply_id = await bobs_reply()
    socket = await connected(alice, aconversation.pk)
    end = await turn_end(socket, "Hi")
    await socket.send_json_to({"type": "sync", "reply_id": end["id"]})
    again = await socket.receive_json_from()
    assert again["type"] == "reply_end" and again["html"] == end["html"]
    await socket.send_json_to({"type": "sync", "reply_id": end["id"] + 1000})
    assert (await socket.receive_json_from())["code"] == "not_found"
    await socket.send_json_to({"type": "sync", "reply_id": bobs_reply_id})
    refused = await socket.receive_json_from()
    assert refused["code"] == "not_found" and "secret" not in str(refused)
    await socket.send_json_to({"type": "sync", "reply_id": "x"})
    assert (await socket.receive_json_from())["code"] == "bad_frame"
    await socket.disconnect()


@pytest.mark.parametrize(
    ("origin", "host", "allowed"),
    [
        (b"http://localhost", b"localhost", True),
        (b"http://localhost:80", b"localhost", True),  # the default port, spelled out
        (b"http://LOCALHOST:8000", b"localhost:8000", True),
        (b"http://localhost:8001", b"localhost:8000", False),  # another port
        (b"https://localhost", b"localhost", False),  # another scheme
        (b"http://localhost", b"localhost:8000", False),
        (b"http://evil.example", b"localhost", False),
        (b"http://localhost", b"evil.example", False),  # a host not in ALLOWED_HOSTS
        (b"null", b"localhost", False),
        (b"http://user@localhost", b"localhost", False),
    ],
)
async def test_the_origin_must_match_scheme_host_and_port(
    aconversation, alice, origin, host, allowed
):
    """Like Django's CSRF check: scheme, host and port, not the host alone."""
    socket = await open_socket(alice, aconversation.pk, origin=origin, host=host)
    connected_ok, _ = await socket.connect()
    assert connected_ok is allowed
    if connected_ok:
        await socket.disconnect()


async def test_a_trusted_origin_may_open_a_socket(aconversation, alice, settings):
    """A public origin in CSRF_TRUSTED_ORIGINS (a proxy that rewrites Host) is allowed."""
    settings.CSRF_TRUSTED_ORIGINS = ["https://chat.example"]
    socket = await open_socket(alice, aconversation.pk, origin=b"https://chat.example")
    connected_ok, _ = await socket.connect()
    assert connected_ok
    await socket.disconnect()


MALFORMED_FRAMES = [
    ('{"type": ["send"]}', "bad_frame"),  # an unhashable type
    ('{"type": {"a": 1}}', "bad_frame"),
    ('{"type": 7}', "bad_frame"),
    ('{"type": "send", "text": "\\ud800"}', "bad_frame"),  # a lone surrogate
    ('{"type": "send", "text": "ok", "client_id": "\\udfff"}', "bad_frame"),
    ('{"type": "send", "text": [[[[["deep"]]]]]}', "bad_frame"),
    ("[" * 50 + "]" * 50, "bad_frame"),
    ("[" * 3000 + "]" * 3000, "bad_frame"),  # deeper than the parser's recursion
    ('{"type": "send", "text": NaN}', "bad_frame"),
    ('{"type": "retry", "message_id": 1e999}', "bad_frame"),
    ('{"type": "retry", "message_id": 100000000000000000000000000000}', "bad_frame"),
    ('{"type": "sync", "reply_id": -1}', "bad_frame"),
    ('{"type": "sync", "reply_id": 1.0}', "bad_frame"),
    ('"just a string"', "bad_frame"),
    ("null", "bad_frame"),
    ('{"type": "send", "text": "\\u0000\\u0000"}', "empty"),
    ('{"type": "send", "text": " \\u0000\\n\\t\\u3000 "}', "empty"),
]


@pytest.mark.parametrize(("text_data", "code"), MALFORMED_FRAMES)
async def test_every_malformed_frame_gets_an_error_and_the_socket_stays_open(
    aconversation, alice, text_data, code
):
    """Wrong types, lone surrogates, deep nesting, impossible numbers: the documented
    error, nothing stored, and the next frame is answered."""
    socket = await connected(alice, aconversation.pk)
    await socket.send_to(text_data=text_data)
    error = await socket.receive_json_from()
    assert error["type"] == "error" and error["code"] == code, error
    assert len(error["message"]) < 200
    await socket.send_json_to({"type": "sync", "reply_id": 1})
    assert (await socket.receive_json_from())["code"] == "not_found"
    assert await stored(aconversation) == []
    await socket.disconnect()
