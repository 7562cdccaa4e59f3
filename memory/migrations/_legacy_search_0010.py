# ruff: noqa: S608 — DDL built from the constants below, never from input.
# Frozen: the index as migration 0010 created it (0016 replaces it with memory.search.schema,
# which leaves out the messages of branches not shown). Migrations 0010 and 0016 need it as
# it was, whatever the module becomes.
"""The full-text index of a user's memory, kept current by database triggers.

``memory_search`` holds the searchable text of what a user's memory may recall: their messages
(not those of temporary conversations, not failed ones, never the app's own offline replies or
text that quotes the memory block back), active facts, live decisions, open action items and
current summaries; never a suggestion (``state`` "suggested", waiting for the user).
``INDEXED_STATUSES`` is the one list of which statuses are indexed: the triggers' conditions
and the staff lists (``staff.kinds``) are both built from it.

``memory_search_stats`` holds each user's row count and word count, kept by the same triggers:
the per-user statistics BM25 ranks with (``memory.search.index``), so a user's ranking depends
on their own rows only.

SQLite: an FTS5 table (porter stemming); the owner is an indexed column (``u<id>``) matched with
the query, so a search intersects posting lists instead of filtering every match. PostgreSQL: a
table with a generated ``tsvector`` and a GIN index. Row ids are ``object_id * 8 + kind code``
so a trigger finds its row by primary key. Updates re-index only when an indexed column changes
(a streaming reply's lease renewal does not).
"""

from __future__ import annotations

import sys

from llm import OFFLINE_MODEL
from memory.models import ActionItem, Decision, Fact, MemoryState
from memory.prompts import MEMORY_MARKERS

KIND_CODES = {"message": 1, "fact": 2, "decision": 3, "action_item": 4, "summary": 5}

# The statuses of each kind of memory the index holds; rows with other statuses are not recalled.
INDEXED_STATUSES: dict[str, tuple[str, ...]] = {
    "fact": (Fact.Status.ACTIVE.value,),
    "decision": (
        Decision.Status.PROPOSED.value,
        Decision.Status.DECIDED.value,
        Decision.Status.REVISITED.value,
    ),
    "action_item": (ActionItem.Status.OPEN.value, ActionItem.Status.IN_PROGRESS.value),
}


# Suggestions wait for the user (memory mode "ask first"): nothing suggested is recalled.
UNINDEXED_STATE = MemoryState.SUGGESTED.value


def _statuses(kind: str, row: str) -> str:
    values = ", ".join(f"'{status}'" for status in INDEXED_STATUSES[kind])
    return f"{row}.status IN ({values}) AND {row}.state <> '{UNINDEXED_STATE}'"


def _no_marker(vendor: str, column: str) -> str:
    find = "instr({c}, '{m}') = 0" if vendor == "sqlite" else "strpos({c}, '{m}') = 0"
    return " AND ".join(find.format(c=column, m=m.replace("'", "''")) for m in MEMORY_MARKERS)


def _owner_of_conversation(row: str) -> str:
    return f"(SELECT c.user_id FROM chat_conversation c WHERE c.id = {row}.conversation_id)"


def _not_temporary(row: str) -> str:
    return f"NOT (SELECT c.temporary FROM chat_conversation c WHERE c.id = {row}.conversation_id)"


def sources(vendor: str, row: str = "NEW") -> list[dict]:
    """Per kind: source table, indexed text, owner, conversation, role, the condition for a
    row to be indexed, and the columns whose change re-indexes it. ``row`` names the source
    row (NEW in a trigger, a table alias in the backfill)."""
    r = row
    return [
        {
            "kind": "message",
            "table": "chat_message",
            "text": f"{r}.content",
            "user": _owner_of_conversation(r),
            "conversation": f"{r}.conversation_id",
            "role": f"{r}.role",
            "condition": (
                f"{r}.content <> '' AND {r}.status <> 'failed' AND {r}.model <> '{OFFLINE_MODEL}'"
                f" AND {_no_marker(vendor, f'{r}.content')} AND {_not_temporary(r)}"
            ),
            "columns": "content, status, model, conversation_id, created_at, role",
        },
        {
            "kind": "fact",
            "table": "memory_fact",
            "text": f"{r}.text",
            "user": f"{r}.user_id",
            "conversation": f"{r}.conversation_id",
            "role": "'fact'",
            "condition": _statuses("fact", r),
            "columns": "text, status, state, user_id, conversation_id",
        },
        {
            "kind": "decision",
            "table": "memory_decision",
            "text": f"{r}.what || ' ' || {r}.context || ' ' || {r}.rationale",
            "user": f"{r}.user_id",
            "conversation": f"{r}.conversation_id",
            "role": "'decision'",
            "condition": _statuses("decision", r),
            "columns": "what, context, rationale, status, state, user_id, conversation_id",
        },
        {
            "kind": "action_item",
            "table": "memory_actionitem",
            "text": f"{r}.what || ' ' || {r}.owner",
            "user": f"{r}.user_id",
            "conversation": f"{r}.conversation_id",
            "role": "'action_item'",
            "condition": _statuses("action_item", r),
            "columns": "what, owner, status, state, user_id, conversation_id",
        },
        {
            "kind": "summary",
            "table": "memory_summary",
            "text": f"{r}.text",
            "user": _owner_of_conversation(r),
            "conversation": f"{r}.conversation_id",
            "role": "'summary'",
            "condition": f"{r}.is_current AND {_not_temporary(r)}",
            "columns": "text, is_current, conversation_id",
        },
    ]


def words(expression: str) -> str:
    """Words of a text as the index counts them: spaces + 1 (``index.word_count`` in Python)."""
    return f"(length({expression}) - length(replace({expression}, ' ', '')) + 1)"


_INDEX_COLUMNS = "rowid, text, kind, object_id, user_id, conversation_id, created_at, role, words"


def _select(source: dict, row: str, vendor: str) -> str:
    code = KIND_CODES[source["kind"]]
    owner = f"'u' || ({source['user']}), " if vendor == "sqlite" else ""
    return (
        f"{row}.id * 8 + {code}, {source['text']}, {owner}'{source['kind']}', {row}.id, "
        f"{source['user']}, {source['conversation']}, {row}.created_at, {source['role']}, "
        f"{words(source['text'])}"
    )


def _columns(vendor: str) -> str:
    if vendor == "sqlite":
        return _INDEX_COLUMNS.replace("text, ", "text, owner, ", 1)
    return _INDEX_COLUMNS


_STATS = "memory_search_stats"


def _count_in(source: dict, vendor: str) -> str:
    """Add the NEW row (if indexed) to its owner's statistics."""
    return (
        f"INSERT INTO {_STATS}(user_id, row_count, word_count) "
        f"SELECT {source['user']}, 1, {words(source['text'])} WHERE {source['condition']} "
        f"ON CONFLICT(user_id) DO UPDATE SET row_count = {_STATS}.row_count + 1, "
        f"word_count = {_STATS}.word_count + excluded.word_count;"
    )


def _count_out(code: int) -> str:
    """Take the OLD row (if indexed) out of its owner's statistics."""
    old = f"FROM memory_search WHERE rowid = OLD.id * 8 + {code}"
    return (
        f"UPDATE {_STATS} SET row_count = row_count - 1, "
        f"word_count = word_count - (SELECT words {old}) WHERE user_id = (SELECT user_id {old});"
    )


def sqlite_forwards() -> list[str]:
    statements = [
        "CREATE VIRTUAL TABLE memory_search USING fts5("
        "text, owner, kind UNINDEXED, object_id UNINDEXED, user_id UNINDEXED, "
        "conversation_id UNINDEXED, created_at UNINDEXED, role UNINDEXED, words UNINDEXED, "
        "tokenize = 'porter unicode61 remove_diacritics 2')",
        f"CREATE TABLE {_STATS} (user_id integer PRIMARY KEY, row_count integer NOT NULL, "
        "word_count integer NOT NULL)",
    ]
    for source in sources("sqlite"):
        kind, table, code = source["kind"], source["table"], KIND_CODES[source["kind"]]
        insert = (
            f"INSERT INTO memory_search({_columns('sqlite')}) "
            f"SELECT {_select(source, 'NEW', 'sqlite')} WHERE {source['condition']}; "
            + _count_in(source, "sqlite")
        )
        remove = _count_out(code) + f" DELETE FROM memory_search WHERE rowid = OLD.id * 8 + {code};"
        statements += [
            f"CREATE TRIGGER memory_search_{kind}_ai AFTER INSERT ON {table} BEGIN {insert} END",
            f"CREATE TRIGGER memory_search_{kind}_au AFTER UPDATE OF {source['columns']} "
            f"ON {table} BEGIN {remove} {insert} END",
            f"CREATE TRIGGER memory_search_{kind}_ad AFTER DELETE ON {table} BEGIN {remove} END",
        ]
    return statements


def sqlite_backwards() -> list[str]:
    statements = ["DROP TABLE IF EXISTS memory_search", f"DROP TABLE IF EXISTS {_STATS}"]
    for kind in KIND_CODES:
        for suffix in ("ai", "au", "ad"):
            statements.append(f"DROP TRIGGER IF EXISTS memory_search_{kind}_{suffix}")
    return statements


def postgresql_forwards() -> list[str]:
    statements = [
        "CREATE TABLE memory_search ("
        "rowid bigint PRIMARY KEY, text text NOT NULL, kind varchar(20) NOT NULL, "
        "object_id bigint NOT NULL, user_id bigint NOT NULL, conversation_id bigint NULL, "
        "created_at timestamptz NOT NULL, role varchar(20) NOT NULL, words integer NOT NULL, "
        "tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED)",
        "CREATE INDEX memory_search_tsv ON memory_search USING gin (tsv) "
        "WITH (gin_pending_list_limit = 256)",
        "CREATE INDEX memory_search_user ON memory_search (user_id, kind)",
        "CREATE INDEX memory_search_user_newest ON memory_search (user_id, created_at)",
        f"CREATE TABLE {_STATS} (user_id bigint PRIMARY KEY, row_count bigint NOT NULL, "
        "word_count bigint NOT NULL)",
    ]
    for source in sources("postgresql"):
        kind, table, code = source["kind"], source["table"], KIND_CODES[source["kind"]]
        statements += [
            f"""CREATE FUNCTION memory_search_{kind}() RETURNS trigger AS $$
            BEGIN
              IF TG_OP IN ('UPDATE', 'DELETE') THEN
                {_count_out(code)}
                DELETE FROM memory_search WHERE rowid = OLD.id * 8 + {code};
              END IF;
              IF TG_OP IN ('INSERT', 'UPDATE') THEN
                IF {source["condition"]} THEN
                  INSERT INTO memory_search({_columns("postgresql")})
                  VALUES ({_select(source, "NEW", "postgresql")});
                  {_count_in(source, "postgresql")}
                END IF;
                RETURN NEW;
              END IF;
              RETURN OLD;
            END $$ LANGUAGE plpgsql""",
            f"CREATE TRIGGER memory_search_{kind}_i AFTER INSERT OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION memory_search_{kind}()",
            f"CREATE TRIGGER memory_search_{kind}_u AFTER UPDATE OF {source['columns']} "
            f"ON {table} FOR EACH ROW EXECUTE FUNCTION memory_search_{kind}()",
            f"""CREATE FUNCTION memory_search_{kind}_truncate() RETURNS trigger AS $$
            BEGIN
              DELETE FROM memory_search WHERE kind = '{kind}';
              {_recount()}
              RETURN NULL;
            END $$ LANGUAGE plpgsql""",
            f"CREATE TRIGGER memory_search_{kind}_truncate AFTER TRUNCATE ON {table} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION memory_search_{kind}_truncate()",
        ]
    return statements


def _recount() -> str:
    return (
        f"DELETE FROM {_STATS}; INSERT INTO {_STATS}(user_id, row_count, word_count) "
        "SELECT user_id, count(*), sum(words) FROM memory_search GROUP BY user_id;"
    )


def postgresql_backwards() -> list[str]:
    statements = []
    for source in sources("postgresql"):
        kind, table = source["kind"], source["table"]
        statements += [
            f"DROP TRIGGER IF EXISTS memory_search_{kind}_i ON {table}",
            f"DROP TRIGGER IF EXISTS memory_search_{kind}_u ON {table}",
            f"DROP TRIGGER IF EXISTS memory_search_{kind}_truncate ON {table}",
            f"DROP FUNCTION IF EXISTS memory_search_{kind}()",
            f"DROP FUNCTION IF EXISTS memory_search_{kind}_truncate()",
        ]
    return [*statements, "DROP TABLE IF EXISTS memory_search", f"DROP TABLE IF EXISTS {_STATS}"]


def backfill(vendor: str) -> list[str]:
    """Index what the source tables hold already (the migration that creates the index)."""
    statements = []
    for source in sources(vendor, row="src"):
        select = _select(source, "src", vendor)
        statements.append(
            f"INSERT INTO memory_search({_columns(vendor)}) SELECT {select} "
            f"FROM {source['table']} src WHERE {source['condition']}"
        )
    statements.append(
        f"INSERT INTO {_STATS}(user_id, row_count, word_count) "
        "SELECT user_id, count(*), sum(words) FROM memory_search GROUP BY user_id"
    )
    return statements


def execute(schema_editor, direction: str, module, what: str) -> None:
    """Run ``module``'s ``<vendor>_<direction>()`` statements (a migration's DDL)."""
    vendor = schema_editor.connection.vendor
    statements = getattr(module, f"{vendor}_{direction}", None)
    if statements is None:
        raise NotImplementedError(f"{what}: unsupported database {vendor}")
    for statement in statements():
        schema_editor.execute(statement, params=None)


def run(schema_editor, direction: str) -> None:
    execute(schema_editor, direction, sys.modules[__name__], "full-text search index")
    if direction == "forwards":
        for statement in backfill(schema_editor.connection.vendor):
            schema_editor.execute(statement, params=None)
