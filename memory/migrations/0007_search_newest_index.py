"""PostgreSQL: the newest rows of a user with common words come from an index scan that stops
after fulltext.NEWEST_WINDOW matches (it sorted every match: ~60 ms at 100k rows, now ~1 ms);
a short GIN pending list, which every search scans until it is merged."""

from django.db import migrations

FORWARDS = [
    "CREATE INDEX IF NOT EXISTS memory_search_user_newest ON memory_search (user_id, created_at)",
    "ALTER INDEX memory_search_tsv SET (gin_pending_list_limit = 256)",
]
BACKWARDS = [
    "DROP INDEX IF EXISTS memory_search_user_newest",
    "ALTER INDEX memory_search_tsv RESET (gin_pending_list_limit)",
]


def run(statements):
    def operation(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":  # SQLite's FTS5 needs neither
            for statement in statements:
                schema_editor.execute(statement, params=None)

    return operation


class Migration(migrations.Migration):
    dependencies = [("memory", "0006_list_order_indexes")]
    operations = [migrations.RunPython(run(FORWARDS), run(BACKWARDS))]
