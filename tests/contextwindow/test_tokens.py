"""Token counts from the encodings shipped with the project, with the network off."""

import socket
from unittest import mock

import pytest
import tiktoken_ext.openai_public as openai_public

from contextwindow import tokens


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Any attempt to open a socket fails the test: the encodings must load from disk."""

    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.mark.parametrize(
    ("text", "model", "expected"),
    [
        ("hello world", "gpt-4o", 2),
        ("Hello, world! How are you?", "gpt-4o", 8),
        ("tiktoken is great!", "gpt-4o", 6),
        ("tiktoken is great!", "gpt-3.5-turbo", 6),
        ("antidisestablishmentarianism", "gpt-4", 6),
        ("", "gpt-4o", 0),
    ],
)
def test_it_counts_known_values(text, model, expected):
    """Counts match the values OpenAI's cookbook and tiktoken publish."""
    assert tokens.count_tokens(text, model) == expected


@pytest.mark.parametrize(
    ("encoding", "ids"),
    [
        ("o200k_base", [83, 8251, 2488, 382, 2212, 0]),
        ("cl100k_base", [83, 1609, 5963, 374, 2294, 0]),
    ],
)
def test_it_produces_the_cookbook_token_ids(encoding, ids):
    """The ids of OpenAI's cookbook example are reproduced exactly."""
    assert tokens.get_encoding(encoding).encode_ordinary("tiktoken is great!") == ids


def test_special_token_text_counts_as_ordinary_text():
    """User text that spells a special token is counted, not rejected."""
    assert tokens.count_tokens("<|endoftext|>") > 1


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini-2024-07-18", "o200k_base"),
        ("gpt-4.1-nano", "o200k_base"),
        ("o1-preview", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("openai/gpt-4", "cl100k_base"),
        ("llama-3.1-8b-instruct", "o200k_base"),
        ("", "o200k_base"),
    ],
)
def test_it_maps_models_to_encodings(model, encoding):
    """Model families map as documented; unknown names fall back to o200k_base."""
    assert tokens.encoding_for_model(model).name == encoding


def test_encodings_are_built_once_per_process():
    """A second lookup returns the same object instead of reloading the file."""
    assert tokens.encoding_for_model("gpt-4o") is tokens.encoding_for_model("gpt-4.1")


def test_specs_match_tiktoken_own_definitions():
    """pat_str and special tokens are exactly tiktoken_ext.openai_public's."""
    with mock.patch.object(openai_public, "load_tiktoken_bpe", return_value={}):
        for name in ("o200k_base", "cl100k_base"):
            upstream = getattr(openai_public, name)()
            ours = tokens.get_encoding(name)
            assert ours._pat_str == upstream["pat_str"]
            assert ours._special_tokens == upstream["special_tokens"]


def test_a_corrupt_file_is_refused(tmp_path, monkeypatch):
    """A file whose sha256 does not match is rejected with a clear error."""
    import gzip

    (tmp_path / "o200k_base.tiktoken.gz").write_bytes(gzip.compress(b"aGVsbG8= 0\n"))
    monkeypatch.setattr(tokens, "ENCODINGS_DIR", tmp_path)
    with pytest.raises(tokens.EncodingFileError, match="sha256"):
        tokens._read_ranks("o200k_base")


def test_message_count_includes_chat_overhead():
    """Each message costs 3 + its role beyond the content, and the reply priming 3 more."""
    messages = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "Hello!"},
    ]
    content = tokens.count_tokens(messages[0]["content"]) + tokens.count_tokens("Hello!")
    assert tokens.count_message_tokens(messages) == content + 2 * (3 + 1) + 3
    assert tokens.count_message_tokens(messages, prime_reply=False) == content + 2 * (3 + 1)


def test_a_name_costs_one_more_token_plus_itself():
    """The name field adds tokens_per_name and its own tokens."""
    base = [{"role": "user", "content": "hi"}]
    named = [{"role": "user", "content": "hi", "name": "alice"}]
    assert tokens.count_message_tokens(named) == tokens.count_message_tokens(base) + 1 + 1
