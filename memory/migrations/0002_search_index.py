from django.db import migrations

from memory.migrations import _legacy_search_0002 as search_schema


def forwards(apps, schema_editor):
    search_schema.run(schema_editor, "forwards")


def backwards(apps, schema_editor):
    search_schema.run(schema_editor, "backwards")


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial"), ("chat", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
