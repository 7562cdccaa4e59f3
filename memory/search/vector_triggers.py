# ruff: noqa: S608 — DDL built from the index's own source list, never from input.
"""A stored vector is of one text: database triggers drop it when that text changes or its row
is deleted, whoever writes (an edit, an extraction's merge, a revert, a bulk update, a cascade).
The ``embed_pending`` job computes the new text's vector; until then the row is matched by its
words only, never by the meaning of what it used to say (the search finds rows by their vectors
too: ``vectors``, ``ranking``).

Kept apart from the index's own triggers (``schema``): those are rebuilt by the migrations that
change the index, these only by the migration that made them.
"""

from __future__ import annotations

import sys

from memory.search.schema import execute, sources

# The columns each kind's indexed text is made of (schema.sources' "text").
TEXT_COLUMNS = {
    "message": ("content",),
    "fact": ("text",),
    "decision": ("what", "context", "rationale"),
    "action_item": ("what", "owner"),
    "summary": ("text",),
}


def _drop_vectors(kind: str) -> str:
    return f"DELETE FROM memory_embedding WHERE kind = '{kind}' AND object_id = OLD.id;"


def _changed(kind: str, vendor: str) -> str:
    differ = "IS NOT" if vendor == "sqlite" else "IS DISTINCT FROM"
    return " OR ".join(f"OLD.{c} {differ} NEW.{c}" for c in TEXT_COLUMNS[kind])


def sqlite_forwards() -> list[str]:
    statements = []
    for source in sources("sqlite"):
        kind, table = source["kind"], source["table"]
        columns = ", ".join(TEXT_COLUMNS[kind])
        statements += [
            f"CREATE TRIGGER memory_embedding_{kind}_au AFTER UPDATE OF {columns} ON {table} "
            f"WHEN {_changed(kind, 'sqlite')} BEGIN {_drop_vectors(kind)} END",
            f"CREATE TRIGGER memory_embedding_{kind}_ad AFTER DELETE ON {table} "
            f"BEGIN {_drop_vectors(kind)} END",
        ]
    return statements


def sqlite_backwards() -> list[str]:
    return [
        f"DROP TRIGGER IF EXISTS memory_embedding_{kind}_{suffix}"
        for kind in TEXT_COLUMNS
        for suffix in ("au", "ad")
    ]


def postgresql_forwards() -> list[str]:
    statements = []
    for source in sources("postgresql"):
        kind, table = source["kind"], source["table"]
        columns = ", ".join(TEXT_COLUMNS[kind])
        statements += [
            f"""CREATE FUNCTION memory_embedding_{kind}_stale() RETURNS trigger AS $$
            BEGIN {_drop_vectors(kind)} RETURN NULL; END $$ LANGUAGE plpgsql""",
            f"CREATE TRIGGER memory_embedding_{kind}_u AFTER UPDATE OF {columns} ON {table} "
            f"FOR EACH ROW WHEN ({_changed(kind, 'postgresql')}) "
            f"EXECUTE FUNCTION memory_embedding_{kind}_stale()",
            f"CREATE TRIGGER memory_embedding_{kind}_d AFTER DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION memory_embedding_{kind}_stale()",
        ]
    return statements


def postgresql_backwards() -> list[str]:
    statements = []
    for source in sources("postgresql"):
        kind, table = source["kind"], source["table"]
        statements += [
            f"DROP TRIGGER IF EXISTS memory_embedding_{kind}_u ON {table}",
            f"DROP TRIGGER IF EXISTS memory_embedding_{kind}_d ON {table}",
            f"DROP FUNCTION IF EXISTS memory_embedding_{kind}_stale()",
        ]
    return statements


def run(schema_editor, direction: str) -> None:
    execute(schema_editor, direction, sys.modules[__name__], "stale vector triggers")
