"""A temporary conversation is never in a project: a check constraint (issue 37)."""

from django.db import migrations, models

# SQLite adds a check constraint by remaking the table, which fails (or silently drops
# them) while triggers name chat_conversation (the memory index's): they are set aside
# around the remake and created again exactly as they were.
_SET_ASIDE: dict[str, list[str]] = {}


def temporary_out_of_projects(apps, schema_editor):
    """A temporary chat written into a project before the constraint (none should be: every
    path refused it) leaves the project rather than failing the migration."""
    if schema_editor.connection.vendor == "postgresql":
        # Checked now, so no deferred foreign-key event is pending when the table is altered.
        schema_editor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    Conversation = apps.get_model("chat", "Conversation")
    Conversation.objects.filter(temporary=True, project__isnull=False).update(project=None)


def triggers_aside(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' "
            "AND (tbl_name = 'chat_conversation' OR sql LIKE '%chat_conversation%')"
        )
        found = cursor.fetchall()
    _SET_ASIDE[connection.alias] = [sql for _, sql in found]
    for name, _ in found:
        schema_editor.execute(f'DROP TRIGGER "{name}"')


def triggers_back(apps, schema_editor):
    for sql in _SET_ASIDE.pop(schema_editor.connection.alias, []):
        schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0008_merge_branches_and_titles"),
        ("projects", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(temporary_out_of_projects, migrations.RunPython.noop),
        migrations.RunPython(triggers_aside, triggers_back),
        migrations.AddConstraint(
            model_name="conversation",
            constraint=models.CheckConstraint(
                condition=models.Q(("temporary", False), ("project__isnull", True), _connector="OR"),
                name="conv_temporary_outside_projects",
            ),
        ),
        migrations.RunPython(triggers_back, triggers_aside),
    ]
