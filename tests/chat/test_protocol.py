"""chat.protocol: the websocket frames, checked and built in one place."""

import json

import pytest

from chat import protocol


def test_it_parses_each_frame_the_browser_sends():
    """Every client frame comes back as its typed value."""
    assert protocol.parse({"type": "send", "text": "Hi", "client_id": "a-1"}) == protocol.Send(
        text="Hi", client_id="a-1"
    )
    assert protocol.parse({"type": "send", "text": "Hi"}) == protocol.Send("Hi", "")
    assert protocol.parse({"type": "stop"}) == protocol.Stop()
    assert protocol.parse({"type": "retry", "message_id": 3}) == protocol.Retry(message_id=3)
    assert protocol.parse({"type": "sync", "reply_id": 4}) == protocol.Sync(reply_id=4)


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        ([1], "bad_frame", "A frame must be a JSON object."),
        ({"type": "dance"}, "bad_frame", "Unknown frame type 'dance'."),
        ({"text": "Hi"}, "bad_frame", "Unknown frame type None."),
        ({"type": "send", "text": 42}, "bad_frame", "A message must be text."),
        ({"type": "send", "text": "Hi", "client_id": None}, "bad_frame", "client_id must be"),
        ({"type": "send", "text": "Hi", "client_id": "x" * 65}, "bad_frame", "client_id must"),
        ({"type": "send", "text": " \n "}, "empty", "The message is empty."),
        ({"type": "retry", "message_id": "1"}, "bad_frame", "retry needs a message_id"),
        ({"type": "retry", "message_id": True}, "bad_frame", "retry needs a message_id"),
        ({"type": "sync"}, "bad_frame", "sync needs a reply_id (an integer)."),
    ],
)
def test_it_refuses_a_malformed_frame(content, code, message):
    """A bad frame raises FrameError with the code its error frame carries."""
    with pytest.raises(protocol.FrameError) as refused:
        protocol.parse(content)
    assert refused.value.code == code and refused.value.message.startswith(message)


def test_it_refuses_a_message_over_the_limit(settings):
    """The limit is read from the settings at each frame, and said in the message."""
    settings.MEMORYCHAT_MAX_MESSAGE_CHARS = 1_000
    assert protocol.parse({"type": "send", "text": "x" * 1_000}).text == "x" * 1_000
    with pytest.raises(protocol.FrameError) as refused:
        protocol.parse({"type": "send", "text": "x" * 1_001})
    assert refused.value.code == "too_long"
    assert refused.value.message == (
        "The message is too long (1,001 characters; the limit is 1,000)."
    )


@pytest.mark.parametrize(
    ("text_data", "message"),
    [(None, "Frames must be JSON text."), ("{nope", "That frame is not valid JSON.")],
)
def test_it_refuses_what_is_not_json_text(text_data, message):
    """Binary messages and bad JSON are bad_frame errors, not exceptions."""
    with pytest.raises(protocol.FrameError) as refused:
        protocol.decode(text_data)
    assert (refused.value.code, refused.value.message) == ("bad_frame", message)


def test_an_error_echoes_the_frames_client_id_when_it_is_text():
    """Even a malformed client_id is echoed (the page matches it); anything else is ''."""
    assert protocol.error_client_id({"type": "send", "client_id": "bad id!"}) == "bad id!"
    assert protocol.error_client_id({"type": "retry", "client_id": 5}) == ""
    assert protocol.error_client_id(["client_id"]) == ""


def test_each_frame_the_server_sends_keeps_its_json():
    """The bytes static/js/chat.js reads: keys, key order and values as before."""
    from chat.models import Message
    from chat.services import ChatError

    user = Message(pk=11, client_id="c-1", content='<hi> & "you"')
    failed = Message(pk=12, reply_to_id=11, status="failed", error="Boom", content="")
    sent = {
        "ready": protocol.ready(streaming=None, offline=True),
        "user_message": protocol.user_message(user),
        "title": protocol.title("Trip"),
        "reply_start": protocol.reply_start(reply_id=12, reply_to=11),
        "chunk": protocol.chunk(reply_id=12, text="Hel"),
        "snapshot": protocol.snapshot(reply_id=12, text="Hello"),
        "reply_end": protocol.reply_end(failed),
        "error": protocol.error(ChatError("Slow down.", code="rate_limited"), client_id="c-1"),
    }
    assert {name: json.dumps(frame) for name, frame in sent.items()} == {
        "ready": '{"type": "ready", "streaming": null, "offline": true}',
        "user_message": '{"type": "user_message", "id": 11, "client_id": "c-1", '
        '"html": "&lt;hi&gt; &amp; &quot;you&quot;"}',
        "title": '{"type": "title", "title": "Trip"}',
        "reply_start": '{"type": "reply_start", "id": 12, "reply_to": 11}',
        "chunk": '{"type": "chunk", "id": 12, "text": "Hel"}',
        "snapshot": '{"type": "snapshot", "id": 12, "text": "Hello"}',
        "reply_end": '{"type": "reply_end", "id": 12, "reply_to": 11, "status": "failed", '
        '"error": "Boom", "html": "", "report_html": "", '
        '"context": {"used": null, "limit": null, "budget": null}}',
        "error": '{"type": "error", "code": "rate_limited", "message": "Slow down.", '
        '"client_id": "c-1"}',
    }


def test_reply_end_carries_the_rendered_reply_and_its_context_report():
    """Markdown sanitised to HTML, the report rendered, the meter's figures."""
    from chat.models import Message

    report = {"total_tokens": 120, "limit": 4000, "budget": 3000, "model": "m", "blocks": []}
    reply = Message(pk=12, reply_to_id=11, status="complete", content="**Hi** <b>x</b>")
    reply.context_report = report
    frame = protocol.reply_end(reply)
    assert frame["html"] == "<p><strong>Hi</strong> &lt;b&gt;x&lt;/b&gt;</p>\n"
    assert frame["report_html"].startswith('<details class="context-report">')
    assert "120 of 4000 tokens" in frame["report_html"]
    assert frame["context"] == {"used": 120, "limit": 4000, "budget": 3000}


def test_each_channel_layer_event_keeps_its_shape():
    """Other processes (and a server not yet restarted) read these events."""
    frame = protocol.title("Trip")
    assert protocol.group_name(7) == "conversation-7"
    assert list(protocol.group_frame(frame, sender="a").items()) == [
        ("type", "chat.frame"),
        ("frame", frame),
        ("sender", "a"),
    ]
    assert protocol.group_stop() == {"type": "chat.stop"}
    assert list(protocol.group_present(sender="a").items()) == [
        ("type", "chat.present"),
        ("sender", "a"),
    ]
    assert list(protocol.group_left(sender="a").items()) == [("type", "chat.left"), ("sender", "a")]
