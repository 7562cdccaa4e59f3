"""Deleting a memory takes it out of the "Remembered" notices that name it, reading only those
(not every notice of the user's)."""

import pytest

from memory.models import Fact, MemoryEvent
from memory.services import memory_delete
from memory.services.copies import notices_naming

pytestmark = pytest.mark.django_db


def _item(kind, pk):
    return {"kind": kind, "id": pk, "action": "added", "text": f"{kind} {pk}", "before": None}


@pytest.fixture
def notices(alice, conversation, say):
    message = say("hello")

    def notice(*items):
        return MemoryEvent.objects.create(
            user=alice, conversation=conversation, message=message, items=list(items)
        )

    return notice


def test_only_the_notices_naming_an_id_are_read(notices):
    # The id last in its item, and first: both ends a JSON number can have.
    five = notices(_item("fact", 5))
    five_first = notices({"id": 5, "kind": "decision", "action": "added", "text": "x"})
    notices(_item("fact", 50), _item("fact", 15))  # longer numbers holding "5"
    notices({"kind": "fact", "id": 7, "text": '"id": 5, in the words'})  # said, not named
    notices()
    found = MemoryEvent.objects.filter(notices_naming({5}))
    assert set(found) == {five, five_first}


def test_deleting_a_memory_leaves_the_notices_naming_it(alice, conversation, notices):
    fact = Fact.objects.create(user=alice, conversation=conversation, text="x", dedupe_key="x")
    pk = fact.pk
    alone = notices(_item("fact", pk))
    shared = notices(_item("fact", pk), _item("decision", pk))
    other = notices(_item("fact", pk + 10))
    memory_delete(memory=fact, actor=alice)
    assert not MemoryEvent.objects.filter(pk=alone.pk).exists()
    shared.refresh_from_db()
    assert shared.items == [_item("decision", pk)]  # the same id of another kind stays
    other.refresh_from_db()
    assert other.items == [_item("fact", pk + 10)]
