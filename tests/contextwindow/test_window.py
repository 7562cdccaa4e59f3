"""ConversationMemory: the seed's API, its strategies, and the faults it fixes."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from contextwindow.tokens import count_message_tokens, count_tokens
from contextwindow.window import (
    KEEP_RECENT,
    SUMMARY_PREFIX,
    ConversationMemory,
    MemoryStrategy,
    Message,
    select_recent,
)

SYSTEM = "You are a helpful AI assistant."


def exact(memory):
    return count_message_tokens(memory.messages, memory.model, prime_reply=False)


def fill(memory, n, words=8):
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        memory.add(role, f"message {i} " + "lorem ipsum " * words)


# -- the seed's public API -----------------------------------------------------------------


def test_it_keeps_the_seed_api():
    """Constructor, add, messages, total_tokens, clear and repr behave as the seed's."""
    memory = ConversationMemory(
        system_prompt=SYSTEM,
        strategy=MemoryStrategy.TOKEN_LIMIT,
        max_tokens=4096,
        max_messages=20,
        model="gpt-4o",
        summarise_fn=None,
    )
    memory.add("user", "What is RAG?")
    memory.add("assistant", "Retrieval-augmented generation.")
    assert memory.messages == [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "What is RAG?"},
        {"role": "assistant", "content": "Retrieval-augmented generation."},
    ]
    assert memory.total_tokens == exact(memory)
    assert repr(memory) == f"ConversationMemory(3 messages, {memory.total_tokens} tokens)"
    memory.clear()
    assert memory.messages == [{"role": "system", "content": SYSTEM}]
    memory.clear(keep_system=False)
    assert memory.messages == []
    assert memory.total_tokens == 0


def test_strategy_values_are_the_seeds():
    """The enum values stay what callers and stored rows use."""
    assert [s.value for s in MemoryStrategy] == ["sliding_window", "token_limit", "summary_buffer"]
    assert ConversationMemory(strategy="summary_buffer").strategy is MemoryStrategy.SUMMARY_BUFFER


def test_message_dataclass_keeps_its_fields():
    """Message has role, content, timestamp and token_count."""
    message = Message("user", "hi")
    assert (message.role, message.content, message.token_count) == ("user", "hi", 0)
    assert message.timestamp > 0


def test_total_tokens_is_the_exact_prompt_size():
    """total_tokens equals tiktoken's count of messages with chat overhead."""
    memory = ConversationMemory(SYSTEM, max_tokens=100_000)
    fill(memory, 50)
    assert memory.total_tokens == exact(memory)


def test_a_known_token_count_is_not_recomputed():
    """A stored message's token count is taken as given."""
    memory = ConversationMemory(max_tokens=1000)
    memory.add("user", "hello world", token_count=2)
    assert memory.total_tokens == 2 + 4


# -- strategies ---------------------------------------------------------------------------


def test_sliding_window_keeps_the_last_n_and_the_system_prompt():
    """Only the last max_messages non-system messages stay."""
    memory = ConversationMemory(SYSTEM, strategy="sliding_window", max_messages=3)
    fill(memory, 10, words=1)
    contents = [m["content"] for m in memory.messages]
    assert contents[0] == SYSTEM
    assert [c.split()[1] for c in contents[1:]] == ["7", "8", "9"]
    assert memory.total_tokens == exact(memory)


def test_sliding_window_also_holds_the_token_budget():
    """Few but huge messages do not overflow max_tokens."""
    memory = ConversationMemory(SYSTEM, strategy="sliding_window", max_messages=10, max_tokens=200)
    fill(memory, 10, words=30)
    assert memory.total_tokens <= 200
    assert memory.messages[-1]["content"].startswith("message 9 ")


def test_token_limit_drops_the_oldest_first():
    """Messages leave oldest first until the total fits."""
    memory = ConversationMemory(SYSTEM, max_tokens=150)
    fill(memory, 40)
    assert memory.total_tokens <= 150
    kept = [int(m["content"].split()[1]) for m in memory.messages[1:]]
    assert kept == list(range(40 - len(kept), 40))


def test_summary_buffer_keeps_one_rolling_summary():
    """Repeated summarisation replaces the summary instead of stacking system messages."""
    calls = []

    def summarise(messages):
        calls.append(messages)
        return f"summary #{len(calls)}"

    memory = ConversationMemory(
        SYSTEM, strategy="summary_buffer", max_tokens=200, summarise_fn=summarise
    )
    fill(memory, 60)
    system_messages = [m for m in memory.messages if m["role"] == "system"]
    assert len(calls) > 1
    assert system_messages == [
        {"role": "system", "content": SYSTEM},
        {"role": "system", "content": f"{SUMMARY_PREFIX}summary #{len(calls)}"},
    ]
    assert memory.summary == f"summary #{len(calls)}"
    assert memory.total_tokens == exact(memory) <= 200


def test_the_next_summary_receives_the_previous_one():
    """Nothing summarised is lost: the previous summary comes first in the next call."""
    calls = []

    def summarise(messages):
        calls.append(messages)
        return "S" + str(len(calls))

    memory = ConversationMemory(strategy="summary_buffer", max_tokens=120, summarise_fn=summarise)
    fill(memory, 30)
    assert calls[0][0]["role"] in ("user", "assistant")
    for previous, call in enumerate(calls[1:], start=1):
        assert call[0] == {"role": "system", "content": f"{SUMMARY_PREFIX}S{previous}"}
    folded = [m["content"] for call in calls for m in call if m["role"] != "system"]
    assert len(folded) == len(set(folded))  # each message folded exactly once


def test_summary_tokens_include_the_prefix():
    """The summary message is counted with its prefix."""
    memory = ConversationMemory(
        strategy="summary_buffer", max_tokens=150, summarise_fn=lambda m: "short"
    )
    fill(memory, 20)
    summary_cost = count_tokens(SUMMARY_PREFIX + "short") + 4
    recent = count_message_tokens(memory.messages[1:], prime_reply=False)
    assert memory.total_tokens == summary_cost + recent


def test_summary_buffer_without_a_function_trims_by_tokens():
    """No summarise_fn: behaves as token_limit."""
    memory = ConversationMemory(SYSTEM, strategy="summary_buffer", max_tokens=150)
    fill(memory, 30)
    assert memory.total_tokens <= 150
    assert memory.summary is None


# -- faults -------------------------------------------------------------------------------


def test_a_failing_summariser_falls_back_to_trimming():
    """summarise_fn raising does not break add: the oldest messages are trimmed instead."""

    def broken(messages):
        raise RuntimeError("LLM down")

    memory = ConversationMemory(
        SYSTEM, strategy="summary_buffer", max_tokens=150, summarise_fn=broken
    )
    fill(memory, 30)
    assert memory.total_tokens <= 150
    assert memory.summary is None
    assert memory.messages[-1]["content"].startswith("message 29 ")


def test_a_summariser_returning_a_non_string_falls_back():
    """A bad return value is treated as a failure."""
    memory = ConversationMemory(
        strategy="summary_buffer", max_tokens=120, summarise_fn=lambda m: None
    )
    fill(memory, 20)
    assert memory.summary is None
    assert memory.total_tokens <= 120


def test_one_message_larger_than_the_budget_is_kept_alone_with_the_system_prompt():
    """No loop; the system prompt and the newest message stay; over_budget says so."""
    memory = ConversationMemory(SYSTEM, max_tokens=50)
    fill(memory, 3, words=1)
    memory.add("user", "huge " * 500)
    assert [m["role"] for m in memory.messages] == ["system", "user"]
    assert memory.messages[-1]["content"].startswith("huge")
    assert memory.over_budget
    memory.add("assistant", "ok")
    assert memory.messages[-1] == {"role": "assistant", "content": "ok"}
    assert not memory.over_budget


def test_few_messages_still_over_budget_in_summary_mode_terminate():
    """Four or fewer big messages in summary mode: trimmed, no loop, system kept."""
    calls = []
    memory = ConversationMemory(
        SYSTEM,
        strategy="summary_buffer",
        max_tokens=100,
        summarise_fn=lambda m: calls.append(m) or "s",
    )
    for _ in range(KEEP_RECENT):
        memory.add("user", "big " * 60)
    assert calls == []
    assert memory.messages[0]["content"] == SYSTEM
    assert len(memory.messages) == 2
    assert memory.total_tokens <= 100


def test_a_summary_that_does_not_fit_is_dropped_before_the_newest_message():
    """When summary + newest exceed the budget, the budget wins over the summary."""
    memory = ConversationMemory(
        strategy="summary_buffer", max_tokens=120, summarise_fn=lambda m: "long summary " * 80
    )
    fill(memory, 10)
    assert memory.summary is None
    assert memory.total_tokens <= 120


@pytest.mark.parametrize("role", ["tool", "User", "", None, "function"])
def test_an_unknown_role_is_a_clear_error(role):
    """Only system, user and assistant are accepted."""
    memory = ConversationMemory()
    with pytest.raises(ValueError, match="role must be one of"):
        memory.add(role, "hello")
    assert memory.messages == []


@pytest.mark.parametrize("content", [None, 42, b"bytes", ["list"]])
def test_non_string_content_is_a_clear_error(content):
    """Content must be text."""
    memory = ConversationMemory()
    with pytest.raises(TypeError, match="content must be a str"):
        memory.add("user", content)


@pytest.mark.parametrize(
    "kwargs",
    [{"strategy": "lru"}, {"max_tokens": 0}, {"max_messages": 0}, {"max_tokens": "4096"}],
)
def test_bad_constructor_arguments_are_refused(kwargs):
    """Invalid configuration fails at construction, not at the first add."""
    with pytest.raises(ValueError):
        ConversationMemory(**kwargs)


# -- invariants ---------------------------------------------------------------------------

message_strategy = st.tuples(
    st.sampled_from(["user", "assistant"]),
    st.text(min_size=0, max_size=300),
)


@settings(max_examples=150, deadline=None)
@given(
    messages=st.lists(message_strategy, min_size=1, max_size=60),
    strategy=st.sampled_from(list(MemoryStrategy)),
    max_tokens=st.integers(min_value=20, max_value=600),
    max_messages=st.integers(min_value=1, max_value=12),
    summarise=st.sampled_from([None, "ok", "fails"]),
)
def test_invariants_hold_for_any_history(messages, strategy, max_tokens, max_messages, summarise):
    """Order kept, system first, newest kept, budget held whenever more than one message is
    left, and total_tokens always exact."""

    def summarise_fn(batch):
        if summarise == "fails":
            raise RuntimeError("boom")
        return f"{len(batch)} messages"

    memory = ConversationMemory(
        "sys",
        strategy=strategy,
        max_tokens=max_tokens,
        max_messages=max_messages,
        summarise_fn=summarise_fn if summarise else None,
    )
    tagged = [(role, f"{i}:{text}") for i, (role, text) in enumerate(messages)]
    for role, content in tagged:
        memory.add(role, content)
        out = memory.messages
        assert out[0] == {"role": "system", "content": "sys"}
        assert out[-1] == {"role": role, "content": content}
        conversation = [m for m in out if m["role"] != "system"]
        indices = [int(m["content"].split(":", 1)[0]) for m in conversation]
        assert indices == sorted(indices)
        assert memory.total_tokens == exact(memory)
        if len(conversation) > 1:
            assert memory.total_tokens <= max_tokens
        if strategy is MemoryStrategy.SLIDING_WINDOW:
            assert len(conversation) <= max_messages


# -- select_recent --------------------------------------------------------------------------


def test_select_recent_counts_what_fits_newest_first():
    """Stops at the first message that does not fit; the newest always counts."""
    assert select_recent([10, 10, 10, 10], budget=25) == 2
    assert select_recent([100, 1], budget=10) == 1
    assert select_recent([1, 1, 1], budget=100, max_messages=2) == 2
    assert select_recent([], budget=10) == 0
