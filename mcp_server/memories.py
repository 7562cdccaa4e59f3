"""What the MCP tools do, as plain database work over memory's services and selectors: each
function takes the key's user, checks what it is given (another user's memory or project is
"not found"), and returns JSON-ready dicts. Nothing here knows the protocol; the tools
(``mcp_server.tools``) run these in a database thread, marking the history."""

from __future__ import annotations

from datetime import date
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from chat.models import Message
from memory import search
from memory.models import Decision, Fact, KeptMemory, MemoryState, Summary
from memory.search.scope import EVERYWHERE
from memory.selectors.owned import (
    KINDS,
    MemoryRow,
    memory_list_for_user,
    memory_row_for,
    rows_for,
)
from memory.services import (
    action_item_set_done,
    memory_add,
    memory_delete,
    memory_discard,
    memory_edit_text,
)
from memory.services.edits import BY_USER
from profiles.models import UserProfile
from profiles.selectors import memory_mode
from projects.models import Project
from projects.selectors import project_named

LIMIT_MAX = 50


class Refused(Exception):
    """What the user's memory does not allow, in words for the client (and its user)."""


def _words(error: ValidationError) -> str:
    return " ".join(message for messages in error.message_dict.values() for message in messages)


def _limit(limit: int) -> int:
    return max(1, min(LIMIT_MAX, int(limit)))


def project_find(*, user, project: str | int | None) -> Project | None:
    """The user's project by id or name (any case); None when none is asked for. Another
    user's project is not found, like one that does not exist."""
    if project is None or str(project).strip() == "":
        return None
    found = project_named(user=user, value=project)
    if found is None:
        raise Refused(f"You have no project {str(project).strip()!r}.")
    return found


def _owned(*, user, kind: str, memory_id: int):
    if kind not in KINDS:
        raise Refused("kind is one of: fact, decision, action_item.")
    memory = KINDS[kind].model.objects.filter(pk=memory_id, user=user).first()
    if memory is None:
        raise Refused(f"You have no {KINDS[kind].label.lower()} #{memory_id}.")
    return memory


def _link(base_url: str, conversation_id: int, message_id: int | None = None) -> str:
    path = f"c/{conversation_id}/"
    if message_id is not None:
        path += f"?highlight={message_id}#m{message_id}"
    return base_url.rstrip("/") + "/" + path if base_url else "/" + path


def _source(row: MemoryRow[KeptMemory | Summary], base_url: str) -> dict[str, Any] | None:
    """Where the memory came from: the first message it was learned from, or its
    conversation; None for one the user added."""
    conversation = row.obj.conversation
    if row.source is not None:
        same = conversation is not None and row.source.conversation_id == conversation.pk
        return {
            "conversation_id": row.source.conversation_id,
            "conversation_title": conversation.display_title if conversation and same else "",
            "message_id": row.source.pk,
            "said_at": row.source.created_at.isoformat(),
            "url": _link(base_url, row.source.conversation_id, row.source.pk),
        }
    if conversation is not None:
        return {
            "conversation_id": conversation.pk,
            "conversation_title": conversation.display_title,
            "message_id": None,
            "said_at": None,
            "url": _link(base_url, conversation.pk),
        }
    return None


def _item(row: MemoryRow[KeptMemory | Summary], base_url: str) -> dict[str, Any]:
    memory = row.obj
    assert not isinstance(memory, Summary), "the list and the search give kinds of memory only"
    item: dict[str, Any] = {
        "kind": row.kind,
        "id": memory.pk,
        "text": row.text,
        "state": memory.state,
        "project": memory.project.name if memory.project is not None else None,
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
        "source": _source(row, base_url),
    }
    if isinstance(memory, Fact):  # row.kind "fact"
        item.update(category=memory.category, pinned=memory.pinned)
    elif isinstance(memory, Decision):
        item.update(status=memory.status, rationale=memory.rationale)
    else:
        due = memory.due_date.isoformat() if memory.due_date else None
        item.update(status=memory.status, owner=memory.owner, due_date=due)
    return item


def memory_list(
    *, user, kind: str = "", project=None, query: str = "", limit: int = 20, base_url: str = ""
) -> list[dict[str, Any]]:
    """The user's memories, newest first, by kind, project and words."""
    if kind and kind not in KINDS:
        raise Refused("kind is one of: fact, decision, action_item (or none for all).")
    scope = project_find(user=user, project=project)
    rows = memory_list_for_user(
        user=user, kind=kind, project=scope, query=" ".join(query.split()), limit=_limit(limit)
    )
    return [_item(row, base_url) for row in rows]


def _hit(hit: search.Hit, rows: dict, said: dict[int, Any], base_url: str) -> dict[str, Any]:
    row = rows.get((hit.kind, hit.id))
    if row is not None:
        return {**_item(row, base_url), "date": hit.date, "score": round(hit.score, 4)}
    message_id = hit.message_ids[0] if hit.message_ids else None
    source = None
    if hit.conversation_id:
        source = {
            "conversation_id": hit.conversation_id,
            "conversation_title": hit.source,
            "message_id": message_id,
            "said_at": said[message_id].isoformat() if message_id in said else None,
            "url": _link(base_url, hit.conversation_id, message_id),
        }
    return {
        "kind": hit.kind,
        "id": hit.id,
        "text": hit.text,
        "date": hit.date,
        "score": round(hit.score, 4),
        "source": source,
    }


def memory_search(
    *, user, query: str, project=None, limit: int = 10, base_url: str = ""
) -> list[dict[str, Any]]:
    """The user's memory searched as the chat recalls it (facts, decisions, action items,
    summaries and messages of their conversations), best first, each dated with its source."""
    query = " ".join(query.split())
    if not query:
        raise Refused("Say what to search for.")
    scope = project_find(user=user, project=project)
    # The index reads these scopes itself: one project's, or everything the user has.
    scopes = (
        (scope.pk,)
        if scope is not None
        else (EVERYWHERE, *Project.objects.filter(user=user).values_list("pk", flat=True))
    )
    hits = search.search(user=user, query=query, k=_limit(limit), scopes=scopes)
    # The memories' rows as the list gives them (their sources, dates), in one read per kind.
    keys = [(KINDS[hit.kind].code, hit.id, None) for hit in hits if hit.kind in KINDS]
    rows = {(row.kind, row.obj.pk): row for row in rows_for(keys)}
    first_messages = [
        hit.message_ids[0] for hit in hits if hit.message_ids and hit.kind not in KINDS
    ]
    said = dict(
        Message.objects.filter(pk__in=first_messages, conversation__user=user).values_list(
            "pk", "created_at"
        )
    )
    return [_hit(hit, rows, said, base_url) for hit in hits]


def _due(value: str | None) -> date | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value.strip())
    except ValueError:
        raise Refused("due_date is a date written YYYY-MM-DD.") from None


def memory_remember(
    *,
    user,
    kind: str,
    text: str,
    category: str = "",
    project=None,
    due_date: str | None = None,
    base_url: str = "",
) -> dict[str, Any]:
    """A new memory in the user's memory mode: kept at once ("automatic"), a suggestion
    waiting for them on the Memory page ("ask first"), or refused ("off")."""
    mode = memory_mode(user)
    if mode == UserProfile.MemoryMode.OFF:
        raise Refused(
            "Memory is off for this account (Preferences, Memory): nothing was remembered. "
            "Turn it on to let the assistant remember."
        )
    if kind not in KINDS:
        raise Refused("kind is one of: fact, decision, action_item.")
    suggest = mode == UserProfile.MemoryMode.ASK
    try:
        memory = memory_add(
            user=user,
            kind=kind,
            text=text,
            category=category or Fact.Category.OTHER,
            suggest=suggest,
            project=project_find(user=user, project=project),
            due_date=_due(due_date),
        )
    except ValidationError as error:
        raise Refused(_words(error)) from None
    row = memory_row_for(kind=kind, memory=memory)
    return {
        "outcome": "suggested" if suggest else "remembered",
        "note": (
            "Your memory mode is 'ask first': this waits as a suggestion on your Memory page "
            "until you keep it."
            if suggest
            else "Remembered."
        ),
        "memory": _item(row, base_url),
    }


def memory_change(
    *,
    user,
    kind: str,
    memory_id: int,
    text: str | None = None,
    done: bool | None = None,
    base_url: str = "",
) -> dict[str, Any]:
    """Correct a memory's text (it becomes "edited by the user"), or mark an action item
    done or open again."""
    memory = _owned(user=user, kind=kind, memory_id=memory_id)
    if text is None and done is None:
        raise Refused("Give the new text (or, for an action item, done).")
    if done is not None and kind != "action_item":
        raise Refused("Only an action item is done or open.")
    try:
        with transaction.atomic():
            if text is not None:
                memory = memory_edit_text(memory=memory, actor=user, text=text)
            if done is not None:
                memory = action_item_set_done(item=memory, actor=user, done=done)
    except ValidationError as error:
        raise Refused(_words(error)) from None
    return _item(memory_row_for(kind=kind, memory=memory), base_url)


def memory_forget(*, user, kind: str, memory_id: int, base_url: str = "") -> dict[str, Any]:
    """Delete a memory (its history keeps it for staff); a suggestion is discarded.
    (``base_url``: as the other tools', unused: nothing is left to link to.)"""
    memory = _owned(user=user, kind=kind, memory_id=memory_id)
    text = getattr(memory, KINDS[kind].text_field)
    if memory.state == MemoryState.SUGGESTED:
        memory_discard(memory=memory, actor=user)
    else:
        memory_delete(memory=memory, actor=user, reason=f"deleted {BY_USER}")
    return {"forgotten": {"kind": kind, "id": memory_id, "text": text}}
