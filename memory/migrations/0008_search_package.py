"""The index becomes memory.search's: a role and word count per row, per-user statistics
(memory_search_stats), offline replies and quoted memory blocks left out, and updates that
re-index only when an indexed column changes. The old index is dropped and the new one filled
from the source tables."""

from django.db import migrations

from memory.migrations import _legacy_search_0002 as legacy
from memory.migrations import _legacy_search_0008 as schema


def forwards(apps, schema_editor):
    legacy.run(schema_editor, "backwards")
    schema.run(schema_editor, "forwards")


def backwards(apps, schema_editor):
    schema.run(schema_editor, "backwards")
    legacy.run(schema_editor, "forwards")


class Migration(migrations.Migration):
    dependencies = [("memory", "0007_search_newest_index"), ("chat", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
