"""The ChatGPT and Claude parsers (pure: no database)."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest

from tests.userdata.exports import (
    T0,
    as_json,
    as_zip,
    chatgpt_conversation,
    chatgpt_message,
    claude_conversation,
)
from userdata.transfer.external import READ_BYTES, BadFile, ExportReader, read_export

MB = 1_000_000
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def read(data: bytes, max_bytes: int = MB):
    return read_export(data, max_bytes=max_bytes, now=NOW)


def texts(conversation) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in conversation.messages]


def test_chatgpt_conversation_keeps_title_dates_and_visible_messages():
    """Title, dates and the user's and assistant's text; the hidden system message is left out."""
    export = read(as_json([chatgpt_conversation()]))
    assert export.source == "chatgpt"
    (conversation,) = export.conversations
    assert conversation.source_id == "c-1"
    assert conversation.title == "Trip to Lyon"
    assert conversation.created_at == datetime.fromtimestamp(T0, tz=UTC)
    assert texts(conversation) == [
        ("user", "My daughter's name is Zenobia."),
        ("assistant", "Noted: Zenobia."),
    ]
    assert conversation.messages[1].created_at == datetime.fromtimestamp(T0 + 60, tz=UTC)


def test_chatgpt_takes_the_current_branch_only():
    """An edited question leaves two branches: the one current_node ends is imported."""
    item = chatgpt_conversation(turns=[("user", "Which city?")])
    mapping = item["mapping"]
    first = "c-1-n0"
    mapping["old"] = chatgpt_message("old", "assistant", "Old answer", at=T0 + 5, parent=first)
    mapping["new-q"] = chatgpt_message(
        "new-q", "user", "Which city, really?", at=T0 + 9, parent="sys"
    )
    mapping["new-a"] = chatgpt_message("new-a", "assistant", "Lyon.", at=T0 + 10, parent="new-q")
    mapping[first]["children"] = ["old"]
    mapping["sys"]["children"].append("new-q")
    mapping["new-q"]["children"] = ["new-a"]
    item["current_node"] = "new-a"
    (conversation,) = read(as_json([item])).conversations
    assert texts(conversation) == [("user", "Which city, really?"), ("assistant", "Lyon.")]


def test_chatgpt_leaves_out_tools_hidden_and_non_text_content():
    """Tool calls and results, hidden messages, code and images are left out; the text parts
    of a multimodal message stay; a reply split by a tool call is one reply."""
    item = chatgpt_conversation(turns=[("user", "Weather in Lyon?")])
    mapping, parent = item["mapping"], "c-1-n0"
    extra = [
        chatgpt_message(
            "call", "assistant", "search(lyon)", at=T0 + 1, parent="", recipient="browser"
        ),
        chatgpt_message("tool", "tool", "results…", at=T0 + 2, parent=""),
        chatgpt_message(
            "code",
            "assistant",
            "",
            at=T0 + 3,
            parent="",
            content={"content_type": "code", "text": "print(1)"},
        ),
        chatgpt_message("a1", "assistant", "It is sunny.", at=T0 + 4, parent=""),
        chatgpt_message(
            "ctx",
            "user",
            "secret context",
            at=T0 + 5,
            parent="",
            metadata={"is_visually_hidden_from_conversation": True},
        ),
        chatgpt_message("a2", "assistant", "About 20°C.", at=T0 + 6, parent=""),
        chatgpt_message(
            "img",
            "user",
            "",
            at=T0 + 7,
            parent="",
            content={
                "content_type": "multimodal_text",
                "parts": [
                    {"content_type": "image_asset_pointer", "asset_pointer": "x"},
                    "And this photo?",
                ],
            },
        ),
    ]
    for node in extra:
        node["parent"] = parent
        mapping[parent]["children"].append(node["id"])
        mapping[node["id"]] = node
        parent = node["id"]
    item["current_node"] = parent
    (conversation,) = read(as_json([item])).conversations
    assert texts(conversation) == [
        ("user", "Weather in Lyon?"),
        ("assistant", "It is sunny.\n\nAbout 20°C."),
        ("user", "And this photo?"),
    ]


def test_claude_conversation_keeps_title_dates_and_text_blocks():
    """Human and assistant text; tool blocks are left out; dates are read as UTC."""
    item = claude_conversation()
    item["chat_messages"][1]["content"] = [
        {"type": "tool_use", "name": "search", "input": {}},
        {"type": "text", "text": "Tomatoes like Grenoble's summers."},
    ]
    export = read(as_json([item]))
    assert export.source == "claude"
    (conversation,) = export.conversations
    assert conversation.source_id == "u-1"
    assert conversation.title == "Garden plans"
    assert conversation.created_at == datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
    assert conversation.updated_at == datetime(2024, 3, 1, 9, 10, tzinfo=UTC)
    assert texts(conversation) == [
        ("user", "I live in Grenoble and grow tomatoes."),
        ("assistant", "Tomatoes like Grenoble's summers."),
    ]


def test_claude_message_without_content_blocks_uses_its_text():
    item = claude_conversation()
    for message in item["chat_messages"]:
        del message["content"]
    (conversation,) = read(as_json([item])).conversations
    assert texts(conversation)[0] == ("user", "I live in Grenoble and grow tomatoes.")


def test_a_zip_is_read_for_its_conversations_json():
    export = read(as_zip([chatgpt_conversation()]))
    assert [c.title for c in export.conversations] == ["Trip to Lyon"]


def test_empty_conversations_are_counted_not_imported():
    empty = chatgpt_conversation(ident="c-2", turns=[("user", "   ")])
    export = read(as_json([chatgpt_conversation(), empty]))
    assert len(export.conversations) == 1
    assert export.skipped_empty == 1


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b'[{"title": "x", ', "not valid JSON"),
        (b"\xff\xfe\x00garbage", "not text"),
        (
            as_json({"conversations": []}),
            "holds a list of conversations, this file holds an object",
        ),
        (as_json([{"id": "x", "messages": []}]), "the first item here has id, messages"),
        (as_json([1, 2]), "its items are not conversations"),
        (as_zip([], name="chat.html"), "The zip holds no conversations.json"),
        (b"PK\x03\x04broken", "The zip file could not be read"),
    ],
)
def test_a_file_of_another_shape_is_refused_saying_why(data, words):
    with pytest.raises(BadFile, match=words):
        read(data)


def test_wrong_shapes_name_the_conversation_and_message():
    item = chatgpt_conversation(title="Taxes")
    item["mapping"]["c-1-n0"]["message"]["content"] = "just text"
    with pytest.raises(BadFile, match=r"conversation 2 \(“Taxes”\), message 'c-1-n0': “content”"):
        read(as_json([chatgpt_conversation(ident="ok"), item]))


def test_a_broken_tree_is_refused():
    item = chatgpt_conversation()
    item["current_node"] = "missing"
    with pytest.raises(BadFile, match="names a node 'missing' it does not hold"):
        read(as_json([item]))
    looped = chatgpt_conversation()
    looped["mapping"]["root"]["parent"] = "c-1-n1"
    with pytest.raises(BadFile, match="loops"):
        read(as_json([looped]))


@pytest.mark.parametrize("create_time", [T0 * 1000, 10.0, "yesterday", None])
def test_absurd_or_missing_dates_are_refused(create_time):
    item = chatgpt_conversation()
    item["create_time"] = create_time
    with pytest.raises(BadFile, match="create_time"):
        read(as_json([item]))


def test_absurd_claude_date_is_refused():
    item = claude_conversation()
    item["chat_messages"][0]["created_at"] = "2999-01-01T00:00:00Z"
    with pytest.raises(BadFile, match=r"message 1: created_at: the date 2999-01-01"):
        read(as_json([item]))


def test_the_same_id_twice_is_refused():
    with pytest.raises(BadFile, match="also conversation 1's"):
        read(as_json([claude_conversation(), claude_conversation()]))


def test_a_zip_whose_conversations_are_too_large_is_refused_before_reading():
    big = [chatgpt_conversation(ident=f"c-{n}", turns=[("user", "x" * 1000)]) for n in range(20)]
    with pytest.raises(BadFile, match="MB unpacked"):
        read(as_zip(big), max_bytes=len(json.dumps(big)) - 1)


def test_a_lone_surrogate_is_replaced_not_refused():
    """JSON may hold "\\ud800", which is no character: the text is kept, the mark replaced."""
    data = as_json([chatgpt_conversation(turns=[("user", "caf\ud800e")])])
    (conversation,) = read(data).conversations
    assert conversation.messages[0].text == "caf?e"


class Recording(io.BytesIO):
    """A file that says how it was read: the largest piece asked and how far it got."""

    def __init__(self, data: bytes):
        super().__init__(data)
        self.largest = 0

    def read(self, size=-1):
        self.largest = max(self.largest, size if size is not None and size >= 0 else 1 << 62)
        return super().read(size)


def test_an_export_is_read_as_a_stream_a_conversation_at_a_time():
    """The file is read in pieces, and the first conversation is given before the end of the
    file is read: a large export is never whole in memory."""
    big = [
        chatgpt_conversation(ident=f"c-{n}", title=f"Chat {n}", turns=[("user", "x" * 2000)])
        for n in range(400)
    ]
    data = as_json(big)
    assert len(data) > 8 * READ_BYTES
    file = Recording(data)
    reader = ExportReader(file, max_bytes=len(data), now=NOW)
    first = next(iter(reader))
    assert first.title == "Chat 0"
    assert file.tell() < len(data) / 4
    assert file.largest <= READ_BYTES


def test_a_zip_member_is_read_as_a_stream_too():
    big = [
        chatgpt_conversation(ident=f"c-{n}", turns=[("user", f"{n} " * 900)]) for n in range(300)
    ]
    reader = ExportReader(io.BytesIO(as_zip(big)), max_bytes=10 * MB, now=NOW)
    titles = 0
    for conversation in reader:
        titles += 1
        assert conversation.messages[0].text.startswith(f"{titles - 1} ")
    assert (titles, reader.source) == (300, "chatgpt")


def test_a_json_file_larger_than_the_limit_is_refused_while_reading():
    """The limit holds however the file's size was told."""
    data = as_json([chatgpt_conversation(ident=f"c-{n}") for n in range(50)])
    with pytest.raises(BadFile, match="larger than an import takes"):
        read(data, max_bytes=len(data) // 2)


def test_a_zip_member_broken_inside_is_refused_saying_so():
    """A zip whose compressed data is damaged after its directory was read."""
    data = bytearray(as_zip([chatgpt_conversation(ident=f"c-{n}") for n in range(200)]))
    middle = data.index(b"conversations.json") + 200
    data[middle : middle + 40] = b"\x00" * 40
    with pytest.raises(BadFile, match=r"conversations\.json in the zip could not be read"):
        read(bytes(data))


def test_a_file_cut_off_says_after_which_conversation():
    data = as_json([chatgpt_conversation(ident="a", title="First"), chatgpt_conversation()])
    with pytest.raises(BadFile, match=r"not valid JSON \(.*\) after conversation 1 \(“First”\)"):
        read(data[:-40])


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"   \n ", "The file is empty"),
        (b'{"a": ', "not valid JSON"),
        (b'"just text"', "this file holds text"),
        (b"\xef\xbb\xbf[]", None),  # a UTF-8 mark first: an empty export, read
    ],
)
def test_what_the_file_holds_when_it_is_no_list(data, words):
    if words is None:
        assert read(data).conversations == []
        return
    with pytest.raises(BadFile, match=words):
        read(data)
