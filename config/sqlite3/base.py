"""Django's SQLite backend, with one change: a statement's ``%s`` placeholders are turned
into SQLite's ``?`` once per statement text, not on every execution.

Django converts them with a regular expression each time a statement runs: 4-8 µs a
statement, about as much as running a short one, on the 40-odd statements of every chat
turn (``bench/README.md``, issue 36). The app's statements are a small set of texts (plain
statements and reads compiled once), so the conversion is kept per text, in a bounded cache
(a text with values written into it, an ``IN`` list of ids, is one entry among many)."""

from __future__ import annotations

from functools import lru_cache

from django.db.backends.sqlite3 import base

CONVERTED_TEXTS = 2048  # statement texts whose conversion is kept (a few hundred in use)


@lru_cache(maxsize=CONVERTED_TEXTS)
def _qmark(query: str) -> str:
    # What Django's SQLiteCursorWrapper.convert_query does for positional parameters.
    return base.FORMAT_QMARK_REGEX.sub("?", query).replace("%%", "%")


class SQLiteCursorWrapper(base.SQLiteCursorWrapper):
    def convert_query(self, query, *, param_names=None):
        if param_names is None:
            return _qmark(query)
        return super().convert_query(query, param_names=param_names)


class DatabaseWrapper(base.DatabaseWrapper):
    def create_cursor(self, name=None):
        return self.connection.cursor(factory=SQLiteCursorWrapper)
