"""Background jobs of the user's data (django-tasks; run by `manage.py job_worker`)."""

from django_tasks import task

from userdata import chat_import


@task()
def import_conversations(import_id: int) -> str:
    return chat_import.chat_import_run(import_id=import_id)


@task()
def build_imported_memory(import_id: int) -> str:
    return chat_import.chat_import_build_memory(import_id=import_id)
