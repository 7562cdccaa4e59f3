# ruff: noqa: S608 — DDL built from the constants below, never from input.
"""The full-text index of a user's memory, kept current by database triggers.

``memory_search`` holds the searchable text of what a user's memory may recall: their messages
(not those of temporary conversations, not failed ones, not a branch's that is not shown, never
the app's own offline replies or text that quotes the memory block back), active facts, live
decisions, open action items and current summaries; never a suggestion (``state``
"suggested", waiting for the user).
``INDEXED_STATUSES`` is the one list of which statuses are indexed: the triggers' conditions
and the staff lists (``staff.kinds``) are both built from it.

``memory_search_stats`` holds each user's row count and word count, kept by the same triggers:
the per-user statistics BM25 ranks with (``memory.search.index``), so a user's ranking depends
on their own rows only.

Every row has a scope: the project its conversation (a message, a summary) or the memory itself
(a fact, a decision, an action item) belongs to, 0 for everywhere. A conversation reads the
scopes ``scope.readable`` gives it (everywhere, and its own project's), matched in the query
itself; a conversation moving between projects re-indexes its messages and summary, a memory
whose project changes is re-indexed, and both lose their vectors, stored under the old scope
(the job computes them again, or ``projects.services`` carries them over).

``memory_search_stats`` is kept per (user, scope), so a ranking counts only what it may read.

SQLite: an FTS5 table (porter stemming); the owner is an indexed column holding two tokens,
``u<id>`` (the user's every row: the staff lists, the Memory page) and ``u<id>p<scope>`` (the
row's scope), matched with the query, so a search intersects posting lists instead of filtering
every match. PostgreSQL: a table with a generated ``tsvector`` and a GIN index, and a ``scope``
column matched beside ``user_id``. Row ids are ``object_id * 8 + kind code``
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


def _scope_of_conversation(row: str) -> str:
    return (
        f"(SELECT coalesce(c.project_id, 0) FROM chat_conversation c "
        f"WHERE c.id = {row}.conversation_id)"
    )


def _not_temporary(row: str) -> str:
    return f"NOT (SELECT c.temporary FROM chat_conversation c WHERE c.id = {row}.conversation_id)"


def sources(vendor: str, row: str = "NEW") -> list[dict]:
    """Per kind: source table, indexed text, owner, conversation, scope, role, the condition for a
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
            "scope": _scope_of_conversation(r),
            "role": f"{r}.role",
            "condition": (
                f"{r}.content <> '' AND {r}.status <> 'failed' AND {r}.model <> '{OFFLINE_MODEL}'"
                f" AND {_no_marker(vendor, f'{r}.content')} AND {_not_temporary(r)}"
                f" AND {r}.hidden_by_id IS NULL"  # a branch not shown is not recalled
            ),
            "columns": "content, status, model, conversation_id, created_at, role, hidden_by_id",
        },
        {
            "kind": "fact",
            "table": "memory_fact",
            "text": f"{r}.text",
            "user": f"{r}.user_id",
            "conversation": f"{r}.conversation_id",
            "scope": f"coalesce({r}.project_id, 0)",
            "role": "'fact'",
            "condition": _statuses("fact", r),
            "columns": "text, status, state, user_id, conversation_id, project_id",
        },
        {
            "kind": "decision",
            "table": "memory_decision",
            "text": f"{r}.what || ' ' || {r}.context || ' ' || {r}.rationale",
            "user": f"{r}.user_id",
            "conversation": f"{r}.conversation_id",
            "scope": f"coalesce({r}.project_id, 0)",
            "role": "'decision'",
            "condition": _statuses("decision", r),
            "columns": (
                "what, context, rationale, status, state, user_id, conversation_id, project_id"
            ),
        },
        {
            "kind": "action_item",
            "table": "memory_actionitem",
            "text": f"{r}.what || ' ' || {r}.owner",
            "user": f"{r}.user_id",
            "conversation": f"{r}.conversation_id",
            "scope": f"coalesce({r}.project_id, 0)",
            "role": "'action_item'",
            "condition": _statuses("action_item", r),
            "columns": "what, owner, status, state, user_id, conversation_id, project_id",
        },
        {
            "kind": "summary",
            "table": "memory_summary",
            "text": f"{r}.text",
            "user": _owner_of_conversation(r),
            "conversation": f"{r}.conversation_id",
            "scope": _scope_of_conversation(r),
            "role": "'summary'",
            "condition": f"{r}.is_current AND {_not_temporary(r)}",
            "columns": "text, is_current, conversation_id",
        },
    ]


def words(expression: str) -> str:
    """Words of a text as the index counts them: spaces + 1 (``index.word_count`` in Python)."""
    return f"(length({expression}) - length(replace({expression}, ' ', '')) + 1)"


_INDEX_COLUMNS = (
    "rowid, text, kind, object_id, user_id, conversation_id, created_at, role, words, scope"
)


def _owner_column(user: str, scope: str) -> str:
    """SQLite: the owner column's text, the user's token then their scope's (SQL expressions)."""
    return f"'u' || ({user}) || ' u' || ({user}) || 'p' || ({scope})"


def _select(source: dict, row: str, vendor: str) -> str:
    code = KIND_CODES[source["kind"]]
    owner = f"{_owner_column(source['user'], source['scope'])}, " if vendor == "sqlite" else ""
    return (
        f"{row}.id * 8 + {code}, {source['text']}, {owner}'{source['kind']}', {row}.id, "
        f"{source['user']}, {source['conversation']}, {row}.created_at, {source['role']}, "
        f"{words(source['text'])}, {source['scope']}"
    )


def _columns(vendor: str) -> str:
    if vendor == "sqlite":
        return _INDEX_COLUMNS.replace("text, ", "text, owner, ", 1)
    return _INDEX_COLUMNS


_STATS = "memory_search_stats"


def _count_in(source: dict, vendor: str) -> str:
    """Add the NEW row (if indexed) to its owner's statistics, in its scope."""
    return (
        f"INSERT INTO {_STATS}(user_id, scope, row_count, word_count) "
        f"SELECT {source['user']}, {source['scope']}, 1, {words(source['text'])} "
        f"WHERE {source['condition']} "
        f"ON CONFLICT(user_id, scope) DO UPDATE SET row_count = {_STATS}.row_count + 1, "
        f"word_count = {_STATS}.word_count + excluded.word_count;"
    )


def _count_out(code: int) -> str:
    """Take the OLD row (if indexed) out of its owner's statistics."""
    old = f"FROM memory_search WHERE rowid = OLD.id * 8 + {code}"
    return (
        f"UPDATE {_STATS} SET row_count = row_count - 1, "
        f"word_count = word_count - (SELECT words {old}) "
        f"WHERE user_id = (SELECT user_id {old}) AND scope = (SELECT scope {old});"
    )


# A conversation moving between projects: its messages and current summary are re-indexed in
# the new scope (their own triggers, fired by naming a column they watch), and their vectors,
# stored under the old scope, are dropped.
_MOVED_CONVERSATION = (
    "UPDATE chat_message SET conversation_id = conversation_id WHERE conversation_id = NEW.id; "
    "UPDATE memory_summary SET conversation_id = conversation_id "
    "WHERE conversation_id = NEW.id AND is_current; "
    "DELETE FROM memory_embedding WHERE kind = 'message' AND object_id IN "
    "(SELECT id FROM chat_message WHERE conversation_id = NEW.id); "
    "DELETE FROM memory_embedding WHERE kind = 'summary' AND object_id IN "
    "(SELECT id FROM memory_summary WHERE conversation_id = NEW.id);"
)
SCOPED_MEMORIES = {
    "fact": "memory_fact",
    "decision": "memory_decision",
    "action_item": "memory_actionitem",
}


def _moved_memory(kind: str) -> str:
    """A memory changing project: its vector, stored under the old scope, is dropped."""
    return f"DELETE FROM memory_embedding WHERE kind = '{kind}' AND object_id = OLD.id;"


def _project_changed(vendor: str) -> str:
    return (
        "OLD.project_id IS NOT NEW.project_id"
        if vendor == "sqlite"
        else "OLD.project_id IS DISTINCT FROM NEW.project_id"
    )


def sqlite_forwards() -> list[str]:
    statements = [
        "CREATE VIRTUAL TABLE memory_search USING fts5("
        "text, owner, kind UNINDEXED, object_id UNINDEXED, user_id UNINDEXED, "
        "conversation_id UNINDEXED, created_at UNINDEXED, role UNINDEXED, words UNINDEXED, "
        "scope UNINDEXED, tokenize = 'porter unicode61 remove_diacritics 2')",
        f"CREATE TABLE {_STATS} (user_id integer NOT NULL, scope integer NOT NULL, "
        "row_count integer NOT NULL, word_count integer NOT NULL, PRIMARY KEY (user_id, scope))",
        "CREATE TRIGGER memory_search_conversation_moved AFTER UPDATE OF project_id "
        f"ON chat_conversation WHEN {_project_changed('sqlite')} BEGIN {_MOVED_CONVERSATION} END",
    ]
    for kind, table in SCOPED_MEMORIES.items():
        statements.append(
            f"CREATE TRIGGER memory_search_{kind}_moved AFTER UPDATE OF project_id ON {table} "
            f"WHEN {_project_changed('sqlite')} BEGIN {_moved_memory(kind)} END"
        )
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
    statements.append("DROP TRIGGER IF EXISTS memory_search_conversation_moved")
    statements += [f"DROP TRIGGER IF EXISTS memory_search_{kind}_moved" for kind in SCOPED_MEMORIES]
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
        "scope bigint NOT NULL, "
        "tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED)",
        "CREATE INDEX memory_search_tsv ON memory_search USING gin (tsv) "
        "WITH (gin_pending_list_limit = 256)",
        "CREATE INDEX memory_search_user ON memory_search (user_id, kind)",
        "CREATE INDEX memory_search_user_newest ON memory_search (user_id, created_at)",
        f"CREATE TABLE {_STATS} (user_id bigint NOT NULL, scope bigint NOT NULL, "
        "row_count bigint NOT NULL, word_count bigint NOT NULL, PRIMARY KEY (user_id, scope))",
        f"""CREATE FUNCTION memory_search_conversation_moved() RETURNS trigger AS $$
        BEGIN {_MOVED_CONVERSATION} RETURN NULL; END $$ LANGUAGE plpgsql""",
        "CREATE TRIGGER memory_search_conversation_moved AFTER UPDATE OF project_id "
        f"ON chat_conversation FOR EACH ROW WHEN ({_project_changed('postgresql')}) "
        "EXECUTE FUNCTION memory_search_conversation_moved()",
    ]
    for kind, table in SCOPED_MEMORIES.items():
        statements += [
            f"""CREATE FUNCTION memory_search_{kind}_moved() RETURNS trigger AS $$
            BEGIN {_moved_memory(kind)} RETURN NULL; END $$ LANGUAGE plpgsql""",
            f"CREATE TRIGGER memory_search_{kind}_moved AFTER UPDATE OF project_id ON {table} "
            f"FOR EACH ROW WHEN ({_project_changed('postgresql')}) "
            f"EXECUTE FUNCTION memory_search_{kind}_moved()",
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
        f"DELETE FROM {_STATS}; INSERT INTO {_STATS}(user_id, scope, row_count, word_count) "
        "SELECT user_id, scope, count(*), sum(words) FROM memory_search GROUP BY user_id, scope;"
    )


def postgresql_backwards() -> list[str]:
    statements = [
        "DROP TRIGGER IF EXISTS memory_search_conversation_moved ON chat_conversation",
        "DROP FUNCTION IF EXISTS memory_search_conversation_moved()",
    ]
    for kind, table in SCOPED_MEMORIES.items():
        statements += [
            f"DROP TRIGGER IF EXISTS memory_search_{kind}_moved ON {table}",
            f"DROP FUNCTION IF EXISTS memory_search_{kind}_moved()",
        ]
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
        f"INSERT INTO {_STATS}(user_id, scope, row_count, word_count) "
        "SELECT user_id, scope, count(*), sum(words) FROM memory_search GROUP BY user_id, scope"
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
