"""A vector goes with its text: triggers drop it when the text changes or the row is deleted
(memory.search.vector_triggers). Vectors of memories edited since they were computed are
dropped now, so the job computes them again from today's text."""

from django.db import migrations
from django.db.models import F, OuterRef, Subquery

from memory.search import vector_triggers

EDITABLE = {"fact": "Fact", "decision": "Decision", "action_item": "ActionItem"}


def add_triggers(apps, schema_editor):
    Embedding = apps.get_model("memory", "Embedding")
    for kind, name in EDITABLE.items():
        edited = apps.get_model("memory", name).objects.filter(pk=OuterRef("object_id"))
        stale = (
            Embedding.objects.filter(kind=kind)
            .annotate(edited_at=Subquery(edited.values("updated_at")[:1]))
            .filter(edited_at__gt=F("created_at"))
        )
        Embedding.objects.filter(pk__in=list(stale.values_list("pk", flat=True))).delete()
    vector_triggers.run(schema_editor, "forwards")


def drop_triggers(apps, schema_editor):
    vector_triggers.run(schema_editor, "backwards")


class Migration(migrations.Migration):
    dependencies = [("memory", "0011_embeddings_unpadded"), ("chat", "0003_reply_versions")]

    operations = [migrations.RunPython(add_triggers, drop_triggers)]
