"""An erased account's last rows in the index.

The triggers take each deleted row out of ``memory_search`` and out of its owner's counts,
but leave the owner's (now empty) row in ``memory_search_stats``; an account deletion removes
it, with anything of the user the index might still hold."""

from __future__ import annotations

from django.db import connection


def user_index_erase(*, user_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM memory_search WHERE user_id = %s", [user_id])
        cursor.execute("DELETE FROM memory_search_stats WHERE user_id = %s", [user_id])
