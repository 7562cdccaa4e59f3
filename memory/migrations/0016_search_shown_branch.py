"""The index holds only the messages of the branch shown (chat.Message.hidden_by null): a
question edited into a new branch, or a branch switched away from, is not recalled."""

from django.db import migrations

from memory.migrations import _legacy_search_0010 as legacy
from memory.search import schema


def rebuild_index(apps, schema_editor):
    legacy.run(schema_editor, "backwards")
    schema.run(schema_editor, "forwards")


def restore_index(apps, schema_editor):
    schema.run(schema_editor, "backwards")
    legacy.run(schema_editor, "forwards")


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0007_message_branches"),
        ("memory", "0015_memory_project"),
    ]
    operations = [migrations.RunPython(rebuild_index, restore_index)]
