"""Plain text put into Markdown that the app writes (reports, briefings): escaped so that no
user or model text turns into markup."""

from __future__ import annotations

import re

_MARKUP = re.compile(r"([\\`*_\[\]<>#|~])")
_LEADING_BLOCK = re.compile(r"^(\d+)([.)])|^([-+])")


def md(text: str) -> str:
    """Inline text, escaped so it cannot turn into Markdown markup, on one line."""
    line = _MARKUP.sub(r"\\\1", " ".join(str(text or "").split()))
    # Nor may it start a list ("1. ", "- ") where a paragraph begins.
    return _LEADING_BLOCK.sub(lambda m: f"{m[1]}\\{m[2]}" if m[1] else f"\\{m[3]}", line)
