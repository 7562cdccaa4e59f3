"""The local model's first vectors averaged the tokenizer file's padding in: drop them, so the
job and ``manage.py embed_backfill`` compute them again under the model's new name."""

from django.db import migrations

PADDED_MODEL = "all-MiniLM-L6-v2-onnx-int8"


def drop_padded_vectors(apps, schema_editor):
    apps.get_model("memory", "Embedding").objects.filter(model=PADDED_MODEL).delete()


class Migration(migrations.Migration):
    dependencies = [("memory", "0010_memory_state_events")]

    operations = [migrations.RunPython(drop_padded_vectors, migrations.RunPython.noop)]
