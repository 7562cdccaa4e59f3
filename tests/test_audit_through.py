"""audit.through: every history record made inside says the channel it came by, within the
reason's 100 characters; records made outside are left as the services wrote them."""

import pytest

from audit import through
from memory.models import Fact
from memory.services import memory_add, memory_edit_text

pytestmark = pytest.mark.django_db


def reasons(fact):
    return list(
        fact.history.order_by("history_date").values_list("history_change_reason", flat=True)
    )


def test_records_made_inside_end_with_the_channel(alice):
    with through("MCP"):
        fact = memory_add(user=alice, kind="fact", text="I like tea")
    memory_edit_text(memory=fact, actor=alice, text="I like green tea")
    assert reasons(fact) == [
        "added by the user through MCP",
        "edited by the user: text, state",
    ]


def test_a_record_without_a_reason_gets_one_and_a_long_one_keeps_the_channel(alice):
    fact = Fact.objects.create(user=alice, text="x", dedupe_key="x")
    with through("MCP"):
        fact.text = "y"
        fact.save()
        fact.text = "z"
        fact._change_reason = "w" * 100
        fact.save()
    assert reasons(fact)[1:] == ["changed through MCP", "w" * 88 + " through MCP"]
