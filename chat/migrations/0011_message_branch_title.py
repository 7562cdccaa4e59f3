from django.db import migrations, models

from memory.migrations import _sqlite_triggers

# SQLite adds a NOT NULL column by remaking chat_message, which fails while the memory
# index's triggers name the table: they are set aside around the remake.
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
