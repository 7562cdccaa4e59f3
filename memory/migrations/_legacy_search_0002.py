# ruff: noqa: S608 — DDL built from the constants below, never from input.
# Frozen: the index as migration 0002 created it (0008 replaces it with memory.search.schema).
"""SQL for the full-text search index, kept current by database triggers.

One index table, ``memory_search``, holds the searchable text of the user's messages (not those
of temporary conversations), active facts, decisions, action items and current summaries.
Triggers on the source tables keep it current, so every write — ``message_create``,
``bulk_create``, an admin edit, a cascade delete — is indexed with no further call.

SQLite: an FTS5 table (porter stemming). The owner is an indexed column (``u<id>``) matched with
the query, so a search intersects posting lists instead of filtering every match. PostgreSQL: a
table with a generated ``tsvector`` and a GIN index. Row ids are ``object_id * 8 + kind code``
so a trigger finds its row by primary key.
"""

KIND_CODES = {"message": 1, "fact": 2, "decision": 3, "action_item": 4, "summary": 5}

# (kind, source table, text expression, user expression, conversation expression, condition)
SOURCES = [
    (
        "message",
        "chat_message",
        "NEW.content",
        "(SELECT c.user_id FROM chat_conversation c WHERE c.id = NEW.conversation_id)",
        "NEW.conversation_id",
        "NEW.content <> '' AND NEW.status <> 'failed' AND NOT (SELECT c.temporary FROM "
        "chat_conversation c WHERE c.id = NEW.conversation_id)",
    ),
    (
        "fact",
        "memory_fact",
        "NEW.text",
        "NEW.user_id",
        "NEW.conversation_id",
        "NEW.status = 'active'",
    ),
    (
        "decision",
        "memory_decision",
        "NEW.what || ' ' || NEW.context || ' ' || NEW.rationale",
        "NEW.user_id",
        "NEW.conversation_id",
        "NEW.status <> 'reversed'",
    ),
    (
        "action_item",
        "memory_actionitem",
        "NEW.what || ' ' || NEW.owner",
        "NEW.user_id",
        "NEW.conversation_id",
        "NEW.status IN ('open', 'in_progress')",
    ),
    (
        "summary",
        "memory_summary",
        "NEW.text",
        "(SELECT c.user_id FROM chat_conversation c WHERE c.id = NEW.conversation_id)",
        "NEW.conversation_id",
        "NEW.is_current AND NOT (SELECT c.temporary FROM chat_conversation c "
        "WHERE c.id = NEW.conversation_id)",
    ),
]


def sqlite_forwards() -> list[str]:
    statements = [
        "CREATE VIRTUAL TABLE memory_search USING fts5("
        "text, owner, kind UNINDEXED, object_id UNINDEXED, user_id UNINDEXED, "
        "conversation_id UNINDEXED, created_at UNINDEXED, "
        "tokenize = 'porter unicode61 remove_diacritics 2')"
    ]
    for kind, table, text, user, conversation, condition in SOURCES:
        code = KIND_CODES[kind]
        insert = (
            f"INSERT INTO memory_search(rowid, text, owner, kind, object_id, user_id, "
            f"conversation_id, created_at) SELECT NEW.id * 8 + {code}, {text}, "
            f"'u' || ({user}), '{kind}', NEW.id, {user}, {conversation}, NEW.created_at "
            f"WHERE {condition};"
        )
        statements += [
            f"CREATE TRIGGER memory_search_{kind}_ai AFTER INSERT ON {table} BEGIN {insert} END",
            f"CREATE TRIGGER memory_search_{kind}_au AFTER UPDATE ON {table} BEGIN "
            f"DELETE FROM memory_search WHERE rowid = OLD.id * 8 + {code}; {insert} END",
            f"CREATE TRIGGER memory_search_{kind}_ad AFTER DELETE ON {table} BEGIN "
            f"DELETE FROM memory_search WHERE rowid = OLD.id * 8 + {code}; END",
        ]
    return statements


def sqlite_backwards() -> list[str]:
    statements = ["DROP TABLE IF EXISTS memory_search"]
    for kind, *_ in SOURCES:
        for suffix in ("ai", "au", "ad"):
            statements.append(f"DROP TRIGGER IF EXISTS memory_search_{kind}_{suffix}")
    return statements


def postgresql_forwards() -> list[str]:
    statements = [
        "CREATE TABLE memory_search ("
        "rowid bigint PRIMARY KEY, text text NOT NULL, kind varchar(20) NOT NULL, "
        "object_id bigint NOT NULL, user_id bigint NOT NULL, conversation_id bigint NULL, "
        "created_at timestamptz NOT NULL, "
        "tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED)",
        "CREATE INDEX memory_search_tsv ON memory_search USING gin (tsv)",
        "CREATE INDEX memory_search_user ON memory_search (user_id, kind)",
    ]
    for kind, table, text, user, conversation, condition in SOURCES:
        code = KIND_CODES[kind]
        statements += [
            f"""CREATE FUNCTION memory_search_{kind}() RETURNS trigger AS $$
            BEGIN
              IF TG_OP IN ('UPDATE', 'DELETE') THEN
                DELETE FROM memory_search WHERE rowid = OLD.id * 8 + {code};
              END IF;
              IF TG_OP IN ('INSERT', 'UPDATE') THEN
                IF {condition} THEN
                  INSERT INTO memory_search(rowid, text, kind, object_id, user_id,
                                            conversation_id, created_at)
                  VALUES (NEW.id * 8 + {code}, {text}, '{kind}', NEW.id, {user},
                          {conversation}, NEW.created_at);
                END IF;
                RETURN NEW;
              END IF;
              RETURN OLD;
            END $$ LANGUAGE plpgsql""",
            f"CREATE TRIGGER memory_search_{kind} AFTER INSERT OR UPDATE OR DELETE ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION memory_search_{kind}()",
            f"""CREATE FUNCTION memory_search_{kind}_truncate() RETURNS trigger AS $$
            BEGIN DELETE FROM memory_search WHERE kind = '{kind}'; RETURN NULL; END
            $$ LANGUAGE plpgsql""",
            f"CREATE TRIGGER memory_search_{kind}_truncate AFTER TRUNCATE ON {table} "
            f"FOR EACH STATEMENT EXECUTE FUNCTION memory_search_{kind}_truncate()",
        ]
    return statements


def postgresql_backwards() -> list[str]:
    statements = []
    for kind, table, *_ in SOURCES:
        statements += [
            f"DROP TRIGGER IF EXISTS memory_search_{kind} ON {table}",
            f"DROP TRIGGER IF EXISTS memory_search_{kind}_truncate ON {table}",
            f"DROP FUNCTION IF EXISTS memory_search_{kind}()",
            f"DROP FUNCTION IF EXISTS memory_search_{kind}_truncate()",
        ]
    return [*statements, "DROP TABLE IF EXISTS memory_search"]


def run(schema_editor, direction: str) -> None:
    vendor = schema_editor.connection.vendor
    statements = {
        ("sqlite", "forwards"): sqlite_forwards,
        ("sqlite", "backwards"): sqlite_backwards,
        ("postgresql", "forwards"): postgresql_forwards,
        ("postgresql", "backwards"): postgresql_backwards,
    }.get((vendor, direction))
    if statements is None:
        raise NotImplementedError(f"full-text search index: unsupported database {vendor}")
    for statement in statements():
        schema_editor.execute(statement, params=None)
