"""Each first question keeps the title generated for its branch (chat.branches.follow). SQLite
may remake chat_message to add or drop the column: the memory index's triggers on it are set
aside around that (memory/migrations/_sqlite_triggers.py)."""

from django.db import migrations, models

from memory.migrations import _sqlite_triggers

aside = _sqlite_triggers.aside("chat_message")
back = _sqlite_triggers.back


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0010_offline_replies_without_notice"),
    ]

    operations = [
        migrations.RunPython(aside, back),
        migrations.AddField(
            model_name="message",
            name="branch_title",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
        migrations.RunPython(back, aside),
    ]
