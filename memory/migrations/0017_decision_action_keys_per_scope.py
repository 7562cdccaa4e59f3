"""Decisions and action items are unique per user, scope and key (issue 37): the same one said
in two projects, or in a project and outside any, is learned in each. Two partial unique
constraints (a null project, everywhere, would be distinct from every other in one). Every
existing row was unique per user and key, so per scope too: no data to change. SQLite remakes
the tables to drop the old constraints: the memory index's triggers are set aside around it."""

from django.db import migrations, models

from memory.migrations import _sqlite_triggers

TABLES = ("memory_decision", "memory_actionitem")
aside = _sqlite_triggers.aside(*TABLES)
back = _sqlite_triggers.back


def _per_scope(model_name: str, prefix: str) -> list:
    return [
        migrations.AddConstraint(
            model_name=model_name,
            constraint=models.UniqueConstraint(
                fields=["user", "dedupe_key"],
                condition=models.Q(project__isnull=True),
                name=f"{prefix}_key_everywhere",
            ),
        ),
        migrations.AddConstraint(
            model_name=model_name,
            constraint=models.UniqueConstraint(
                fields=["user", "project", "dedupe_key"],
                condition=models.Q(project__isnull=False),
                name=f"{prefix}_key_in_project",
            ),
        ),
    ]


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0016_search_scoped"),
    ]

    operations = [
        migrations.RunPython(aside, back),
        migrations.RemoveConstraint(model_name="decision", name="decision_unique_key"),
        migrations.RemoveConstraint(model_name="actionitem", name="action_unique_key"),
        migrations.RunPython(back, aside),
        *_per_scope("decision", "decision"),
        *_per_scope("actionitem", "action"),
    ]
