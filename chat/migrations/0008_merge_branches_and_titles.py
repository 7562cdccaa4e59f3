from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("chat", "0007_conversation_title_source"),
        ("chat", "0007_message_branches"),
    ]

    operations = []
