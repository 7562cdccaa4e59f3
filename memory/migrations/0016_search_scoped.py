"""Projects scope the index: each row's scope (its project, 0 for everywhere) matched where a
search reads, statistics per (user, scope), triggers that follow a conversation or a memory
moving between projects; vectors carry their row's scope; the messages of a branch not shown
are left out. The index is rebuilt from the source tables."""

from django.db import migrations, models

from memory.migrations import _legacy_search_0010 as legacy
from memory.search import schema, vector_triggers

_CODES = " ".join(f"WHEN '{kind}' THEN {code}" for kind, code in schema.KIND_CODES.items())


def drop_index(apps, schema_editor):
    """Before memory_embedding is altered: SQLite remakes the table, which its triggers name."""
    vector_triggers.run(schema_editor, "backwards")
    legacy.run(schema_editor, "backwards")


def rebuild_index(apps, schema_editor):
    schema.run(schema_editor, "forwards")
    vector_triggers.run(schema_editor, "forwards")
    schema_editor.execute(
        "UPDATE memory_embedding SET scope = coalesce((SELECT s.scope FROM memory_search s "
        f"WHERE s.rowid = memory_embedding.object_id * 8 + CASE memory_embedding.kind {_CODES} "
        "ELSE 0 END), 0)",
        params=None,
    )


def undo_rebuild(apps, schema_editor):
    vector_triggers.run(schema_editor, "backwards")
    schema.run(schema_editor, "backwards")


def restore_index(apps, schema_editor):
    legacy.run(schema_editor, "forwards")
    vector_triggers.run(schema_editor, "forwards")


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0015_memory_project"),
        ("chat", "0006_conversation_project"),
        # The index leaves out the messages of a branch not shown (chat.Message.hidden_by).
        ("chat", "0007_message_branches"),
    ]

    operations = [
        migrations.RunPython(drop_index, restore_index),
        migrations.AddField(
            model_name="embedding",
            name="scope",
            field=models.BigIntegerField(default=0),
        ),
        migrations.RemoveIndex(model_name="embedding", name="embedding_user"),
        migrations.AddIndex(
            model_name="embedding",
            index=models.Index(fields=["user", "model", "scope"], name="embedding_user_scope"),
        ),
        migrations.RunPython(rebuild_index, undo_rebuild),
    ]
