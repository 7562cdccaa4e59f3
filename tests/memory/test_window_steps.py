"""The history's start moves in steps: consecutive turns send the same oldest messages (the
prefix a server cached stays the same) until they no longer fit, then a block goes at once."""

import itertools

import pytest

from chat.services import NewMessage, conversation_create, message_create, message_create_many
from memory import context
from memory.context import WINDOW_STEP_MESSAGES, build
from memory.models import Summary

pytestmark = pytest.mark.django_db


def fill(conversation, n, words=20):
    message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user" if i % 2 == 0 else "assistant", f"turn {i} " + "blah " * words)
            for i in range(n)
        ],
    )


def turns(conversation, count, words=20):
    """``count`` turns as the chat runs them: the user's message stored, the request built,
    the reply stored with its report. Returns each request's history (message ids)."""
    sent = []
    for i in range(count):
        text = f"question {i} " + "word " * words
        user = message_create(conversation=conversation, role="user", content=text)
        built = build(conversation=conversation, user_text=text, user_message=user)
        sent.append([m["id"] for m in built.report["messages"]])
        message_create(
            conversation=conversation,
            role="assistant",
            content=f"answer {i} " + "word " * words,
            context_report=built.report,
        )
    return sent


def shared_starts(history):
    """For each turn after the first: whether it starts with the same message as the one
    before (its history is the previous one's plus the last exchange)."""
    return [b[0] == a[0] for a, b in itertools.pairwise(history)]


def test_a_sliding_window_moves_a_block_at_a_time(alice):
    """20 messages at most: the start holds for four turns of every five, and when it moves
    it drops WINDOW_STEP_MESSAGES more than the one message it had to."""
    conversation = conversation_create(user=alice, strategy="sliding_window")
    fill(conversation, 30, words=2)
    history = turns(conversation, 12, words=2)
    assert all(len(h) <= context.SLIDING_WINDOW_MESSAGES for h in history)
    assert len(history[0]) == context.SLIDING_WINDOW_MESSAGES  # no earlier request: all that fit
    assert shared_starts(history).count(True) >= 8, shared_starts(history)  # 4 of 5
    moved = [b for a, b in itertools.pairwise(history) if b[0] != a[0]]
    assert all(len(h) == context.SLIDING_WINDOW_MESSAGES - WINDOW_STEP_MESSAGES for h in moved)
    for a, b in itertools.pairwise(history):
        if b[0] == a[0]:  # the same start: the previous history and the last exchange
            assert b[: len(a)] == a and len(b) == len(a) + 2


def test_a_budget_bound_window_moves_a_block_at_a_time(alice):
    """token_limit: the newest messages that fit, then the same start until it no longer
    fits, then a quarter of the room at once."""
    conversation = conversation_create(user=alice, strategy="token_limit", context_budget=1500)
    fill(conversation, 60)
    history = turns(conversation, 10)
    starts = shared_starts(history)
    assert starts.count(True) >= 6, starts
    assert not all(starts), "the window did move"
    moved = [i + 1 for i, same in enumerate(starts) if not same]
    for i in moved:  # a step: clearly fewer messages than the turn before
        assert len(history[i]) < len(history[i - 1]) - 2


def test_without_an_earlier_request_the_newest_that_fit_are_sent(alice):
    """Nothing to keep stable (a first request, an imported history): as many as fit."""
    conversation = conversation_create(user=alice, strategy="sliding_window")
    fill(conversation, 50, words=2)
    built = build(conversation=conversation, user_text="hi")
    assert len(built.report["messages"]) == context.SLIDING_WINDOW_MESSAGES
    assert built.report["messages_left_out"]["reason"] == "sliding window"


def test_a_start_the_summary_now_covers_is_not_kept(alice):
    """summary_buffer: once the summary covers the previous start, the window is the tail
    after the summary, whole."""
    conversation = conversation_create(user=alice, strategy="summary_buffer")
    fill(conversation, 10, words=2)
    first = turns(conversation, 1, words=2)[0]
    covered = conversation.messages.order_by("id")[5]
    Summary.objects.create(
        conversation=conversation,
        version=1,
        is_current=True,
        text="They talked.",
        covered_through=covered.pk,
    )
    after = turns(conversation, 1, words=2)[0]
    assert after[0] != first[0] and min(after) > covered.pk
    assert len(after) == conversation.messages.filter(pk__gt=covered.pk).count() - 2


def test_a_budget_raised_since_the_last_request_is_used_at_once(alice):
    """The start is kept for a cached prefix only under the same room: raised in the
    settings, the window takes the older messages that now fit."""
    conversation = conversation_create(user=alice, strategy="token_limit", context_budget=1500)
    fill(conversation, 60)
    before = turns(conversation, 2)[-1]
    conversation.context_budget = 16000
    conversation.save(update_fields=["context_budget"])

    after = turns(conversation, 1)[0]

    assert len(after) > len(before) + 2 and min(after) < min(before)


def test_a_strategy_changed_since_the_last_request_is_used_at_once(alice):
    """A sliding window's start is not kept once the conversation is switched to the token
    limit: the older messages that fit the budget are sent at once."""
    conversation = conversation_create(user=alice, strategy="sliding_window")
    fill(conversation, 40, words=2)
    before = turns(conversation, 2, words=2)[-1]
    assert len(before) <= context.SLIDING_WINDOW_MESSAGES
    conversation.strategy = "token_limit"
    conversation.save(update_fields=["strategy"])

    after = turns(conversation, 1, words=2)[0]

    assert len(after) > context.SLIDING_WINDOW_MESSAGES and min(after) < min(before)
