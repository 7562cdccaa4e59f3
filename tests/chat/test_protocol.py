"""chat.protocol: the websocket frames, checked and built in one place."""

import dataclasses
import inspect
import json
import re
from pathlib import Path

import pytest

from chat import protocol
from chat.models import Conversation


def test_it_parses_each_frame_the_browser_sends():
    """Every client frame comes back as its typed value."""
    assert protocol.parse({"type": "send", "text": "Hi", "client_id": "a-1"}) == protocol.Send(
        text="Hi", client_id="a-1"
    )
    assert protocol.parse({"type": "send", "text": "Hi"}) == protocol.Send("Hi", "")
    assert protocol.parse({"type": "stop"}) == protocol.Stop()
    assert protocol.parse({"type": "retry", "message_id": 3}) == protocol.Retry(message_id=3)
    assert protocol.parse({"type": "sync", "reply_id": 4}) == protocol.Sync(reply_id=4)
    assert protocol.parse({"type": "regenerate", "message_id": 3}) == protocol.Regenerate(3)
    assert protocol.parse({"type": "switch_branch", "message_id": 3}) == protocol.SwitchBranch(3)
    assert protocol.parse({"type": "edit", "message_id": 3, "text": "Hi"}) == protocol.Edit(
        message_id=3, text="Hi"
    )


@pytest.mark.parametrize(
    ("content", "code", "message"),
    [
        ([1], "bad_frame", "A frame must be a JSON object."),
        ({"type": "dance"}, "bad_frame", "Unknown frame type 'dance'."),
        ({"text": "Hi"}, "bad_frame", "Unknown frame type None."),
        ({"type": "send", "text": 42}, "bad_frame", "A message must be text."),
        ({"type": "send", "text": "Hi", "client_id": None}, "bad_frame", "client_id must be"),
        ({"type": "send", "text": "Hi", "client_id": "x" * 65}, "bad_frame", "client_id must"),
        # "$" matches before a final newline: the whole id must match (issue 40, low 6).
        ({"type": "send", "text": "Hi", "client_id": "a-1\n"}, "bad_frame", "client_id must"),
        ({"type": "send", "text": " \n "}, "empty", "The message is empty."),
        # No visible character is empty too (issue 40, low 7): zero-width, bidi, fillers.
        ({"type": "send", "text": "\u200b\u200d\ufeff"}, "empty", "The message is empty."),
        ({"type": "send", "text": "\u202e\u2066\u00a0"}, "empty", "The message is empty."),
        ({"type": "send", "text": "\u3164\u2800\ufe0f"}, "empty", "The message is empty."),
        ({"type": "edit", "message_id": 3, "text": "\u2060"}, "empty", "The message is empty."),
        ({"type": "retry", "message_id": "1"}, "bad_frame", "retry needs a message_id"),
        ({"type": "retry", "message_id": True}, "bad_frame", "retry needs a message_id"),
        ({"type": "sync"}, "bad_frame", "sync needs a reply_id (an integer)."),
        ({"type": "regenerate"}, "bad_frame", "regenerate needs a message_id"),
        ({"type": "edit", "message_id": 3, "text": "  "}, "empty", "The message is empty."),
        ({"type": "edit", "text": "Hi"}, "bad_frame", "edit needs a message_id"),
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


def _notice():
    """A "Remembered: ..." notice of one fact, as memory.selectors builds it (unsaved)."""
    from chat.models import Conversation
    from memory.models import MemoryEvent
    from memory.selectors import Notice, NoticeItem

    event = MemoryEvent(pk=5, message_id=12, conversation=Conversation(pk=3, title="<Trip>"))
    item = NoticeItem("fact", 9, "added", "Her daughter is <Ada>", exists=True, suggested=False)
    return Notice(event=event, items=[item])


def server_frames() -> dict[str, dict]:
    """One frame from each registered builder; a builder without a sample fails here."""
    from chat.models import Message
    from chat.services import ChatError

    user = Message(pk=11, role="user", client_id="c-1", content='<hi> & "you"')
    failed = Message(
        pk=12, role="assistant", reply_to_id=11, status="failed", error="Boom", content=""
    )
    streaming = Message(pk=12, role="assistant", reply_to_id=11, status="streaming")
    arguments = {
        "ready": {"streaming": None, "offline": True},
        "user_message": {"message": user},
        "title": {"title": "Trip"},
        "reply_start": {"reply": streaming},
        "chunk": {"reply_id": 12, "seq": 1, "text": "Hel", "html": "", "tail": "<p>Hel</p>"},
        "resume": {
            "reply": streaming,
            "seq": 1,
            "text": "Hel",
            "html": "",
            "tail": "<p>Hel</p>",
            "article": "…",
        },
        "snapshot": {"reply_id": 12, "text": "Hello", "html": "<p>Hello</p>", "seq": 2},
        "reply_end": {"reply": failed},
        "error": {"exc": ChatError("Slow down.", code="rate_limited"), "client_id": "c-1"},
        "memory_event": {"notice": _notice()},
        "memory_elsewhere": {"notice": _notice()},
        "branch_shown": {"replaces": 7, "messages": [user]},
    }
    return {name: build(**arguments[name]) for name, build in protocol.SERVER_FRAMES.items()}


def group_events() -> dict[str, dict]:
    arguments = {
        "chat.frame": {"frame": protocol.title("Trip"), "sender": "a"},
        "chat.stop": {},
        "chat.join": {"sender": "a"},
        "chat.signed_out": {},
        "chat.present": {"sender": "a"},
        "chat.left": {"sender": "a"},
        "chat.user_frame": {"frame": protocol.title("Trip"), "conversation_id": 3},
        "chat.conversation_settings": {
            "conversation": Conversation(pk=3, model="m", strategy="summary_buffer")
        },
    }
    return {name: build(**arguments[name]) for name, build in protocol.GROUP_EVENTS.items()}


def test_each_frame_the_server_sends_keeps_its_json():
    """The bytes static/js/chat.js reads: keys, key order and values as before (a message's
    article, rendered by the page's own template, is checked below)."""
    frames = server_frames()
    for frame in frames.values():
        if "article" in frame:
            frame["article"] = "…"
        if frame["type"] in ("memory_event", "memory_elsewhere", "branch_shown"):
            frame["html"] = "…"
    assert {name: json.dumps(frame) for name, frame in frames.items()} == {
        "ready": '{"type": "ready", "streaming": null, "offline": true}',
        "user_message": '{"type": "user_message", "id": 11, "client_id": "c-1", '
        '"article": "\\u2026"}',
        "title": '{"type": "title", "title": "Trip"}',
        "reply_start": '{"type": "reply_start", "id": 12, "reply_to": 11, "article": "\\u2026"}',
        "chunk": '{"type": "chunk", "id": 12, "seq": 1, "text": "Hel", "html": "", '
        '"tail": "<p>Hel</p>"}',
        "resume": '{"type": "resume", "id": 12, "reply_to": 11, "seq": 1, "text": "Hel", '
        '"html": "", "tail": "<p>Hel</p>", "article": "\\u2026"}',
        "snapshot": '{"type": "snapshot", "id": 12, "seq": 2, "text": "Hello", '
        '"html": "<p>Hello</p>"}',
        "reply_end": '{"type": "reply_end", "id": 12, "reply_to": 11, "status": "failed", '
        '"error": "Boom", "retry": true, "continue": false, "saved": true, "html": "", '
        '"article": "\\u2026", '
        '"context": {"used": null, "limit": null, "budget": null, "estimated": false}}',
        "error": '{"type": "error", "code": "rate_limited", "message": "Slow down.", '
        '"client_id": "c-1"}',
        "memory_event": '{"type": "memory_event", "id": 5, "message_id": 12, "html": "\\u2026"}',
        "memory_elsewhere": '{"type": "memory_elsewhere", "id": 5, "conversation_id": 3, '
        '"html": "\\u2026"}',
        "branch_shown": '{"type": "branch_shown", "replaces": 7, "html": "\\u2026", '
        '"context": {"used": null, "limit": null, "budget": null, "estimated": false}}',
    }


def test_the_articles_are_the_pages_own_message_markup():
    """user_message, reply_start and reply_end carry the article the page renders for the
    message (chat/_message.html): the user's text escaped as typed, the reply's state."""
    frames = server_frames()
    user = frames["user_message"]["article"]
    assert user.startswith('<article class="message user" id="m11" data-role="user" data-id="11"')
    assert '<div class="content">&lt;hi&gt; &amp; &quot;you&quot;</div>' in user
    waiting = frames["reply_start"]["article"]
    assert 'class="message assistant status-streaming"' in waiting and "Thinking…" in waiting
    failed = frames["reply_end"]["article"]
    assert "Failed: Boom" in failed and 'data-retry="11"' in failed


def test_a_memory_notice_is_rendered_escaped_with_undo_and_a_link_to_the_memory_page():
    """memory_event carries the notice markup: the item's text escaped, Undo, the page link."""
    html = server_frames()["memory_event"]["html"]
    assert html.startswith('<aside class="memory-notice" data-event="5"')
    assert "Remembered:" in html and "Her daughter is &lt;Ada&gt;" in html
    assert 'data-memory-undo="5"' in html and 'href="/memory/"' in html


def test_reply_end_carries_the_rendered_reply_and_its_context_report():
    """Markdown sanitised to HTML, the report inside the article, the meter's figures."""
    from chat.models import Message

    report = {"total_tokens": 120, "limit": 4000, "budget": 3000, "model": "m", "blocks": []}
    reply = Message(
        pk=12,
        conversation_id=3,
        role="assistant",
        reply_to_id=11,
        status="complete",
        content="**Hi** <b>x</b>",
    )
    reply.context_report = report
    frame = protocol.reply_end(reply)
    assert frame["html"] == "<p><strong>Hi</strong> &lt;b&gt;x&lt;/b&gt;</p>\n"
    assert frame["html"] in frame["article"]
    # the report's summary, its body fetched when opened (the same template as the page)
    assert '<details class="context-report" data-report-url="/c/3/m/12/report/"' in frame["article"]
    assert "What the model saw" in frame["article"]
    assert "120 of 4,000 tokens" not in frame["article"]
    assert frame["context"] == {"used": 120, "limit": 4000, "budget": 3000, "estimated": False}


def test_reply_end_of_the_turns_own_report_is_the_frame_a_stored_one_gives():
    """``built``: the report the turn built is not shape-checked again; the frame is the
    same as the one read through ``report_read`` (with a report, and without one)."""
    from chat.models import Message

    reply = Message(pk=14, conversation_id=3, role="assistant", reply_to_id=11, status="complete")
    reply.content = "Built *once*."
    for report in (
        {"total_tokens": 90, "limit": 4000, "budget": 3000, "tokens_estimated": True},
        None,
    ):
        reply.context_report = report
        assert protocol.reply_end(reply, built=True) == protocol.reply_end(reply)


def test_reply_end_parses_its_markdown_once(monkeypatch):
    """The frame's HTML and its article's come from one render of the reply."""
    from chat import rendering
    from chat.models import Message

    rendering._render_stored.cache_clear()
    calls = []
    parse = rendering._render_parsed
    monkeypatch.setattr(rendering, "_render_parsed", lambda text: calls.append(text) or parse(text))
    reply = Message(pk=13, conversation_id=3, role="assistant", reply_to_id=11, status="complete")
    reply.content = "A *once* rendered reply, 13."
    frame = protocol.reply_end(reply)
    assert calls == [reply.content] and frame["html"] in frame["article"]


def test_each_channel_layer_event_keeps_its_shape():
    """Other processes (and a server not yet restarted) read these events."""
    assert protocol.group_name(7) == "conversation-7"
    assert protocol.user_group(7) == "user-7"
    assert {name: json.dumps(event) for name, event in group_events().items()} == {
        "chat.frame": '{"type": "chat.frame", "frame": {"type": "title", "title": "Trip"}, '
        '"sender": "a"}',
        "chat.stop": '{"type": "chat.stop"}',
        "chat.join": '{"type": "chat.join", "sender": "a"}',
        "chat.signed_out": '{"type": "chat.signed_out"}',
        "chat.present": '{"type": "chat.present", "sender": "a"}',
        "chat.left": '{"type": "chat.left", "sender": "a"}',
        "chat.user_frame": '{"type": "chat.user_frame", "frame": {"type": "title", "title": '
        '"Trip"}, "conversation_id": 3}',
        "chat.conversation_settings": '{"type": "chat.conversation_settings", '
        '"conversation_id": 3, "model": "m", "strategy": "summary_buffer", '
        '"context_budget": null, "project_id": null}',
    }


# -- docs/protocol.md -------------------------------------------------------------------------

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"


def documented(heading: str) -> dict[str, list[str]]:
    """The frames a table of docs/protocol.md lists under ``heading``: name -> field names.

    A row reads like `{"type": "reply_end", "id", "status", …}` (values, where shown, are not
    quoted words: `"text": "…"`, `"message_id": 123`)."""
    section = DOC.read_text(encoding="utf-8").split(f"\n## {heading}", 1)[1].split("\n## ", 1)[0]
    frames = {}
    for row in re.findall(r"^\| `(\{.*?\})` \|", section, flags=re.MULTILINE):
        key, name, *fields = re.findall(r'"([\w.]+)"', row)
        assert key == "type", row
        assert name not in frames, f"{name} is listed twice"
        frames[name] = fields
    return frames


def test_the_doc_lists_exactly_the_frames_the_browser_may_send():
    """Each frame the parser accepts, with its fields; nothing it refuses."""
    assert documented("Client → server frames") == {
        name: [field.name for field in dataclasses.fields(frame_class)]
        for name, frame_class in protocol.CLIENT_FRAMES.items()
    }


def test_the_doc_lists_exactly_the_frames_the_server_sends():
    """Each builder's frame, with its keys in the order they are sent (optional ones too)."""
    frames = server_frames()
    assert documented("Server → client frames") == {
        name: list(frame)[1:] for name, frame in frames.items()
    }


def test_the_doc_lists_exactly_the_channel_layer_events():
    assert documented("Between the server's consumers") == {
        name: list(event)[1:] for name, event in group_events().items()
    }


def test_every_builder_is_registered_under_the_type_it_makes():
    """So the doc tests above see every frame and event chat.protocol can build."""
    built = {**server_frames(), **group_events()}
    assert all(frame["type"] == name for name, frame in built.items())
    public = {
        name
        for name, function in inspect.getmembers(protocol, inspect.isfunction)
        if function.__module__ == protocol.__name__ and not name.startswith("_")
    }
    registered = {*protocol.SERVER_FRAMES.values(), *protocol.GROUP_EVENTS.values()}
    not_builders = {
        "decode",
        "parse",
        "error_client_id",
        "group_name",
        "session_group",
        "user_group",
        "article",
    }
    assert public - not_builders == {build.__name__ for build in registered}


def test_no_other_chat_module_builds_a_frame_by_hand():
    """A dict with a "type" key outside chat/protocol.py would be a frame the doc tests miss."""
    chat = Path(protocol.__file__).parent
    by_hand = [
        f"{path.relative_to(chat)}:{number}"
        for path in sorted(chat.rglob("*.py"))
        if path.name != "protocol.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"""["']type["']\s*:""", line)
    ]
    assert by_hand == []


def test_a_notice_elsewhere_names_its_conversation_escaped_and_links_to_the_message():
    """memory_elsewhere: the conversation's title and the item escaped, a link to the message."""
    html = server_frames()["memory_elsewhere"]["html"]
    assert html.startswith('<aside class="memory-toast" data-event="5"')
    assert "&lt;Trip&gt;" in html and "Her daughter is &lt;Ada&gt;" in html
    assert 'href="/c/3/?highlight=12#m12"' in html


def test_a_notice_quotes_what_it_replaced_without_a_second_full_stop():
    """A replaced text ending with its own full stop is not followed by another."""
    from django.template.loader import render_to_string

    from memory.selectors import NoticeItem

    notice = _notice()
    notice.items.append(
        NoticeItem("fact", 8, "replaced", "Her daughter is Adata.", exists=True, suggested=False)
    )
    html = render_to_string("memory/_notice.html", {"notice": notice})
    assert "Replaces “Her daughter is Adata.”</p>" in html
    assert ".”." not in html


@pytest.mark.parametrize("text", ["👍", "é", "e\u0301", "\u200bhi", "日本"])
def test_a_message_with_one_visible_character_is_sent(text):
    assert protocol.parse({"type": "send", "text": text}).text == text


def test_each_server_frame_has_exactly_the_keys_of_its_type():
    """The outgoing frames are typed like the incoming ones: each builder's TypedDict names
    the frame's keys, in the order they are sent, and its type's literal."""
    import typing

    frames = server_frames()
    for name, build in protocol.SERVER_FRAMES.items():
        frame_type = typing.get_type_hints(build)["return"]
        hints = typing.get_type_hints(frame_type)
        assert list(hints) == list(frames[name]), name
        assert typing.get_args(hints["type"]) == (name,)
        assert frame_type in typing.get_args(protocol.ServerFrame)
