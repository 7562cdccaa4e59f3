"""The memory block fills its share of the budget by tokens (memory.context._add_memory):
as many hits as fit, best first; the share never exceeded; nothing the window sends repeated;
a small share still gets its best few; every kind competes on its score."""

import pytest

from chat.services import NewMessage, conversation_create, message_create, message_create_many
from contextwindow.tokens import count_tokens
from memory import context, recall
from memory.context import build
from memory.models import ActionItem, Fact

pytestmark = pytest.mark.django_db


def memory_block(built) -> str:
    return next((m["content"] for m in built.messages if "<memory>" in m["content"]), "")


def memory_tokens(built) -> int:
    return next((b["tokens"] for b in built.report["blocks"] if b["name"] == "memory"), 0)


def memory_cap(built) -> int:
    return int(built.report["limit"] * context.MEMORY_SHARE)


def test_short_memories_fill_the_share_past_twelve(alice, conversation):
    """Forty short matching turns: far more than the twelve a count would keep, all in the
    share, best first."""
    other = conversation_create(user=alice, title="Garden")
    message_create_many(
        conversation=other,
        messages=[NewMessage("user", f"Tomatoes in bed {i} got blight") for i in range(40)],
    )
    built = build(conversation=conversation, user_text="Which tomatoes got blight?")
    memories = built.report["memories"]
    assert len(memories) > recall.SEARCH_K
    assert memory_tokens(built) <= memory_cap(built)
    scores = [m["score"] for m in memories]
    assert scores == sorted(scores, reverse=True)


def test_the_share_is_full_and_never_exceeded(alice, conversation):
    """Long matching facts: the block stops within a line of its share, never past it, and
    what did not fit is reported (the first LEFT_OUT_LISTED, all of them counted)."""
    for i in range(100):
        Fact.objects.create(
            user=alice, text=f"Fact {i} about compost: " + "leaves " * 40, dedupe_key=f"c{i}"
        )
    built = build(conversation=conversation, user_text="compost leaves")
    used, cap = memory_tokens(built), memory_cap(built)
    assert used <= cap
    longest = max(count_tokens(m["text"]) for m in built.report["memories"]) + 30
    assert cap - used < longest
    left = built.report["memories_left_out"]
    assert left and all(m["left_out"] == "budget" for m in left)
    assert len(left) <= context.LEFT_OUT_LISTED
    detail = next(b["detail"] for b in built.report["blocks"] if b["name"] == "memory")
    shown = len(built.report["memories"])
    assert detail.startswith(f"{shown} memories, ") and detail.endswith(" left out")
    assert int(detail.split(", ")[1].split()[0]) >= len(left)


def test_an_exchange_does_not_repeat_what_the_window_sends(alice):
    """An exchange whose neighbour is in the window shows only what the window lacks."""
    in_window = recall.Recalled(
        kind="message",
        id=2,
        text="user: q\nassistant: a\nuser: b",
        score=1.0,
        why="",
        message_ids=[2, 1, 3],
        parts=[(1, "user", "q"), (2, "assistant", "a"), (3, "user", "b")],
    )
    kept = context._outside_window(in_window, {3})
    assert kept.text == "user: q\nassistant: a" and kept.message_ids == [2, 1]
    alone = context._outside_window(in_window, {1, 3})
    assert alone.text == "a" and alone.message_ids == [2] and not alone.parts
    assert context._outside_window(in_window, {2}) is None


def test_a_small_budget_still_gets_its_best_few(alice):
    """A share too small for any matching turn whole still carries the best ones, clipped."""
    other = conversation_create(user=alice, title="Notes")
    for i in range(5):
        message_create(
            conversation=other,
            role="user",
            content=f"Quarterly roadmap note {i}: " + "the migration plan needs review " * 60,
        )
    small = conversation_create(user=alice, context_budget=1500)
    built = build(conversation=small, user_text="quarterly roadmap migration plan")
    memories = built.report["memories"]
    assert 1 <= len(memories) <= context.BEST_FEW
    assert all(m["text"].endswith("…") for m in memories)
    assert memory_tokens(built) <= memory_cap(built)
    assert built.report["total_tokens"] <= built.report["limit"]


def test_kinds_compete_on_their_score(alice):
    """A new session's resume items and the search's hits are one list, by score."""
    Fact.objects.create(user=alice, text="The user is vegetarian", pinned=True, dedupe_key="v")
    ActionItem.objects.create(user=alice, what="Send the slides to Marta", dedupe_key="s")
    other = conversation_create(user=alice, title="Work")
    message_create(conversation=other, role="user", content="The slides for Marta are late")
    new = conversation_create(user=alice)
    found = recall.recall_for_turn(user=alice, conversation=new, query="slides for Marta", k=20)
    kinds = {item.kind for item in found}
    assert {"fact", "action_item", "message"} <= kinds
    scores = [item.score for item in found]
    assert scores == sorted(scores, reverse=True)


def test_search_k_follows_the_share():
    assert recall.search_k(0) == recall.SEARCH_K
    assert recall.search_k(3744) == 3744 // recall.LINE_TOKENS
    assert recall.search_k(10**6) == recall.SEARCH_K_MAX
