"""Choices for the preference fields: languages and time zones."""

from __future__ import annotations

import zoneinfo
from functools import cache

from django.conf import global_settings

# Django's own list of languages (code, English name), sorted by name: about a hundred,
# regional variants included ("pt-br", "zh-hans").
LANGUAGES: tuple[tuple[str, str], ...] = tuple(
    sorted(((code, str(name)) for code, name in global_settings.LANGUAGES), key=lambda c: c[1])
)
_LANGUAGE_NAMES = dict(LANGUAGES)

# Aliases kept in the tz database for compatibility ("US/Eastern", "Japan", "posixrules").
_LEGACY_ZONE_PREFIXES = ("Etc/", "SystemV/", "US/", "Canada/", "Mexico/", "Brazil/", "Chile/")


def language_name(code: str) -> str:
    """The English name of a language code from ``LANGUAGES``; the code itself otherwise."""
    return _LANGUAGE_NAMES.get(code, code)


@cache
def timezones() -> tuple[str, ...]:
    """Canonical IANA zone names from ``zoneinfo.available_timezones()``, sorted, plus UTC."""
    names = {
        name
        for name in zoneinfo.available_timezones()
        if "/" in name and not name.startswith(_LEGACY_ZONE_PREFIXES)
    }
    names.add("UTC")
    return tuple(sorted(names))
