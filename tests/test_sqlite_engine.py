"""config.sqlite3: Django's SQLite backend, placeholders converted once per statement text."""

import pytest
from django.db import connection
from django.db.backends.sqlite3.base import SQLiteCursorWrapper as DjangoCursor

from config.sqlite3.base import SQLiteCursorWrapper, _qmark

STATEMENTS = [
    "SELECT id FROM chat_message WHERE conversation_id = %s AND NOT (status = %s)",
    "SELECT 1 WHERE 'a%%b' LIKE %s",  # an escaped percent sign stays one
    "SELECT '%%s', %s",  # and is no placeholder
    "SELECT 1",
]


@pytest.mark.parametrize("sql", STATEMENTS)
def test_a_statement_is_converted_as_django_converts_it(sql):
    plain = DjangoCursor.convert_query(None, sql)
    assert _qmark(sql) == plain
    assert _qmark(sql) == plain  # the second time from the cache: the same text


@pytest.mark.django_db
def test_the_sqlite_connection_runs_statements_through_it():
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's backend")
    with connection.cursor() as cursor:
        assert isinstance(cursor.cursor, SQLiteCursorWrapper)
        cursor.execute("SELECT %s || '%%', %s", ["a", 2])
        assert cursor.fetchone() == ("a%", 2)
        cursor.execute("SELECT %(x)s || '%%'", {"x": "b"})  # named parameters, Django's way
        assert cursor.fetchone() == ("b%",)
