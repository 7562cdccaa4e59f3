"""The chat layer's publisher for what other apps tell the user's open tabs: they send a
signal of their own (memory: ``memory.signals.memory_event_changed``, after commit) and this
sends the frames, so that they never import chat's fan-out or frames."""

from __future__ import annotations

import logging

from chat import fanout, protocol
from memory.selectors import notice_get

logger = logging.getLogger(__name__)


def publish_memory_event(sender, *, event_id: int, **kwargs) -> None:
    """A notice, as it now is, to every tab on its conversation and, as a note, to the
    user's tabs elsewhere. From a database thread or a job worker: never on the event loop."""
    try:
        notice = notice_get(event_id=event_id)
        if notice is not None:
            event = notice.event
            fanout.send_to_conversation(event.conversation_id, protocol.memory_event(notice))
            fanout.send_to_users_other_tabs(
                event.user_id, event.conversation_id, protocol.memory_elsewhere(notice)
            )
    except Exception:  # the notice is stored: a reload shows it
        logger.warning("could not tell the tabs of memory event %s", event_id, exc_info=True)
