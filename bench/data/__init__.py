"""The benchmarks' texts, kept as data beside this file rather than in code: the chat corpus's
word lists and sentence templates, the labelled personas, the style corpus, the dashboard's
vocabulary and the fake upstream's reply. Edit the files, not the loaders."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _frozen(value):
    """JSON lists as tuples, all the way down: the tables are constants."""
    if isinstance(value, list):
        return tuple(_frozen(item) for item in value)
    if isinstance(value, dict):
        return {key: _frozen(item) for key, item in value.items()}
    return value


def load_json(name: str):
    """``bench/data/<name>``, decoded, with lists as tuples."""
    return _frozen(json.loads((HERE / name).read_text(encoding="utf-8")))


def load_text(name: str) -> str:
    """``bench/data/<name>`` as text, without its final newline."""
    return (HERE / name).read_text(encoding="utf-8").removesuffix("\n")
