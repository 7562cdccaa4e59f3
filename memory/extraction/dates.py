"""Due dates (relative to ``today``; the first date phrase in the item wins).

ISO ``2025-03-07``; ``today``/``tonight``/``this morning|afternoon|evening`` = today;
``tomorrow``; ``the day after tomorrow``; a bare weekday or ``this``/``coming`` weekday = the
next such day on or after today (today counts: "by Friday" said on a Friday is today);
``next <weekday>`` = that weekday in the following Monday-to-Sunday week; ``(last <weekday>``
is ignored); ``this weekend`` = the Saturday on or after today, ``next weekend`` = the Saturday
of next week; ``next week`` = today + 7 days; ``next month`` = same day next month (clamped),
``next year`` = same day next year; ``end of (the) week`` = Friday on or after today, ``end of
(the) month/year`` = its last day; ``in/within N days|weeks|months`` (N a number or one..ten/a);
``March 3rd`` / ``on March 3`` / ``3 March`` / ``3rd of March`` / ``Mar 3, 2026`` (month names
or three-letter abbreviations) = that date this year, or next year if it is already past, unless
a year is given. Impossible dates (31 February) are ignored. Abbreviated weekdays are not read.
"""

from __future__ import annotations

import calendar
import datetime
import re

from memory.extraction.text import NUMBER_WORDS, I, squash

_WEEKDAYS = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
}
_MONTHS = {
    "january": 1,
    "jan": 1,
    "february": 2,
    "feb": 2,
    "march": 3,
    "mar": 3,
    "april": 4,
    "apr": 4,
    "may": 5,
    "june": 6,
    "jun": 6,
    "july": 7,
    "jul": 7,
    "august": 8,
    "aug": 8,
    "september": 9,
    "sept": 9,
    "sep": 9,
    "october": 10,
    "oct": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}
_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True))
_NUM_ALT = r"\d{1,3}|a|an|one|two|three|four|five|six|seven|eight|nine|ten"
_DATE_PATTERNS = [
    ("iso", re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b")),
    (
        "dmy",
        re.compile(
            rf"\b(?:the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?(?:\s+of)?\s+(?P<mon>{_MONTH_ALT})\b\.?"
            rf"(?:,?\s+(?P<y>\d{{4}})\b)?",
            I,
        ),
    ),
    (
        "mdy",
        re.compile(
            rf"\b(?P<mon>{_MONTH_ALT})\.?\s+(?:the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b"
            rf"(?:,?\s+(?P<y>\d{{4}})\b)?",
            I,
        ),
    ),
    (
        "rel",
        re.compile(
            r"\b(?:(?:the\s+)?day\s+after\s+tomorrow|tomorrow|today|tonight|"
            r"this\s+(?:morning|afternoon|evening))\b",
            I,
        ),
    ),
    (
        "wd",
        re.compile(
            r"\b(?:(?P<mod>next|this|coming)\s+)?"
            r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b",
            I,
        ),
    ),
    ("weekend", re.compile(r"\b(?:(?P<mod>this|next)\s+|the\s+)weekend\b", I)),
    (
        "period",
        re.compile(
            r"\b(?:next\s+(?P<unit>week|month|year)|(?:the\s+)?end\s+of\s+(?:the\s+|this\s+)?"
            rf"(?P<eo>week|month|year)|(?:in|within)\s+(?P<n>{_NUM_ALT})\s+"
            r"(?P<u>days?|weeks?|months?))\b",
            I,
        ),
    ),
]


def _add_months(day: datetime.date, months: int) -> datetime.date:
    month0 = day.month - 1 + months
    year, month = day.year + month0 // 12, month0 % 12 + 1
    return datetime.date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _coming(today: datetime.date, weekday: int) -> datetime.date:
    """The first ``weekday`` (0 is Monday) on or after ``today``."""
    return today + datetime.timedelta(days=(weekday - today.weekday()) % 7)


def _next_week(today: datetime.date, weekday: int) -> datetime.date:
    """``weekday`` (0 is Monday) in the Monday-to-Sunday week after the one of ``today``."""
    return today + datetime.timedelta(days=7 - today.weekday() + weekday)


def _resolve(kind: str, m: re.Match, today: datetime.date) -> datetime.date | None:
    text = m.group(0).lower()
    if kind == "iso":
        try:
            return datetime.date(int(m["y"]), int(m["m"]), int(m["d"]))
        except ValueError:
            return None
    if kind in ("dmy", "mdy"):
        month, day = _MONTHS[m["mon"].lower()], int(m["d"])
        year = int(m["y"]) if m["y"] else today.year
        try:
            when = datetime.date(year, month, day)
        except ValueError:
            return None
        if not m["y"] and when < today:
            try:
                when = datetime.date(year + 1, month, day)
            except ValueError:  # 29 February
                return None
        return when
    if kind == "rel":
        if "after" in text:
            return today + datetime.timedelta(days=2)
        if "tomorrow" in text:
            return today + datetime.timedelta(days=1)
        return today
    if kind == "wd":
        before = m.string[max(0, m.start() - 12) : m.start()].lower()
        if re.search(r"\b(?:last|past|every|on\s+previous)\s*$", before):
            return None
    if kind in ("wd", "weekend"):
        weekday = _WEEKDAYS[m["wd"].lower()] if kind == "wd" else 5  # the weekend's Saturday
        pick = _next_week if (m["mod"] or "").lower() == "next" else _coming
        return pick(today, weekday)
    # period
    if m["unit"]:
        unit = m["unit"].lower()
        if unit == "week":
            return today + datetime.timedelta(days=7)
        return _add_months(today, 1 if unit == "month" else 12)
    if m["eo"]:
        unit = m["eo"].lower()
        if unit == "week":
            return _coming(today, 4)
        if unit == "month":
            return today.replace(day=calendar.monthrange(today.year, today.month)[1])
        return datetime.date(today.year, 12, 31)
    raw = m["n"].lower()
    n = int(raw) if raw.isdigit() else NUMBER_WORDS.get(raw, 1)
    unit = m["u"].lower()
    if unit.startswith("day"):
        return today + datetime.timedelta(days=n)
    if unit.startswith("week"):
        return today + datetime.timedelta(days=7 * n)
    return _add_months(today, n)


def find_date(text: str, today: datetime.date) -> tuple[datetime.date, int, int] | None:
    """The first date phrase in ``text``: (date, start, end), or None."""
    found: list[tuple[int, int, datetime.date]] = []
    for kind, pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            when = _resolve(kind, m, today)
            if when is not None:
                found.append((m.start(), -m.end(), when))
                break
    if not found:
        return None
    start, neg_end, when = min(found)
    return when, start, -neg_end


def parse_date(text: str, *, today: datetime.date) -> datetime.date | None:
    """The first date phrase in ``text`` resolved against ``today`` (see the module docs)."""
    hit = find_date(text or "", today)
    return hit[0] if hit else None


_DATE_PREP = re.compile(
    r"(?:,?\s*\b(?:by|before|on|until|till|due|due\s+on|due\s+by|no\s+later\s+than|for|at)\s*)?$",
    I,
)


def remove_date(text: str, today: datetime.date) -> tuple[str, datetime.date | None]:
    """``text`` without its first date phrase (and the preposition before it), and the date."""
    hit = find_date(text, today)
    if not hit:
        return text, None
    when, start, end = hit
    head = _DATE_PREP.sub("", text[:start])
    tail = re.sub(r"^\s*(?:at\s+the\s+latest|latest)\b", "", text[end:], flags=I)
    return squash(f"{head} {tail}").strip(" ,;"), when
