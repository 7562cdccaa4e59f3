"""Choices for the preference fields: languages and time zones."""

from __future__ import annotations

import zoneinfo
from functools import cache
from pathlib import Path

from django.conf import global_settings

# Django's own list of languages (code, English name), sorted by name: about a hundred,
# regional variants included ("pt-br", "zh-hans").
LANGUAGES: tuple[tuple[str, str], ...] = tuple(
    sorted(((code, str(name)) for code, name in global_settings.LANGUAGES), key=lambda c: c[1])
)
_LANGUAGE_NAMES = dict(LANGUAGES)

# Aliases kept in the tz database for compatibility ("US/Eastern", "Japan", "posixrules"):
# left out when the system's zone.tab, the tz database's list of locations, is not there.
_LEGACY_ZONE_PREFIXES = ("Etc/", "SystemV/", "US/", "Canada/", "Mexico/", "Brazil/", "Chile/")


def language_name(code: str) -> str:
    """The English name of a language code from ``LANGUAGES``; the code itself otherwise."""
    return _LANGUAGE_NAMES.get(code, code)


@cache
def timezones() -> tuple[str, ...]:
    """The zones a person picks from: the tz database's locations (``zone.tab``: one name per
    place, so no deprecated alias such as "Asia/Calcutta" or "US/Eastern"), plus UTC; without
    that file, ``zoneinfo.available_timezones()`` minus the alias families."""
    available = zoneinfo.available_timezones()  # walks the zone files: once
    located = _zone_tab_names() & available
    names = located or {
        name for name in available if "/" in name and not name.startswith(_LEGACY_ZONE_PREFIXES)
    }
    names.add("UTC")
    return tuple(sorted(names))


def _zone_tab_names() -> set[str]:
    for directory in zoneinfo.TZPATH:
        path = Path(directory) / "zone.tab"
        if path.is_file():
            return {
                line.split("\t")[2]
                for line in path.read_text(encoding="utf-8").splitlines()
                if line and not line.startswith("#") and line.count("\t") >= 2
            }
    return set()
