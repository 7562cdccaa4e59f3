"""The work after a reply, once it is stored: off the replies' path (the users have them)."""

from __future__ import annotations

import logging

from django.db import DatabaseError

from chat import services, titles
from chat.job_watch import Watch
from chat.publisher import summary_run_watch
from chat.selectors import gaps_after_replies
from memory import search
from memory.recall import memory_enabled_many
from memory.services import conversations_after_turn, memories_from_turn
from profiles.selectors import profiles_get_many
from profiles.services import profiles_observe_messages

logger = logging.getLogger(__name__)


def after_turns(items) -> list[Watch]:
    """Once replies are stored: mark their conversations active (the sidebar's order), learn
    each user's style from their new message, remember its clear personal statements (the
    light extractor), and start background memory work (summaries, extraction) where it is
    due. Off the replies' path: the users already have them. ``items``: (conversation, user
    message or None) pairs, the replies that ended together: their conversations are marked in
    one statement, the memory switch is read once for all of them, the summary checks are made
    in three queries for all of them. The jobs started whose frames the event loop must bring
    to the tabs itself (titles, summary runs' notices: ``chat.job_watch``)."""
    ids = [c.pk for c, _ in items]
    try:
        services.conversations_touch(conversation_ids=ids)
    except Exception:
        logger.exception("could not mark conversations %s active", ids)
    try:
        search.tidy()  # the turns' new rows added index segments: merge some
    except DatabaseError:
        logger.warning("could not merge the search index's segments", exc_info=True)
    try:
        # One read of the users' profiles: the memory switch and the style learned from.
        profiles = profiles_get_many([c.user for c, _ in items])
        enabled = memory_enabled_many([c for c, _ in items], profiles=profiles)
        learned = [(c, m) for c, m in items if m is not None and not c.temporary]
        gaps = gaps_after_replies([m for _, m in learned])  # the pace: the exchange's rhythm
        profiles_observe_messages(
            observations=[(c.user, m.content, gaps.get(m.pk)) for c, m in learned],
            profiles=profiles,
        )
    except Exception:
        logger.exception("after-turn memory work failed for conversations %s", ids)
        return []
    watches: list[Watch] = []
    for conversation, user_message in items:
        if user_message is None:
            continue
        try:
            job = titles.title_after_first_exchange(conversation, user_message)
            if job:
                watches.append(job)
        except Exception:
            logger.exception("could not title conversation %s", conversation.pk)
        try:
            if enabled.get(conversation.pk):
                memories_from_turn(conversation=conversation, message=user_message)
        except Exception:
            logger.exception("after-turn memory work failed for conversation %s", conversation.pk)
    try:
        runs = conversations_after_turn(conversations=[c for c, _ in items], enabled=enabled)
        watches += [job for run in runs.values() if (job := summary_run_watch(run))]
    except Exception:
        logger.exception("after-turn memory work failed for conversations %s", ids)
    return watches
