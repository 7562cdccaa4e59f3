"""The context report: the contract for "what the model saw" on one turn.

``memory.context.build`` writes one per turn with the helpers below; it is stored as JSON in
``chat.models.Message.context_report`` and read back by the chat and staff pages, the offline
provider and the benchmarks, always through ``report_read``.

Schema versions:

1. Reports stored before the contract had a number: the shape below minus ``schema_version``
   (and, in the oldest, minus ``preferences.skipped``). A report without the key is version 1.
2. The shape below, with ``schema_version``. The keys are the same as version 1's, so version-1
   reports render as they always did.

Bump ``SCHEMA_VERSION`` when a key is renamed, removed or changes meaning, and make
``report_read`` fill in what older reports lack.
"""

# No ``from __future__ import annotations``: TypedDict needs real annotations to tell
# NotRequired keys from required ones (Python 3.11).
import logging
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, cast

from web.shapes import ShapeError, check

if TYPE_CHECKING:
    from memory.models import Summary
    from memory.recall import Recalled

SCHEMA_VERSION = 2
UNVERSIONED = 1  # what a stored report without "schema_version" is


class Block(StrEnum):
    """The blocks of the request, in the order they are sent."""

    SYSTEM = "system"
    PREFERENCES = "preferences"
    PROJECT = "project"  # the project's instructions: stable, so before the per-turn blocks
    SUMMARY = "summary"
    HISTORY = "history"
    # The learned style (it may change after any message) and the two chosen for the message
    # (they change every turn): after the history, so that the prefix before them is cached.
    STYLE = "style"
    EXPERTISE = "expertise"  # the user's level in the message's domain(s)
    MEMORY = "memory"
    MESSAGE = "message"
    CONTINUATION = "continuation"  # a continued reply's text so far and the request for more


class BlockItem(TypedDict):
    name: str  # a Block value
    tokens: int
    detail: str


class MemoryItem(TypedDict):
    kind: str  # fact, decision, action_item, summary, message
    id: int
    text: str
    score: float
    why: str
    date: str
    source: str  # title of the conversation it came from
    message_ids: list[int]
    # A search hit's share of the message it holds, absolute (memory.search.relevance); added
    # without a version bump, absent from older reports and from pinned and resume items.
    relevance: NotRequired[float]


class LeftOutMemory(MemoryItem):
    left_out: str  # why it was not sent: "budget", or "duplicate" (another says the same)
    # A "duplicate": the text of the memory sent instead and whether it is the project's own
    # (added without a version bump: absent from older reports).
    same_as: NotRequired[str]
    same_as_project: NotRequired[bool]


class MessageItem(TypedDict):
    id: int
    role: str
    tokens: int


class PreferencesItem(TypedDict):
    text: str
    sources: list[dict[str, Any]]
    skipped: list[dict[str, Any]]


class ExpertiseItem(TypedDict):
    """The user's level in the message's domain(s) (profiles.expertise): the text sent, one
    source per domain named (domain, label, level, origin, line; learned: score, evidence),
    and the message's domains that said nothing, with why."""

    text: str
    sources: list[dict[str, Any]]
    skipped: list[dict[str, Any]]


class ProjectItem(TypedDict):
    """The project a conversation belongs to and the instructions sent, as the user wrote them."""

    id: int
    name: str
    instructions: str


class ScopeItem(TypedDict):
    """Where the conversation was when the reply was written: its project (``id`` None and
    ``name`` "": outside any), so a report read after a move still says whose instructions
    and memories the model saw then."""

    id: int | None
    name: str


class SummaryItem(TypedDict):
    """The rolling summary: ``text`` when it was sent, ``left_out`` (why) when it was not."""

    id: int
    version: int
    tokens: int
    covered_through: int
    text: NotRequired[str]
    left_out: NotRequired[str]


class MessagesLeftOut(TypedDict):
    count: int  # counted up to memory.context.LEFT_OUT_COUNT_CAP
    reason: str  # "budget", "sliding window" or "" when nothing was left out
    summarised_through: NotRequired[int]


class ContextReport(TypedDict):
    schema_version: int
    model: str
    strategy: str
    budget: int
    reserve: int
    limit: int
    temporary: bool
    memory_enabled: bool
    blocks: list[BlockItem]
    preferences: PreferencesItem | None
    memories: list[MemoryItem]
    memories_left_out: list[LeftOutMemory]
    summary: SummaryItem | None
    messages: list[MessageItem]
    messages_left_out: MessagesLeftOut
    system_prompt_version: int
    total_tokens: int
    # Added without a version bump (new keys, absent from older reports): the counts are an
    # estimate (the model's tokenizer is not known), and the server-reported prompt tokens
    # per estimated token on recent replies, by which the limit was scaled (None: no usage).
    tokens_estimated: NotRequired[bool]
    token_scale: NotRequired[float | None]
    # True when memory was on and its search found nothing for the message (pinned facts and
    # a new session's resume items may still have been sent).
    nothing_relevant: NotRequired[bool]
    # The level per domain sent for this message (absent: none was, or an older report).
    expertise: NotRequired[ExpertiseItem]
    # The project's instructions sent (absent: the conversation is in no project, the project
    # has none, or an older report).
    project: NotRequired[ProjectItem]
    # The conversation's project when the reply was written (absent: an older report).
    scope: NotRequired[ScopeItem]
    # The prompt tokens the server reused from its cache for this request (OpenAI's
    # prompt_tokens_details.cached_tokens, llama.cpp's timings.cache_n), once the reply ended.
    cached_tokens: NotRequired[int]


# -- writing: memory.context builds each part with these -----------------------------------


def report_new(
    *,
    model: str,
    strategy: str,
    budget: int,
    reserve: int,
    limit: int,
    temporary: bool,
    memory_enabled: bool,
    system_prompt_version: int,
    tokens_estimated: bool = False,
    token_scale: float | None = None,
) -> ContextReport:
    """An empty report for one turn; the builder fills in the blocks and the totals."""
    return {
        "schema_version": SCHEMA_VERSION,
        "model": model,
        "strategy": strategy,
        "budget": budget,
        "reserve": reserve,
        "limit": limit,
        "temporary": temporary,
        "memory_enabled": memory_enabled,
        "blocks": [],
        "preferences": None,
        "memories": [],
        "memories_left_out": [],
        "summary": None,
        "messages": [],
        "messages_left_out": messages_left_out(count=0, reason=""),
        "system_prompt_version": system_prompt_version,
        "total_tokens": 0,
        "tokens_estimated": tokens_estimated,
        "token_scale": token_scale,
    }


def block_item(name: Block, tokens: int, detail: str) -> BlockItem:
    return {"name": name.value, "tokens": tokens, "detail": detail}  # a plain str, for JSON


def memory_item(item: "Recalled") -> MemoryItem:
    entry: MemoryItem = {
        "kind": item.kind,
        "id": item.id,
        "text": item.text,
        "score": round(item.score, 4),
        "why": item.why,
        "date": item.date,
        "source": item.source,
        "message_ids": item.message_ids,
    }
    if item.relevance is not None:
        entry["relevance"] = round(item.relevance, 3)
    return entry


def left_out_memory(item: "Recalled", reason: str) -> LeftOutMemory:
    return {**memory_item(item), "left_out": reason}


def duplicate_memory(item: "Recalled", *, of: "Recalled") -> LeftOutMemory:
    """``item`` left out as a near-duplicate of ``of``, which was sent."""
    from memory.search.scope import EVERYWHERE

    return {
        **memory_item(item),
        "left_out": "duplicate",
        "same_as": of.text[:SAME_AS_CHARS],
        "same_as_project": of.scope != EVERYWHERE,
    }


SAME_AS_CHARS = 200


def message_item(message_id: int, role: str, tokens: int) -> MessageItem:
    return {"id": message_id, "role": role, "tokens": tokens}


def preferences_item(*, text: str, sources: list, skipped: list) -> PreferencesItem:
    return {"text": text, "sources": sources, "skipped": skipped}


def expertise_item(*, text: str, sources: list, skipped: list) -> ExpertiseItem:
    return {"text": text, "sources": sources, "skipped": skipped}


def project_item(*, project_id: int, name: str, instructions: str) -> ProjectItem:
    return {"id": project_id, "name": name, "instructions": instructions}


def scope_item(*, project_id: int | None, name: str) -> ScopeItem:
    return {"id": project_id, "name": name if project_id is not None else ""}


def summary_item(summary: "Summary", tokens: int, *, left_out: str = "") -> SummaryItem:
    """The summary with its text when it was sent; with ``left_out`` (why not), without it."""
    entry: SummaryItem = {
        "id": summary.pk,
        "version": summary.version,
        "tokens": tokens,
        "covered_through": summary.covered_through,
    }
    if left_out:
        entry["left_out"] = left_out
    else:
        entry["text"] = summary.text
    return entry


def messages_left_out(
    *, count: int, reason: str, summarised_through: int | None = None
) -> MessagesLeftOut:
    entry: MessagesLeftOut = {"count": count, "reason": reason}
    if summarised_through is not None:  # only when a summary was sent
        entry["summarised_through"] = summarised_through
    return entry


# -- reading: every reader goes through report_read ----------------------------------------


def report_read(data: dict | None) -> ContextReport | None:
    """A stored (or just built) report as a ContextReport, or None when there is none or it
    is not of the shape above (an imported record, say: it is then shown as absent, never a
    page's 500). Never changes ``data``: it is usually a model field."""
    if not data or not isinstance(data, dict):
        return None
    report = data if "schema_version" in data else {**data, "schema_version": UNVERSIONED}
    try:
        report_check(report)
    except ShapeError as error:
        logging.getLogger(__name__).warning("A context report of the wrong shape: %s", error)
        return None
    return cast(ContextReport, report)  # its shape was checked just above


def report_check(report: Any, where: str = "context_report") -> None:
    """Raise ShapeError unless ``report`` is a ContextReport, as far as it goes: reports of
    older versions lack keys (their readers read each with a default), but every key present
    has its type."""
    check(report, ContextReport, where, partial=True)


def memories_sent(report: ContextReport | None) -> list[MemoryItem]:
    """The long-term memories the model saw this turn, best first."""
    return (report.get("memories") if report else None) or []


def summary_text(report: ContextReport | None) -> str | None:
    """The rolling summary's text if it was sent this turn, else None."""
    summary = report.get("summary") if report else None
    return summary.get("text") if summary else None
