"""A title the job worker made, brought to this process's tabs when the channel layer cannot
carry the job's own ``title`` frame.

With Redis the worker's frame reaches every server process. The in-memory layer (``make run``
on one machine) lives in the server process alone, and the worker is a process of its own: its
frame reaches nobody. So here the server process that enqueued the job waits for it, reading
the job's state every POLL seconds for at most WAIT, and once it has finished sends the title
it stored to the conversation's tabs, as the worker would have. One small read a second per
title being made, and only for a conversation's first exchange.
"""

from __future__ import annotations

import asyncio
import logging

from channels.db import database_sync_to_async
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django_tasks.exceptions import TaskResultDoesNotExist

from chat import protocol
from chat.models import Conversation

logger = logging.getLogger(__name__)

POLL = 1.0  # seconds between two reads of the job's state
WAIT = 300.0  # seconds: a job queued behind others and a slow model, then the stand-in stays

_watches: set[asyncio.Task] = set()  # held here: the loop keeps only weak references


def _in_db_thread(fn):
    return database_sync_to_async(fn, thread_sensitive=False)  # as chat.turn.gate.in_db_thread


def frames_cannot_cross() -> bool:
    """Whether a frame sent by another process (the job worker) misses this one's tabs."""
    return isinstance(get_channel_layer(), InMemoryChannelLayer)


def watch(conversation_id: int, result_id: str) -> None:
    """On the event loop: tell the conversation's tabs the title job ``result_id`` makes."""
    task = asyncio.get_running_loop().create_task(
        _watch(conversation_id, result_id), name=f"title-watch-{conversation_id}"
    )
    _watches.add(task)
    task.add_done_callback(_watches.discard)


async def _watch(conversation_id: int, result_id: str) -> None:
    from chat.tasks import (
        title_conversation,
    )  # the job's module imports the titles, which import us

    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while True:
        await asyncio.sleep(POLL)
        try:
            result = await _in_db_thread(title_conversation.get_result)(result_id)
        except TaskResultDoesNotExist:
            return  # the queue was cleared
        except Exception:  # a database that is away for a moment: read again
            logger.debug("title job %s: state not read", result_id, exc_info=True)
            result = None
        if result is not None and result.is_finished:
            break
        if loop.time() > deadline:
            return
    title = await _in_db_thread(_generated_title)(conversation_id)
    if title:
        frame = protocol.group_frame(protocol.title(title), sender="")
        await get_channel_layer().group_send(protocol.group_name(conversation_id), frame)


def _generated_title(conversation_id: int) -> str:
    """The title the job stored; "" when it stored none (the user's own title stays, its
    frame already sent)."""
    row = (
        Conversation.objects.filter(
            pk=conversation_id, title_source=Conversation.TitleSource.GENERATED
        )
        .values_list("title", flat=True)
        .first()
    )
    return row or ""
