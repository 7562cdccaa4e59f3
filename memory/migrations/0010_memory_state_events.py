"""Memories get a state (learned, suggested, kept, edited); MemoryEvent records what an
extraction added or changed, under the reply it followed."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

from memory.migrations import _legacy_search_0008 as legacy
from memory.migrations import _legacy_search_0010 as schema


def rebuild_index(apps, schema_editor):
    """The index leaves suggestions out (and re-indexes when a memory's state changes)."""
    legacy.run(schema_editor, "backwards")
    schema.run(schema_editor, "forwards")


def restore_index(apps, schema_editor):
    schema.run(schema_editor, "backwards")
    legacy.run(schema_editor, "forwards")


class Migration(migrations.Migration):

    dependencies = [
        ('chat', '0003_reply_versions'),
        ('memory', '0009_merge'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='MemoryEvent',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('source', models.CharField(choices=[('turn', 'Turn'), ('summary', 'Summary')], default='turn', max_length=10)),
                ('items', models.JSONField(default=list)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('undone_at', models.DateTimeField(blank=True, null=True)),
            ],
            options={
                'ordering': ['created_at', 'id'],
            },
        ),
        migrations.AddField(
            model_name='actionitem',
            name='state',
            field=models.CharField(choices=[('learned', 'Learned'), ('suggested', 'Suggested'), ('kept', 'Kept by the user'), ('edited', 'Edited by the user')], default='learned', max_length=10),
        ),
        migrations.AddField(
            model_name='decision',
            name='state',
            field=models.CharField(choices=[('learned', 'Learned'), ('suggested', 'Suggested'), ('kept', 'Kept by the user'), ('edited', 'Edited by the user')], default='learned', max_length=10),
        ),
        migrations.AddField(
            model_name='fact',
            name='state',
            field=models.CharField(choices=[('learned', 'Learned'), ('suggested', 'Suggested'), ('kept', 'Kept by the user'), ('edited', 'Edited by the user')], default='learned', max_length=10),
        ),
        migrations.AddField(
            model_name='historicalactionitem',
            name='state',
            field=models.CharField(choices=[('learned', 'Learned'), ('suggested', 'Suggested'), ('kept', 'Kept by the user'), ('edited', 'Edited by the user')], default='learned', max_length=10),
        ),
        migrations.AddField(
            model_name='historicaldecision',
            name='state',
            field=models.CharField(choices=[('learned', 'Learned'), ('suggested', 'Suggested'), ('kept', 'Kept by the user'), ('edited', 'Edited by the user')], default='learned', max_length=10),
        ),
        migrations.AddField(
            model_name='historicalfact',
            name='state',
            field=models.CharField(choices=[('learned', 'Learned'), ('suggested', 'Suggested'), ('kept', 'Kept by the user'), ('edited', 'Edited by the user')], default='learned', max_length=10),
        ),
        migrations.AddIndex(
            model_name='actionitem',
            index=models.Index(fields=['user', 'state', '-created_at'], name='action_user_state'),
        ),
        migrations.AddIndex(
            model_name='decision',
            index=models.Index(fields=['user', 'state', '-created_at'], name='decision_user_state'),
        ),
        migrations.AddIndex(
            model_name='fact',
            index=models.Index(fields=['user', 'state', '-created_at'], name='fact_user_state'),
        ),
        migrations.AddField(
            model_name='memoryevent',
            name='conversation',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='chat.conversation'),
        ),
        migrations.AddField(
            model_name='memoryevent',
            name='message',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memory_events', to='chat.message'),
        ),
        migrations.AddField(
            model_name='memoryevent',
            name='user',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.RunPython(rebuild_index, restore_index),
    ]
