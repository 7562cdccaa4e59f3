"""A job for the worker tests: it writes, so it meets a locked database as real jobs do."""

from django.contrib.auth import get_user_model
from django_tasks import task


@task()
def rename(user_id: int, name: str) -> str:
    get_user_model().objects.filter(pk=user_id).update(first_name=name)
    return name


FLAKY_CALLS: list[int] = []


@task()
def flaky_rename(user_id: int, name: str) -> str:
    """Meets a locked database on its first run (as a job writing during a long import)."""
    from django.db import OperationalError

    FLAKY_CALLS.append(user_id)
    if len(FLAKY_CALLS) == 1:
        raise OperationalError("database is locked")
    return rename.call(user_id, name)
