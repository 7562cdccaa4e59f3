"""Exact token counts with tiktoken, offline.

The two encodings the project needs ship in ``contextwindow/encodings/`` (gzipped, see
PROVENANCE.md).
Each is checked against tiktoken's own sha256 and built once per process. Pure Python: no Django.

Model names map to encodings as OpenAI documents them: gpt-4o, gpt-4.1, o1/o3/o4 and gpt-5 use
o200k_base; gpt-4 and gpt-3.5 use cl100k_base. Any other name (a local Llama, a new family) is
counted with o200k_base: the counts are then an estimate, exact only for OpenAI's models.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

import tiktoken

ENCODINGS_DIR = Path(__file__).resolve().parent / "encodings"
DEFAULT_MODEL = "gpt-4o"
DEFAULT_ENCODING = "o200k_base"

# Chat format overhead, as in OpenAI's cookbook "How to count tokens with tiktoken": every
# message costs 3 tokens of wrapper plus its encoded role (and 1 + its encoded name when it has
# one) beyond its content; every reply is primed with <|start|>assistant<|message|> (3 tokens).
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING_TOKENS = 3

_ENDOFTEXT = "<|endoftext|>"
_ENDOFPROMPT = "<|endofprompt|>"

# The specifications tiktoken_ext.openai_public uses (pat_str, special tokens, file hash).
_SPECS: dict[str, dict] = {
    "o200k_base": {
        "sha256": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "pat_str": "|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        "special_tokens": {_ENDOFTEXT: 199999, _ENDOFPROMPT: 200018},
    },
    "cl100k_base": {
        "sha256": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "pat_str": r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s""",  # noqa: E501
        "special_tokens": {
            _ENDOFTEXT: 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            _ENDOFPROMPT: 100276,
        },
    },
}

# Prefixes checked in order: the first match wins ("gpt-4o" before "gpt-4").
_MODEL_PREFIXES: tuple[tuple[str, str], ...] = (
    ("gpt-4o", "o200k_base"),
    ("chatgpt-4o", "o200k_base"),
    ("gpt-4.1", "o200k_base"),
    ("gpt-4.5", "o200k_base"),
    ("gpt-5", "o200k_base"),
    ("o1", "o200k_base"),
    ("o3", "o200k_base"),
    ("o4", "o200k_base"),
    ("gpt-oss", "o200k_base"),
    ("gpt-4", "cl100k_base"),
    ("gpt-3.5", "cl100k_base"),
    ("gpt-35", "cl100k_base"),  # Azure deployment names
    ("text-embedding-3", "cl100k_base"),
    ("text-embedding-ada-002", "cl100k_base"),
)


class EncodingFileError(RuntimeError):
    """A shipped encoding file is missing or does not match its expected hash."""


_load_lock = threading.Lock()


def _read_ranks(name: str) -> dict[bytes, int]:
    path = ENCODINGS_DIR / f"{name}.tiktoken.gz"
    try:
        raw = gzip.decompress(path.read_bytes())
    except OSError as exc:
        raise EncodingFileError(f"cannot read {path}: {exc}") from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != _SPECS[name]["sha256"]:
        raise EncodingFileError(
            f"{path} has sha256 {digest}, expected {_SPECS[name]['sha256']}: the file is corrupt"
        )
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@cache
def get_encoding(name: str) -> tiktoken.Encoding:
    """The tiktoken encoding ``name`` (o200k_base or cl100k_base), built once per process."""
    if name not in _SPECS:
        raise ValueError(f"unknown encoding {name!r}; shipped: {', '.join(sorted(_SPECS))}")
    with _load_lock:  # two threads asking at once build it once
        spec = _SPECS[name]
        return tiktoken.Encoding(
            name=name,
            pat_str=spec["pat_str"],
            mergeable_ranks=_read_ranks(name),
            special_tokens=spec["special_tokens"],
        )


def encoding_name_for_model(model: str) -> str:
    lowered = (model or "").strip().lower()
    lowered = lowered.rsplit("/", 1)[-1]  # "openai/gpt-4o" as some gateways name it
    for prefix, encoding in _MODEL_PREFIXES:
        if lowered.startswith(prefix):
            return encoding
    return DEFAULT_ENCODING


def tokenizer_known(model: str) -> bool:
    """True when ``model`` is one of OpenAI's, whose counts here are exact; any other model's
    counts are an estimate (its server's reported usage is the truth)."""
    lowered = (model or "").strip().lower().rsplit("/", 1)[-1]
    return any(lowered.startswith(prefix) for prefix, _ in _MODEL_PREFIXES)


def encoding_for_model(model: str) -> tiktoken.Encoding:
    """The encoding ``model`` uses; unknown names get o200k_base (see module docstring)."""
    return get_encoding(encoding_name_for_model(model))


def count_tokens(text: str, model: str = DEFAULT_MODEL) -> int:
    """Tokens in ``text``. Special-token strings in the text count as ordinary text, as they
    do when the API receives them inside a message."""
    return len(encoding_for_model(model).encode_ordinary(text))


def message_overhead(role: str, encoding: tiktoken.Encoding, name: str | None = None) -> int:
    """Tokens a chat message costs beyond its content: the wrapper, its role, its name."""
    extra = TOKENS_PER_MESSAGE + len(encoding.encode_ordinary(role))
    if name:
        extra += TOKENS_PER_NAME + len(encoding.encode_ordinary(name))
    return extra


def count_message_tokens(
    messages: Iterable[Mapping[str, str]], model: str = DEFAULT_MODEL, *, prime_reply: bool = True
) -> int:
    """Prompt tokens of a chat request made of ``messages``, chat-format overhead included.

    Matches the ``prompt_tokens`` the API reports for plain text messages.
    """
    encoding = encoding_for_model(model)
    total = REPLY_PRIMING_TOKENS if prime_reply else 0
    for message in messages:
        total += message_overhead(message["role"], encoding, message.get("name"))
        total += len(encoding.encode_ordinary(message["content"]))
    return total
