"""Setting triggers aside around a SQLite table remake (a migration helper, not a model).

SQLite alters a constraint by remaking the table, which fails (or silently drops them) while
triggers name the table (the memory index's, ``memory.search.schema``): they are dropped
before the remake and created again exactly as they were after it. PostgreSQL alters in place:
nothing to do there. Used as two ``RunPython`` steps around the altering operations, each the
other's reverse."""

from __future__ import annotations

_SET_ASIDE: dict[str, list[str]] = {}


def aside(*tables: str):
    def triggers_aside(apps, schema_editor):
        connection = schema_editor.connection
        if connection.vendor != "sqlite":
            return
        naming = " OR ".join("tbl_name = %s OR sql LIKE %s" for _ in tables)
        params: list[str] = []
        for table in tables:
            params += [table, f"%{table}%"]
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND ({naming})",
                params,
            )
            found = cursor.fetchall()
        _SET_ASIDE[connection.alias] = [sql for _, sql in found]
        for name, _ in found:
            schema_editor.execute(f'DROP TRIGGER "{name}"')

    return triggers_aside


def back(apps, schema_editor):
    for sql in _SET_ASIDE.pop(schema_editor.connection.alias, []):
        schema_editor.execute(sql)
