"""The memory switch becomes a mode: on is "automatic", off is "off", and "ask" (new memories
wait as suggestions) is new. Profiles and their history records are carried over."""

from django.db import migrations, models

CHOICES = [("automatic", "Automatic"), ("ask", "Ask first"), ("off", "Off")]
HELP = (
    "Off: no long-term memory, nothing learned from messages, learned style unused. "
    "Ask first: new memories wait for the user's approval."
)


def switch_to_mode(apps, schema_editor):
    for name in ("UserProfile", "HistoricalUserProfile"):
        model = apps.get_model("profiles", name)
        model.objects.filter(memory_enabled=False).update(memory_mode="off")


def mode_to_switch(apps, schema_editor):
    for name in ("UserProfile", "HistoricalUserProfile"):
        model = apps.get_model("profiles", name)
        model.objects.filter(memory_mode="off").update(memory_enabled=False)


class Migration(migrations.Migration):
    dependencies = [("profiles", "0001_initial")]

    operations = [
        migrations.AddField(
            model_name="userprofile",
            name="memory_mode",
            field=models.CharField(
                choices=CHOICES, default="automatic", help_text=HELP, max_length=10
            ),
        ),
        migrations.AddField(
            model_name="historicaluserprofile",
            name="memory_mode",
            field=models.CharField(
                choices=CHOICES, default="automatic", help_text=HELP, max_length=10
            ),
        ),
        migrations.RunPython(switch_to_mode, mode_to_switch),
        migrations.RemoveField(model_name="userprofile", name="memory_enabled"),
        migrations.RemoveField(model_name="historicaluserprofile", name="memory_enabled"),
    ]
