"""Reads of long-term memory."""

from __future__ import annotations

import logging
from typing import NamedTuple

from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Max

from chat.models import Conversation, Message
from memory.models import Summary, SummaryRun, SystemPrompt
from memory.prompts import DEFAULT_SYSTEM_PROMPT
from web.compiled import CompiledRead

SYSTEM_PROMPT_CACHE_KEY = "memory:system-prompt:current"
# Saving or deleting a SystemPrompt clears the cached one (``memory.apps``); the timeout
# bounds how long a change made outside the ORM (raw SQL, another process on a per-process
# cache) goes unseen.
SYSTEM_PROMPT_CACHE_SECONDS = 60

logger = logging.getLogger(__name__)


def _cache_call(method: str, *args):
    """The shared cache (Redis when scaled out) is an optimisation here: while it is away a
    turn reads the prompt from the database instead of failing."""
    try:
        return getattr(cache, method)(*args)
    except Exception:
        logger.warning("cache unavailable for the system prompt", exc_info=True)
        return None


def system_prompt_current() -> SystemPrompt:
    """The newest system prompt version (version 1, the default text, when there is none).
    Read on every turn, so it is cached: (id, version, text) until a prompt changes."""
    cached = _cache_call("get", SYSTEM_PROMPT_CACHE_KEY)
    if cached is not None:
        pk, version, text = cached
        return SystemPrompt(pk=pk, version=version, text=text)
    prompt = SystemPrompt.objects.order_by("-version").first()
    if prompt is None:
        prompt, _ = SystemPrompt.objects.get_or_create(
            version=1, defaults={"text": DEFAULT_SYSTEM_PROMPT}
        )
    _cache_call(
        "set",
        SYSTEM_PROMPT_CACHE_KEY,
        (prompt.pk, prompt.version, prompt.text),
        SYSTEM_PROMPT_CACHE_SECONDS,
    )
    return prompt


def _prompt_drop() -> None:
    _cache_call("delete", SYSTEM_PROMPT_CACHE_KEY)


def system_prompt_forget() -> None:
    """Drop the cached current prompt (a prompt was saved or deleted), now and again once
    the transaction commits, so no turn caches the old text in between."""
    _prompt_drop()
    transaction.on_commit(_prompt_drop)


def forgotten_through(*, conversation_ids) -> dict[int, int]:
    """Per conversation, the newest message id the user had forgotten (the blank versions
    memory.services.forget leaves): messages up to it are recalled no more."""
    return dict(
        Summary.objects.filter(conversation_id__in=set(conversation_ids), model=Summary.FORGOTTEN)
        .values("conversation_id")
        .annotate(through=Max("covered_through"))
        .values_list("conversation_id", "through")
        .order_by()
    )


# Read on every turn of a summarised conversation: compiled once (web.compiled). One
# version is current; the default ordering would join the conversation.
_SUMMARY_CURRENT = CompiledRead(
    lambda conversation_id: (
        Summary.objects.filter(conversation_id=conversation_id, is_current=True)
        .only("id", "conversation_id", "version", "text", "covered_through")
        .order_by("pk")[:1]
    ),
    int,
)


def summary_current(conversation) -> Summary | None:
    """The current summary, with the fields a context build reads (not its extracted lists)."""
    return _SUMMARY_CURRENT.first(conversation.pk)


class ProjectInstructions(NamedTuple):
    id: int
    name: str
    instructions: str


def project_instructions(conversation) -> ProjectInstructions | None:
    """The project ``conversation`` is in, with its instructions ("" when it has none), read
    fresh on every turn of a project's conversation (the user may have edited them, or moved
    the conversation, since the tab opened); None for a conversation in no project (no
    statement). Read through the conversation: memory imports nothing of projects."""
    if conversation.project_id is None:
        return None
    with connection.cursor() as cursor:
        cursor.execute(_PROJECT_OF, [conversation.pk])
        row = cursor.fetchone()
    return None if row is None else ProjectInstructions(*row)


# Every turn of a project's conversation reads it: a plain statement (the ORM's compiling of
# this join cost more than its running). The models' own tables, no input in the text.
_PROJECT_OF = (
    "SELECT p.id, p.name, p.instructions "  # noqa: S608
    f"FROM {Conversation._meta.db_table} c "
    f"JOIN {Conversation._meta.get_field('project').related_model._meta.db_table} p "
    "ON p.id = c.project_id WHERE c.id = %s"
)


ACTIVE_RUN = [SummaryRun.Status.QUEUED, SummaryRun.Status.RUNNING]


def summary_run_active(*, conversation) -> SummaryRun | None:
    """The conversation's queued or running summary run, if any (the newest, should there be
    more: a new run is only started when none is active)."""
    return (
        SummaryRun.objects.filter(conversation=conversation, status__in=ACTIVE_RUN)
        .order_by("-created_at")
        .first()
    )


def summary_run_ended(*, run_id: int) -> bool | None:
    """Whether the run is done or failed (no retry left); None once it is gone (its
    conversation deleted)."""
    status = SummaryRun.objects.filter(pk=run_id).values_list("status", flat=True).first()
    return None if status is None else status not in ACTIVE_RUN


# Read after every batch of turns: compiled once per number of conversations (web.compiled).
_RUNS_ACTIVE = CompiledRead(
    lambda conversation_ids: (
        SummaryRun.objects.filter(conversation_id__in=conversation_ids, status__in=ACTIVE_RUN)
        .only("id", "conversation_id")
        .order_by()
    ),
    list,
)


def summary_runs_active_for(*, conversations) -> set[int]:
    """Of these conversations, the ids of those with an active run (summary_run_active for
    many, in one query)."""
    ids = sorted({c.pk for c in conversations if c.pk is not None})
    return {run.conversation_id for run in _RUNS_ACTIVE.read(ids)} if ids else set()


def unsummarised_tails(*, conversation_ids: list[int], statuses) -> dict[int, tuple[int, int]]:
    """(messages, tokens) of each conversation's tail after its current summary, counting the
    messages of ``statuses``; a conversation with no such message is left out. Read after every
    batch of turns: one plain statement (building it with the ORM, a subquery on the summary's
    bound, cost 780 µs of CPU in process, the statement 20 µs)."""
    if not conversation_ids:
        return {}
    statuses = list(statuses)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.conversation_id, count(*), coalesce(sum(m.token_count), 0) "  # noqa: S608 (own tables)
            f"FROM {Message._meta.db_table} m "
            f"WHERE m.conversation_id IN ({', '.join(['%s'] * len(conversation_ids))}) "
            f"AND m.status IN ({', '.join(['%s'] * len(statuses))}) "
            "AND m.hidden_by_id IS NULL "  # the branch shown, as the summary folds it
            f"AND m.id > coalesce((SELECT s.covered_through FROM {Summary._meta.db_table} s "
            "WHERE s.conversation_id = m.conversation_id AND s.is_current = %s), 0) "
            "GROUP BY m.conversation_id",
            [*conversation_ids, *statuses, True],
        )
        return {pk: (int(n), int(tokens)) for pk, n, tokens in cursor.fetchall()}


# The user's own memories (the Memory page) and the notices under replies.
from memory.selectors.notices import (  # noqa: E402
    Notice,
    NoticeItem,
    notice_get,
    notice_ids_since,
    notices_for_messages,
)
from memory.selectors.owned import (  # noqa: E402
    KINDS,
    MemoryFilters,
    MemoryRow,
    event_find_owned,
    event_get_owned,
    kind_get,
    memory_get_owned,
    memory_page_for_user,
    project_get_owned,
    projects_of,
    suggestions_for_user,
)

__all__ = [
    "ACTIVE_RUN",
    "KINDS",
    "MemoryFilters",
    "MemoryRow",
    "Notice",
    "NoticeItem",
    "event_find_owned",
    "event_get_owned",
    "kind_get",
    "memory_get_owned",
    "memory_page_for_user",
    "notice_get",
    "notice_ids_since",
    "notices_for_messages",
    "project_get_owned",
    "projects_of",
    "suggestions_for_user",
    "summary_current",
    "summary_run_active",
    "summary_run_ended",
    "summary_runs_active_for",
    "system_prompt_current",
    "unsummarised_tails",
]
