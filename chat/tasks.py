"""Background jobs of the chat (django-tasks; run by `manage.py job_worker`, chat/jobs.py)."""

from django_tasks import task

from chat import titles


@task()
def title_conversation(conversation_id: int) -> str:
    """A title for a conversation's first exchange from the summary model (chat.titles)."""
    return titles.generate_title(conversation_id)
