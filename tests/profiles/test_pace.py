"""Pace: the rhythm of the exchange (the time since the assistant's previous reply, with the
message's length), read per message, learned after each turn, told only when clear."""

import json
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.serializers.json import DjangoJSONEncoder
from django.utils import timezone

from chat.models import Message
from chat.selectors import gaps_after_replies
from chat.services import conversation_create, message_create
from chat.turn.after import after_turns
from profiles.instructions import build_instructions
from profiles.models import UserProfile
from profiles.selectors import profile_get
from profiles.services import (
    profile_observe_message,
    profile_set_memory_mode,
    profile_update_preferences,
)
from profiles.style import analyse
from staff.services.user_data import user_data_delete
from userdata.transfer.export import user_data_export
from userdata.transfer.importer import BadExport, user_data_import

QUICK = ["ok and then?", "why", "got it, next one", "sure", "and in python?"]
CONSIDERED = (
    "I have been thinking about what you said on the migration plan. The first part makes "
    "sense to me, but I am not sure the second step holds when both services write to the "
    "same table during the switch. Could we walk through what happens to a row that is "
    "updated on the old side while the copy is running, and how the new side finds out?"
)


def test_pace_is_the_rhythm_not_the_length():
    quick = analyse("ok and then?", gap_seconds=4)
    assert quick.pace == 0.0
    considered = analyse(CONSIDERED, gap_seconds=240)
    assert considered.pace > 0.8
    # A long paste sent seconds after the reply is long (verbosity) but not slow.
    paste = analyse(CONSIDERED, gap_seconds=5)
    assert paste.verbosity > 0.5 and paste.pace < 0.3
    # A short answer after minutes of reading is not a quick exchange.
    assert analyse("ok", gap_seconds=240).pace > 0.6


def test_no_gap_or_a_user_who_left_is_no_evidence():
    assert analyse(CONSIDERED).pace is None  # the first message: no reply before it
    assert analyse(CONSIDERED, gap_seconds=3 * 3600).pace is None  # came back hours later
    assert analyse("```\nprint(1)\n```", gap_seconds=5).pace is None  # no prose words
    assert analyse("", gap_seconds=5).pace is None


def _exchange(conversation, text, *, at, reply_took, gap):
    """A user message ``gap`` seconds after the end of a reply that started at ``at``."""
    question = message_create(
        conversation=conversation, role="user", content="earlier", created_at=at
    )
    message_create(
        conversation=conversation, role="assistant", content="An answer.",
        created_at=at + timedelta(seconds=1), reply_to=question,
    )  # fmt: skip
    Message.objects.filter(conversation=conversation, role="assistant").update(duration=reply_took)
    sent = at + timedelta(seconds=1 + reply_took + gap)
    return message_create(conversation=conversation, role="user", content=text, created_at=sent)


@pytest.mark.django_db
def test_the_gap_is_measured_from_the_previous_reply_in_the_conversation(alice):
    conversation = conversation_create(user=alice)
    start = timezone.now() - timedelta(hours=1)
    first = message_create(conversation=conversation, role="user", content="hi", created_at=start)
    message = _exchange(conversation, "and?", at=start + timedelta(minutes=5), reply_took=9, gap=42)
    gaps = gaps_after_replies([first, message])
    assert gaps[first.pk] is None  # nothing answered before it
    assert gaps[message.pk] == pytest.approx(42)


@pytest.mark.django_db
def test_quick_exchanges_after_turns_reach_the_instructions(alice):
    start = timezone.now() - timedelta(hours=2)
    for i, text in enumerate(QUICK * 2):
        conversation = conversation_create(user=alice)
        message = _exchange(
            conversation, text, at=start + timedelta(minutes=i), reply_took=3, gap=4
        )
        after_turns([(conversation, message)])
    profile = profile_get(user=alice)
    assert profile.pace_count == len(QUICK) * 2 and profile.pace < 0.3
    text = build_instructions(profile).text
    assert "Pace: the user writes in quick short exchanges; answer briefly and directly." in text
    # A chosen length wins.
    profile_update_preferences(user=alice, preferences={"detail_level": "comprehensive"})
    block = build_instructions(profile_get(user=alice))
    assert "Pace:" not in block.text
    reasons = {item["name"]: item["reason"] for item in block.skipped}
    assert "detail level preference" in reasons["pace"]


@pytest.mark.django_db
def test_long_considered_messages_reach_the_instructions(alice):
    for _ in range(8):
        profile_observe_message(user=alice, text=CONSIDERED, gap_seconds=270)
    text = build_instructions(profile_get(user=alice)).text
    assert "Pace: the user writes long considered messages; a thorough answer is welcome." in text


@pytest.mark.django_db
def test_an_unclear_pace_says_nothing(alice):
    for i in range(10):  # quick and slow in turn: the middle
        profile_observe_message(
            user=alice, text=CONSIDERED if i % 2 else "ok", gap_seconds=4 if i % 2 else 270
        )
    block = build_instructions(profile_get(user=alice))
    assert "Pace:" not in block.text
    reasons = {item["name"]: item["reason"] for item in block.skipped}
    assert reasons["pace"].startswith("neutral")


@pytest.mark.django_db
def test_temporary_chats_and_memory_off_teach_no_pace(alice):
    start = timezone.now() - timedelta(hours=1)
    temporary = conversation_create(user=alice, temporary=True)
    message = _exchange(temporary, "and?", at=start, reply_took=3, gap=4)
    after_turns([(temporary, message)])
    assert profile_get(user=alice).pace_count == 0

    profile_set_memory_mode(user=alice, mode=UserProfile.MemoryMode.OFF)
    conversation = conversation_create(user=alice)
    message = _exchange(conversation, "and?", at=start + timedelta(minutes=5), reply_took=3, gap=4)
    after_turns([(conversation, message)])
    profile_observe_message(user=alice, text="ok then", gap_seconds=4)
    assert profile_get(user=alice).pace_count == 0


@pytest.mark.django_db
def test_the_export_carries_the_pace_and_the_import_checks_it(alice):
    staff = get_user_model().objects.create_user("staff", "s@example.com", "pw", is_staff=True)
    for _ in range(6):
        profile_observe_message(user=alice, text="ok", gap_seconds=3)
    learned = profile_get(user=alice)
    exported = json.loads(json.dumps(user_data_export(user=alice), cls=DjangoJSONEncoder))
    assert exported["profile"]["fields"]["pace"] == pytest.approx(learned.pace)

    bad = json.loads(json.dumps(exported))
    bad["profile"]["fields"]["pace"] = "NaN"
    user_data_delete(user=alice, actor=staff)
    with pytest.raises(BadExport) as refused:
        user_data_import(document=bad, actor=staff)
    assert "pace" in str(refused.value.message)

    exported["profile"]["fields"]["pace"] = 7  # beyond 0..1: clamped like the other metrics
    user_data_import(document=exported, actor=staff)
    restored = UserProfile.objects.get(user__username="alice")
    assert restored.pace == 1.0 and restored.pace_count == learned.pace_count


@pytest.mark.django_db
def test_the_profile_page_shows_the_pace(alice_client, alice):
    for _ in range(6):
        profile_observe_message(user=alice, text="ok", gap_seconds=3)
    content = alice_client.get("/profile/").content.decode()
    row = content[content.index('id="metric-pace"') :].split("</tr>")[0]
    assert "Pace" in row and "Used: Pace: the user writes in quick short exchanges" in row
    assert "from quick short exchanges (0%) to long considered messages (100%)" in content
