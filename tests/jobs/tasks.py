"""A job for the worker tests: it writes, so it meets a locked database as real jobs do."""

from django.contrib.auth import get_user_model
from django_tasks import task


@task()
def rename(user_id: int, name: str) -> str:
    get_user_model().objects.filter(pk=user_id).update(first_name=name)
    return name
