"""The signed-in user's own memories, for the Memory page: every kind in one list, newest
first, searched and filtered, a page at a time; the suggestions waiting for them; and lookups
that answer 404 for anything that is not theirs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, Literal, TypeVar, overload

from django.core.paginator import Page, Paginator
from django.db.models import IntegerField, Prefetch, QuerySet, Value
from django.http import Http404
from django.shortcuts import get_object_or_404

from audit import channel_suffix
from chat.models import Message
from memory.models import (
    ActionItem,
    Decision,
    Fact,
    KeptMemory,
    MemoryEvent,
    MemoryState,
    Summary,
)
from memory.search.schema import INDEXED_STATUSES
from memory.search.staff import search_filter, summary_search_filter

PER_PAGE = 25
THROUGH = channel_suffix("")  # " through ": how a history reason names its channel
SUGGESTIONS_SHOWN = 20


@dataclass(frozen=True)
class Kind:
    """A kind of memory the user edits on the page (``memory.search.staff.Kind``)."""

    slug: str
    code: int  # in the page's union query
    label: str
    plural: str
    model: type[KeptMemory]
    text_field: str
    indexed_statuses: tuple[str, ...]
    listed_statuses: tuple[str, ...]  # what the page lists (not superseded facts)


FACT = Kind(
    "fact", 1, "Fact", "Facts", Fact, "text", INDEXED_STATUSES["fact"], (Fact.Status.ACTIVE,)
)
DECISION = Kind(
    "decision", 2, "Decision", "Decisions", Decision, "what",
    INDEXED_STATUSES["decision"], tuple(Decision.Status.values),
)  # fmt: skip
ACTION_ITEM = Kind(
    "action_item", 3, "Action item", "Action items", ActionItem, "what",
    INDEXED_STATUSES["action_item"], tuple(ActionItem.Status.values),
)  # fmt: skip
KINDS = {kind.slug: kind for kind in (FACT, DECISION, ACTION_ITEM)}
SUMMARY_SLUG, SUMMARY_CODE = "summary", 4
KIND_FILTERS = [("", "Everything"), *((k.slug, k.plural) for k in KINDS.values())]
KIND_FILTERS.append((SUMMARY_SLUG, "Conversation summaries"))


def kind_get(slug: str) -> Kind:
    if slug not in KINDS:
        raise Http404("No such kind of memory.")
    return KINDS[slug]


@dataclass(frozen=True)
class MemoryFilters:
    query: str = ""
    kind: str = ""  # a Kind's slug, "summary", or "" for everything
    category: str = ""  # facts only: the other kinds drop out when it is set


# What a row shows: a kind of memory, or a summary; covariant, so that a list of one kind's
# rows is a list of rows.
_Shown = TypeVar("_Shown", bound=KeptMemory | Summary, covariant=True)


@dataclass
class MemoryRow(Generic[_Shown]):
    """One line of the page: a fact, decision, action item or summary."""

    kind: str
    label: str
    obj: _Shown
    text: str
    created_at: datetime
    updated_at: datetime
    source: Message | None  # the message it was learned from (the earliest)
    conversation_id: int | None
    # The channel ("MCP") its history says it was added through, and its latest change, if
    # that was the last change made (``audit.through``); "" for the web pages and the chat.
    added_via: str = ""
    changed_via: str = ""

    @property
    def editable(self) -> bool:
        return self.kind != SUMMARY_SLUG


def memory_get_owned(*, kind: str, memory_id: int, user):
    """The user's memory of ``kind``, or 404: another user's id is indistinguishable from none."""
    return get_object_or_404(kind_get(kind).model, pk=memory_id, user=user)


def projects_of(*, user) -> list:
    """The user's projects a memory may be moved to (the Memory page's select)."""
    from projects.models import Project

    return list(Project.objects.filter(user=user).only("id", "name", "archived_at"))


def project_get_owned(*, project_id: str, user):
    """The user's project named by a form's ``project`` value, None for "" (everywhere), or
    404: another user's id is indistinguishable from none."""
    from projects.models import Project

    if project_id == "":
        return None
    if not project_id.isdigit() or len(project_id) > 18:
        raise Http404("No such project.")
    return get_object_or_404(Project, pk=int(project_id), user=user)


def event_get_owned(*, event_id: int, user) -> MemoryEvent:
    return get_object_or_404(MemoryEvent, pk=event_id, user=user)


def event_find_owned(*, event_id: int, user) -> MemoryEvent | None:
    return MemoryEvent.objects.filter(pk=event_id, user=user).first()


def _keys(kind: Kind, user, filters: MemoryFilters, state: str | None) -> QuerySet:
    qs = kind.model.objects.filter(user=user)
    # The list leaves suggestions to their own section.
    qs = qs.exclude(state=MemoryState.SUGGESTED) if state is None else qs.filter(state=state)
    if kind is FACT:
        qs = qs.filter(status=Fact.Status.ACTIVE)
        if filters.category:
            # kind is FACT, which mypy cannot narrow the union of kinds' querysets by
            qs = qs.filter(category=filters.category)  # type: ignore[misc]
    if filters.query:
        qs = qs.filter(
            search_filter(kind, filters.query, statuses=list(kind.listed_statuses), user_id=user.pk)
        )
    code = Value(kind.code, output_field=IntegerField())
    return qs.annotate(code=code).values_list("code", "pk", "created_at").order_by()


def _summary_keys(user, filters: MemoryFilters) -> QuerySet:
    qs = Summary.objects.filter(
        conversation__user=user, conversation__temporary=False, is_current=True
    )
    if filters.query:
        qs = qs.filter(summary_search_filter(filters.query, user_id=user.pk))
    code = Value(SUMMARY_CODE, output_field=IntegerField())
    return qs.annotate(code=code).values_list("code", "pk", "created_at").order_by()


def _union(parts: list[QuerySet]) -> QuerySet:
    if len(parts) == 1:
        return parts[0].order_by("-created_at", "-pk")
    return parts[0].union(*parts[1:], all=True).order_by("-created_at", "-pk")


def memory_page_for_user(*, user, filters: MemoryFilters, page: int | str | None) -> Page:
    """One page of the user's memories (suggestions aside), newest first: a count and a page
    of (kind, id) keys in one UNION over the kinds, each filtered on its (user, state) index,
    then the page's rows by id."""
    kinds = [KINDS[filters.kind]] if filters.kind in KINDS else list(KINDS.values())
    if filters.kind == SUMMARY_SLUG:
        kinds = []
    if filters.category:
        kinds = [k for k in kinds if k is FACT]
    parts = [_keys(kind, user, filters, None) for kind in kinds]
    if filters.kind in ("", SUMMARY_SLUG) and not filters.category:
        parts.append(_summary_keys(user, filters))
    if not parts:
        return Paginator([], PER_PAGE).get_page(1)
    result = Paginator(_union(parts), PER_PAGE).get_page(page)
    result.object_list = rows_for(list(result.object_list))
    return result


def suggestions_for_user(
    *, user, limit: int = SUGGESTIONS_SHOWN
) -> tuple[list[MemoryRow[KeptMemory | Summary]], int]:
    """The suggestions waiting for the user (memory mode "ask first"), newest first, and how
    many there are."""
    parts = [_keys(kind, user, MemoryFilters(), MemoryState.SUGGESTED) for kind in KINDS.values()]
    keys = _union(parts)
    count = keys.count()
    return rows_for(list(keys[:limit])) if count else [], count


_CODES = {kind.code: kind for kind in KINDS.values()}


def _sources() -> Prefetch[Literal["source_messages"], QuerySet[Message], Literal["sources"]]:
    messages = Message.objects.only("id", "conversation_id", "created_at").order_by("id")
    return Prefetch("source_messages", queryset=messages, to_attr="sources")


def rows_for(
    keys: Sequence[tuple[int, int, datetime | None]],
) -> list[MemoryRow[KeptMemory | Summary]]:
    """The rows of (kind code, id, created) keys, in their order: a query per kind (the
    created time is not read: a caller without it passes None)."""
    found: dict[tuple[int, int], MemoryRow[KeptMemory | Summary]] = {}
    for code, kind in _CODES.items():
        ids = [pk for c, pk, _ in keys if c == code]
        if ids:
            for row in rows_of(kind, kind.model.objects.filter(pk__in=ids)):
                found[code, row.obj.pk] = row
    summary_ids = [pk for c, pk, _ in keys if c == SUMMARY_CODE]
    for summary in Summary.objects.filter(pk__in=summary_ids).select_related("conversation"):
        found[SUMMARY_CODE, summary.pk] = MemoryRow(
            kind=SUMMARY_SLUG,
            label="Summary",
            obj=summary,
            text=summary.text,
            created_at=summary.created_at,
            updated_at=summary.created_at,
            source=None,
            conversation_id=summary.conversation_id,
        )
    return [found[code, pk] for code, pk, _ in keys if (code, pk) in found]


# Rows typed by kind: a queryset of facts gives rows of facts, and so on; rows_for's queryset
# of any one kind (a union of the three) is taken member by member, which a TypeVar's
# constraints would refuse.
@overload
def rows_of(kind: Kind, memories: QuerySet[Fact]) -> list[MemoryRow[Fact]]: ...
@overload
def rows_of(kind: Kind, memories: QuerySet[Decision]) -> list[MemoryRow[Decision]]: ...
@overload
def rows_of(kind: Kind, memories: QuerySet[ActionItem]) -> list[MemoryRow[ActionItem]]: ...
def rows_of(
    kind: Kind, memories: QuerySet[Fact] | QuerySet[Decision] | QuerySet[ActionItem]
) -> Sequence[MemoryRow[KeptMemory]]:
    """The rows of ``memories`` (of ``kind``), in the queryset's order: one read of them with
    their conversation and project, one of their sources, one of their channels."""
    objs = memories.select_related("conversation", "project").prefetch_related(_sources())
    rows: list[MemoryRow[KeptMemory]] = [
        MemoryRow(
            kind=kind.slug,
            label=kind.label,
            obj=obj,
            text=getattr(obj, kind.text_field),
            created_at=obj.created_at,
            updated_at=obj.updated_at,
            source=obj.sources[0] if obj.sources else None,
            conversation_id=obj.conversation_id,
        )
        for obj in objs
    ]
    _mark_channels(kind, rows)
    return rows


def _mark_channels(kind: Kind, rows: Sequence[MemoryRow[KeptMemory]]) -> None:
    """Which of ``rows`` were added, or last changed, through another channel than the web
    pages (their history records' reasons end "through <channel>"): one query per kind."""
    if not rows:
        return
    by_id = {row.obj.pk: row for row in rows}
    records = (
        kind.model.history.filter(id__in=list(by_id), history_change_reason__contains=THROUGH)
        .order_by("history_date")
        .values_list("id", "history_type", "history_change_reason", "history_date")
    )
    for pk, kind_of_change, reason, when in records:
        row, channel = by_id[pk], reason.rpartition(THROUGH)[2]
        if kind_of_change == "+":
            row.added_via = channel
        elif kind_of_change == "~" and when >= row.updated_at:
            row.changed_via = channel  # the change that set updated_at, not an older one


def memory_list_for_user(
    *, user, kind: str = "", project=None, query: str = "", limit: int = PER_PAGE
) -> list[MemoryRow[KeptMemory | Summary]]:
    """The user's memories newest first, for a client of theirs (MCP's list tool): facts no
    longer current left out, suggestions in (their state says so). ``kind``: a Kind's slug
    or "" for all; ``project``: only that project's; ``query``: words, as the page searches."""
    parts = []
    for each in [KINDS[kind]] if kind in KINDS else list(KINDS.values()):
        qs = each.model.objects.filter(user=user)
        if each is FACT:
            qs = qs.filter(status=Fact.Status.ACTIVE)
        if project is not None:
            qs = qs.filter(project=project)
        if query:
            statuses = list(each.listed_statuses)
            qs = qs.filter(
                search_filter(each, query, statuses=statuses, user_id=user.pk)
                | search_filter(each, query, statuses=statuses, user_id=user.pk, suggestions=True)
            )
        code = Value(each.code, output_field=IntegerField())
        parts.append(qs.annotate(code=code).values_list("code", "pk", "created_at").order_by())
    return rows_for(list(_union(parts)[:limit]))


def memory_row_for(*, kind: str, memory) -> MemoryRow[KeptMemory | Summary]:
    """The page's row of one memory (after an edit)."""
    code = kind_get(kind).code
    return rows_for([(code, memory.pk, memory.created_at)])[0]
