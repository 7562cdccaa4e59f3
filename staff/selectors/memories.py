"""Facts, decisions and action items for the staff lists: filtered, searched, sorted, paged."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.contrib.auth import get_user_model
from django.core.paginator import Page, Paginator
from django.db.models import F, QuerySet
from django.db.models.expressions import OrderBy
from django.shortcuts import get_object_or_404
from django.utils import timezone

from staff.kinds import Kind
from staff.search import search_filter

PER_PAGE = 50


@dataclass(frozen=True)
class MemoryFilters:
    query: str = ""
    username: str = ""
    conversation_id: int | None = None
    project: str = ""  # a project's id, "none" (everywhere), or "" (any)
    category: str = ""  # facts only
    status: str = ""
    state: str = ""  # learned, suggested, kept, edited (by the user)
    pinned: bool | None = None  # facts only
    updated_from: date | None = None
    updated_to: date | None = None
    sort: str = "-updated_at"


def _day_start(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def memory_list(*, kind: Kind, filters: MemoryFilters) -> QuerySet:
    """``kind``'s rows matching ``filters``, sorted, with owner and conversation joined in."""
    model = kind.model
    qs = model.objects.all()
    user_id = None
    if filters.username:
        user_id = (
            get_user_model()
            .objects.filter(username=filters.username)
            .values_list("pk", flat=True)
            .first()
        )
        if user_id is None:
            return model.objects.none()
        qs = qs.filter(user_id=user_id)
    if filters.conversation_id is not None:
        qs = qs.filter(conversation_id=filters.conversation_id)
    if filters.project == "none":
        qs = qs.filter(project__isnull=True)
    elif filters.project:
        qs = qs.filter(project_id=int(filters.project))
    if filters.category and kind.slug == "fact":
        # A fact's queryset: mypy cannot narrow the union of the kinds' querysets by slug.
        qs = qs.filter(category=filters.category)  # type: ignore[misc]
    if filters.status:
        qs = qs.filter(status=filters.status)
    if filters.state:
        qs = qs.filter(state=filters.state)
    if filters.pinned is not None and kind.slug == "fact":
        qs = qs.filter(pinned=filters.pinned)  # type: ignore[misc]  # as above
    if filters.updated_from:
        qs = qs.filter(updated_at__gte=_day_start(filters.updated_from))
    if filters.updated_to:
        qs = qs.filter(updated_at__lt=_day_start(filters.updated_to) + timedelta(days=1))
    if filters.query:
        qs = qs.filter(
            search_filter(
                kind,
                filters.query,
                statuses=[filters.status] if filters.status else None,
                user_id=user_id,
                suggestions=filters.state == "suggested",
            )
        )
    sort = filters.sort if filters.sort in kind.sorts else "-updated_at"
    tiebreak = "-id" if sort.startswith("-") else "id"
    ordering: list[str | OrderBy]
    if sort == "due_date":
        ordering = [F("due_date").asc(nulls_last=True), "id"]
    else:
        ordering = [sort, tiebreak]
    return qs.select_related("user", "conversation", "project").order_by(*ordering)


def memory_page(*, kind: Kind, filters: MemoryFilters, page: int | str | None) -> Page:
    """One page, in three queries: the count, the page's ids, their rows.

    The ids come from a narrow query an index can answer alone, however deep the page (an
    OFFSET over full rows joined to their owners reads every row it skips); the rows with
    their owner and conversation are then fetched by id. (One ``COUNT(*) OVER ()`` query
    instead of count + ids was measured slower: it sorts every match before the LIMIT.)
    """
    queryset = memory_list(kind=kind, filters=filters)
    result = Paginator(queryset.values_list("pk", flat=True), PER_PAGE).get_page(page)
    ids = list(result.object_list)
    related = kind.model.objects.select_related("user", "conversation", "project")
    rows = {row.pk: row for row in related.filter(pk__in=ids)} if ids else {}
    result.object_list = [rows[pk] for pk in ids if pk in rows]
    return result


def memory_get(*, kind: Kind, memory_id: int):
    return get_object_or_404(
        kind.model.objects.select_related("user", "conversation"), pk=memory_id
    )
