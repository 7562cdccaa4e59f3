"""The three kinds of long-term memory as the staff pages see them: model, text field, the
statuses the full-text index holds, and what a list of them can be sorted and filtered by."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.http import Http404

from memory.models import ActionItem, Decision, Fact, KeptMemory
from memory.search.schema import INDEXED_STATUSES

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


@dataclass(frozen=True)
class Kind:
    slug: str  # in URLs and the search index ("fact", "decision", "action_item")
    label: str
    plural: str
    model: type[KeptMemory]
    text_field: str
    # Statuses whose rows memory_search indexes (memory.search.schema.INDEXED_STATUSES, the
    # one list the triggers are built from too); rows with other statuses are searched by
    # substring instead.
    indexed_statuses: tuple[str, ...]
    sorts: dict[str, str] = field(default_factory=dict)  # param value -> label

    @property
    def statuses(self) -> list[tuple[str, StrOrPromise]]:
        return list(self.model.Status.choices)

    @property
    def unindexed_statuses(self) -> tuple[str, ...]:
        return tuple(s for s in self.model.Status.values if s not in self.indexed_statuses)

    @property
    def history_model(self):
        return self.model.history.model

    def text_of(self, obj) -> str:
        return getattr(obj, self.text_field)


_COMMON_SORTS = {
    "-updated_at": "Recently updated",
    "updated_at": "Least recently updated",
    "-created_at": "Newest",
    "created_at": "Oldest",
}

FACT = Kind(
    slug="fact",
    label="Fact",
    plural="Facts",
    model=Fact,
    text_field="text",
    indexed_statuses=INDEXED_STATUSES["fact"],
    sorts={**_COMMON_SORTS, "-importance": "Most important"},
)
DECISION = Kind(
    slug="decision",
    label="Decision",
    plural="Decisions",
    model=Decision,
    text_field="what",
    indexed_statuses=INDEXED_STATUSES["decision"],
    sorts=dict(_COMMON_SORTS),
)
ACTION_ITEM = Kind(
    slug="action_item",
    label="Action item",
    plural="Action items",
    model=ActionItem,
    text_field="what",
    indexed_statuses=INDEXED_STATUSES["action_item"],
    sorts={**_COMMON_SORTS, "due_date": "Due soonest"},
)

KINDS = {kind.slug: kind for kind in (FACT, DECISION, ACTION_ITEM)}


def kind_get(slug: str) -> Kind:
    try:
        return KINDS[slug]
    except KeyError:
        raise Http404(f"No memory kind {slug!r}.") from None
