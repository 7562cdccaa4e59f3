"""Offline replies stored before the chat page's offline banner (issue 39, item 7) began with a
paragraph of their own saying so; the banner and the reply's "offline" badge say it now, so the
paragraph is taken out of those stored replies (and their earlier versions), and each reply's
token count is counted again."""

from django.conf import settings
from django.db import migrations

# As llm/offline.py wrote it before: followed by a blank line, then the reply.
OLD_NOTICE = (
    "*Offline reply: no language model is configured (`OPENAI_API_KEY` is not set), so this "
    "answer is assembled from what memorychat remembers, not generated.*"
)
OFFLINE_MODEL = "offline"  # llm.OFFLINE_MODEL
BATCH = 500


def without_notice(content: str) -> str:
    return content[len(OLD_NOTICE) :].lstrip("\n") if content.startswith(OLD_NOTICE) else content


def _ids(model) -> list[int]:
    """The rows to rewrite, by id first: SQLite does not isolate a query from the updates
    made while it is read."""
    rows = model.objects.filter(model=OFFLINE_MODEL, content__startswith=OLD_NOTICE)
    return list(rows.order_by("pk").values_list("pk", flat=True))


def strip_notice(apps, schema_editor):
    from contextwindow.tokens import count_tokens

    Message = apps.get_model("chat", "Message")
    ReplyVersion = apps.get_model("chat", "ReplyVersion")
    ids = _ids(Message)
    for start in range(0, len(ids), BATCH):
        replies = list(
            Message.objects.filter(pk__in=ids[start : start + BATCH]).select_related("conversation")
        )
        for reply in replies:
            reply.content = without_notice(reply.content)
            model = reply.conversation.model or settings.OPENAI_MODEL
            reply.token_count = count_tokens(reply.content, model)
        Message.objects.bulk_update(replies, ["content", "token_count"])
    ids = _ids(ReplyVersion)
    for start in range(0, len(ids), BATCH):
        versions = list(ReplyVersion.objects.filter(pk__in=ids[start : start + BATCH]))
        for version in versions:
            version.content = without_notice(version.content)
        ReplyVersion.objects.bulk_update(versions, ["content"])


class Migration(migrations.Migration):
    dependencies = [("chat", "0009_temporary_outside_projects")]

    # Nothing to put back: the paragraph said what the banner says.
    operations = [migrations.RunPython(strip_notice, migrations.RunPython.noop)]
