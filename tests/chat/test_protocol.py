"""chat.protocol: the websocket frames, checked and built in one place."""

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
