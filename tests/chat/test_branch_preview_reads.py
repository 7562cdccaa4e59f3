"""A link into a hidden branch previews it (``chat.branches.branch_preview_holding``) by
reading only the rows a switch can change, from the earliest question of the branches on, and
the page's share of the shared messages before them: not every row of a long conversation.
What it shows is what keeping the branch then shows. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from chat import branches
from chat.models import Message
from chat.selectors import HISTORY_PAGE_SIZE, message_page
from chat.services import NewMessage, message_create_many
from tests.chat.test_branch_links import nested_branches
from tests.chat.test_branches import edit, exchange

pytestmark = pytest.mark.django_db

SHARED = 150  # exchanges before the branches: 300 rows a preview has no need to read


def shared_history(conversation, exchanges: int = SHARED) -> None:
    message_create_many(
        conversation=conversation,
        messages=[
            NewMessage(role, f"{role} {i}")
            for i in range(exchanges)
            for role in ("user", "assistant")
        ],
    )


def rows_read(queries) -> int:
    """How many rows the captured statements returned, run again as they were."""
    total = 0
    with connection.cursor() as cursor:
        for query in queries:
            cursor.execute(query["sql"])
            total += len(cursor.fetchall())
    return total


def shown_ids(conversation) -> list[int]:
    return list(
        Message.objects.filter(conversation=conversation, hidden_by__isnull=True)
        .order_by("created_at", "id")
        .values_list("pk", flat=True)
    )


def preview_then_keep(conversation, message: Message):
    """The preview's page, and the conversation's shown messages once the branch is kept."""
    with CaptureQueriesContext(connection) as queries:
        preview = branches.branch_preview_holding(conversation=conversation, message_id=message.pk)
    assert preview is not None
    rows, more = message_page(conversation=conversation, preview=preview)
    with transaction.atomic():
        branches.branch_show_holding(conversation=conversation, message_id=message.pk)
    return preview, [m.pk for m in rows], more, shown_ids(conversation), queries


def expect_the_kept_page(preview, page, more, kept) -> None:
    assert page == kept[-len(page) :]  # the page's messages are those kept, in order
    assert preview.question_id in page
    assert more == (len(kept) > len(page))


@pytest.mark.parametrize("shared", [0, 3, HISTORY_PAGE_SIZE, SHARED])
def test_a_preview_after_a_shared_history_shows_what_keeping_shows(conversation, shared):
    shared_history(conversation, shared)
    lisbon, lovely = exchange(conversation, "Plan a trip to Lisbon", "Lisbon in spring is lovely.")
    exchange(conversation, "What about trams there?", "Tram 28 crosses the old town.")
    edit(conversation, lisbon, "Plan a trip to Porto", "Porto has port wine.")

    preview, page, more, kept, queries = preview_then_keep(conversation, lovely)

    expect_the_kept_page(preview, page, more, kept)
    assert page[-4:] == kept[-4:] and lovely.pk in page
    assert more == (2 * shared + 4 > HISTORY_PAGE_SIZE)
    # The rows read: the branches' (2 questions, 3 replies, 1 follow-up) and at most a page
    # and one of the shared ones, however long the history; the question and its group twice.
    assert rows_read(queries) <= 6 + min(2 * shared, HISTORY_PAGE_SIZE + 1) + 4
    assert len(queries) <= 4


def test_a_nested_branch_after_a_long_history_shows_what_keeping_shows(conversation):
    shared_history(conversation)
    made = nested_branches(conversation)

    preview, page, more, kept, queries = preview_then_keep(conversation, made["tram_reply"])

    expect_the_kept_page(preview, page, more, kept)
    assert more  # the shared history is earlier than the page
    assert rows_read(queries) < SHARED  # not the history's 300 rows
    assert len(queries) <= 6
