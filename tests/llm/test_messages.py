"""llm.messages: the request shaped for strict chat templates (MESSAGE_SHAPE)."""

from llm.messages import SECTION_SEPARATOR, WINDOW_OPENER, alternates, shape_messages


def blocks_and_turns():
    return [
        {"role": "system", "content": "PROMPT"},
        {"role": "system", "content": "PREFERENCES"},
        {"role": "system", "content": "SUMMARY"},
        {"role": "system", "content": "MEMORY"},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "answer"},
        {"role": "user", "content": "asked again after a failed reply"},
        {"role": "user", "content": "new message"},
    ]


def test_the_blocks_become_one_leading_system_message_in_order():
    """One system message, its sections in the blocks' order, each set apart."""
    shaped = shape_messages(blocks_and_turns(), shape="single")
    assert shaped[0] == {
        "role": "system",
        "content": SECTION_SEPARATOR.join(["PROMPT", "PREFERENCES", "SUMMARY", "MEMORY"]),
    }
    assert [m["role"] for m in shaped].count("system") == 1


def test_consecutive_user_messages_are_merged_so_turns_alternate():
    """A failed reply's gap closes: the two user messages are one turn."""
    shaped = shape_messages(blocks_and_turns(), shape="single")
    assert alternates(shaped)
    assert shaped[-1] == {
        "role": "user",
        "content": "asked again after a failed reply\n\nnew message",
    }


def test_a_window_opening_with_the_assistant_gets_a_user_turn_first():
    shaped = shape_messages(
        [
            {"role": "system", "content": "PROMPT"},
            {"role": "assistant", "content": "the end of an older answer"},
            {"role": "user", "content": "hi"},
        ],
        shape="single",
    )
    assert [m["role"] for m in shaped] == ["system", "user", "assistant", "user"]
    assert shaped[1]["content"] == WINDOW_OPENER and alternates(shaped)


def test_separate_keeps_the_messages_as_built():
    """For servers that accept them: a system message per block, turns as stored."""
    messages = blocks_and_turns()
    assert shape_messages(messages, shape="separate") == messages
    assert not alternates(messages)


def test_the_setting_chooses_the_shape(settings):
    settings.MEMORYCHAT_MESSAGE_SHAPE = "separate"
    assert len(shape_messages(blocks_and_turns())) == 8
    settings.MEMORYCHAT_MESSAGE_SHAPE = "single"
    assert len(shape_messages(blocks_and_turns())) == 4
