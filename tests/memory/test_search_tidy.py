"""The full-text index's upkeep (memory.search.tidy): SQLite's segments merged after turns."""

import pytest
from django.db import connection

from chat.services import conversation_create, message_create
from memory import search

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="FTS5 segments (PostgreSQL's GIN has none)"
)


def _index_pages() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memory_search_data")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_merging_leaves_fewer_segments_and_the_same_hits(alice):
    """Each committed message adds a segment; tidying merges them, and what a search finds
    (and FTS5's own integrity check) is unchanged."""
    with connection.cursor() as cursor:  # one segment to start from, whatever ran before
        cursor.execute("INSERT INTO memory_search(memory_search) VALUES('optimize')")
        cursor.execute("SELECT count(*) FROM memory_search_data")
        merged_pages = cursor.fetchone()[0]  # rows other tests left make that segment larger
    conversation = conversation_create(user=alice)
    message_create(conversation=conversation, role="user", content="the heron by the lock")
    # FTS5 merges by itself when a level fills up (its crisis merge), so a fixed count of
    # writes may end merged: write until several segments stand, as between two tidies, and
    # measure right then.
    for n in range(40):
        message_create(conversation=conversation, role="user", content=f"note {n} about rowing")
        before_pages = _index_pages()
        if before_pages >= merged_pages + 5:
            break
    assert before_pages >= merged_pages + 5, "the writes never left several segments"
    before = [(h.id, round(h.score, 6)) for h in search.search(user=alice, query="heron rowing")]

    for _ in range(10):
        search.tidy()

    assert _index_pages() < before_pages
    assert [(h.id, round(h.score, 6)) for h in search.search(user=alice, query="heron rowing")] == (
        before
    )
    with connection.cursor() as cursor:  # raises on a damaged index
        cursor.execute("INSERT INTO memory_search(memory_search) VALUES('integrity-check')")
