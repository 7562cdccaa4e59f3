"""The neighbours of a message hit (memory.search.exchange.neighbours), on either database."""

from datetime import timedelta

import pytest
from django.utils import timezone

from chat.models import Message
from chat.services import conversation_create, message_create
from llm import OFFLINE_MODEL
from memory.search import exchange

pytestmark = pytest.mark.django_db


def test_two_on_each_side_nearest_first_within_the_conversation_only(alice):
    """Another conversation's messages at the same times are not neighbours; failed, empty and
    offline replies are skipped; a tie in time is ordered by id."""
    mine, other = conversation_create(user=alice), conversation_create(user=alice)
    start = timezone.now() - timedelta(days=1)
    said = []
    for n in range(7):
        at = start + timedelta(minutes=n)
        said.append(
            message_create(conversation=mine, role="user", content=f"turn {n}", created_at=at)
        )
        message_create(conversation=other, role="user", content=f"other {n}", created_at=at)
    skipped = [
        message_create(
            conversation=mine,
            role="assistant",
            content="x",
            created_at=start + timedelta(minutes=3),
            status=Message.Status.FAILED,
        ),
        message_create(
            conversation=mine,
            role="assistant",
            content="(offline) x",
            model=OFFLINE_MODEL,
            created_at=start + timedelta(minutes=3),
        ),
    ]
    tie = message_create(
        conversation=mine, role="assistant", content="same minute", created_at=said[3].created_at
    )

    around = exchange.neighbours([said[3].pk, said[0].pk, said[6].pk])

    middle = around[said[3].pk]
    assert [n.id for n in middle.before] == [said[2].pk, said[1].pk]
    assert [n.id for n in middle.after] == [tie.pk, said[4].pk]
    assert not {n.id for n in middle.before + middle.after} & {s.pk for s in skipped}
    assert (around[said[0].pk].before, [n.id for n in around[said[0].pk].after]) == (
        [],
        [said[1].pk, said[2].pk],
    )
    assert [n.id for n in around[said[6].pk].before] == [said[5].pk, said[4].pk]
    assert around[said[6].pk].after == []
    assert middle.after[0].role == "assistant"


def test_many_pivots_in_one_read(alice):
    """A search asks for dozens of pivots at once: each gets its own neighbours."""
    conversation = conversation_create(user=alice)
    start = timezone.now() - timedelta(days=1)
    said = [
        message_create(
            conversation=conversation,
            role="user",
            content=f"turn {n}",
            created_at=start + timedelta(seconds=n),
        )
        for n in range(300)
    ]
    pivots = [m.pk for m in said[1:-1]]
    around = exchange.neighbours(pivots)
    assert set(around) == set(pivots)
    for n, message in enumerate(said[1:-1], start=1):
        assert around[message.pk].before[0].id == said[n - 1].pk
        assert around[message.pk].after[0].id == said[n + 1].pk
    assert exchange.neighbours([]) == {}
