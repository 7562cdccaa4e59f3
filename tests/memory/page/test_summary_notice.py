"""The background summariser's extraction is noted too: under the newest reply it read."""

import pytest

from chat.models import Message
from chat.services import NewMessage, message_create_many
from memory import services
from memory.models import ActionItem, Decision, MemoryEvent, MemoryState
from profiles.services import profile_set_memory_mode

pytestmark = pytest.mark.django_db(transaction=True)

LINES = [
    "We decided to use Postgres instead of MySQL because it has JSONB.",
    "Good choice.",
    "I need to book the venue by Friday.",
    "Noted.",
]


def run_now(conversation):
    message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(LINES)
        ],
    )
    run = services.summary_run_start(conversation=conversation)
    return services.summary_run_execute(run_id=run.pk)


def test_a_summary_runs_extraction_is_a_notice_under_the_last_reply(conversation, alice):
    """Source summary; its items undo like a turn's."""
    run_now(conversation)
    event = MemoryEvent.objects.get(source=MemoryEvent.Source.SUMMARY)
    last_reply = Message.objects.filter(conversation=conversation, role="assistant").last()
    assert event.message == last_reply
    kinds = {item["kind"] for item in event.items}
    assert "decision" in kinds
    services.memory_event_undo(event=event, actor=alice)
    assert not Decision.objects.filter(user=alice).exists()


def test_in_ask_first_mode_the_summary_suggests(conversation, alice):
    """What the run found waits as suggestions."""
    profile_set_memory_mode(user=alice, mode="ask")
    run_now(conversation)
    states = set(Decision.objects.values_list("state", flat=True))
    states |= set(ActionItem.objects.values_list("state", flat=True))
    assert states == {MemoryState.SUGGESTED}
