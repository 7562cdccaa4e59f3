"""Where ORM work called from the event loop runs (its own module: the turn and the job
watches both use it, and the turn imports the watches)."""

from __future__ import annotations

from channels.db import database_sync_to_async


def in_db_thread(fn):
    """Run ORM work off the event loop in a pool of threads (each with its own persistent
    connection), not asgiref's single shared one, so that many chats' turns do not queue
    behind each other. Only for code that needs no thread affinity."""
    return database_sync_to_async(fn, thread_sensitive=False)
