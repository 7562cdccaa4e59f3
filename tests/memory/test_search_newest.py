"""The newest rows holding a query's common terms together (memory.search.index), the same
answer whether the user's newest rows hold enough of them or the whole index is read."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from chat.services import NewMessage, conversation_create, message_create_many
from memory.search import index

pytestmark = pytest.mark.django_db


@pytest.fixture
def window(monkeypatch):
    monkeypatch.setattr(index, "NEWEST_WINDOW", 5)
    monkeypatch.setattr(index, "RECENT_ROWS", 12)


def _history(alice, holding: set[int], total: int = 40) -> list[int]:
    """``total`` messages, oldest first; those at ``holding`` say both words. Their ids."""
    start = timezone.now() - timedelta(days=total)
    texts = [
        "the walrus and the lighthouse keeper" if i in holding else f"plain note number {i}"
        for i in range(total)
    ]
    conversation = conversation_create(user=alice)
    stored = message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user", text, created_at=start + timedelta(days=i))
            for i, text in enumerate(texts)
        ],
    )
    return [m.pk for m in stored]


def _newest(alice) -> list[int]:
    terms = ["walrus", "lighthouse"]
    found = index._newest_with_all(alice.pk, terms, index.user_stats(alice.pk, terms))
    return [row.object_id for row in index._rows(found)]


@pytest.mark.parametrize(
    ("holding", "total", "reads"),
    [
        (set(range(20, 40)), 40, ["recent"]),  # many among the newest rows
        ({2, 5, 9}, 40, ["all"]),  # too few anywhere to fill the newest rows' share
        (set(range(20)) | {30, 35}, 40, ["recent", "all"]),  # many, but two among the newest
        ({1, 4}, 10, ["recent"]),  # the user's rows are all among the newest
    ],
    ids=["dense", "sparse", "old", "few rows"],
)
def test_the_newest_rows_holding_every_common_term(alice, window, holding, total, reads):
    """``reads``: what PostgreSQL looks through, the user's newest rows or the text index's
    whole answer (SQLite's index walks its row ids from the newest: one statement)."""
    ids = _history(alice, holding, total)
    expected = [ids[i] for i in sorted(holding, reverse=True)][: index.NEWEST_WINDOW]
    with CaptureQueriesContext(connection) as queries:
        assert sorted(_newest(alice), reverse=True) == expected
    if connection.vendor == "postgresql":
        newest = [q["sql"] for q in queries.captured_queries if "created_at DESC LIMIT" in q["sql"]]
        assert ["recent" if ") recent" in sql else "all" for sql in newest] == reads
