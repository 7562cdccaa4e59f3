"""Downloads every app serves the same way: a safe file name and an attachment response."""

from __future__ import annotations

import re
import unicodedata

from django.http import HttpResponse

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")


def download_filename(*parts: str, extension: str) -> str:
    """A download's file name from safe characters only (ASCII letters, digits, '-', '_',
    one '.' before the extension): accents are dropped ("zoë" -> "zoe"), anything else
    becomes '-', so no name can break the header or reach outside a folder."""
    words = []
    for part in parts:
        ascii_text = unicodedata.normalize("NFKD", str(part)).encode("ascii", "ignore").decode()
        word = _UNSAFE.sub("-", ascii_text).strip("-")
        if word:
            words.append(word)
    return ("-".join(words)[:120].strip("-") or "download") + f".{extension}"


def attachment(body: str, *, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
