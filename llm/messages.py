"""The shape of the messages a model server is sent (MESSAGE_SHAPE).

Many models' chat templates (Gemma, Mistral, Llama 2 and others, as llama.cpp, vLLM and Ollama
apply them) accept one system message, first, then strictly alternating user and assistant
turns starting with the user, and refuse anything else with HTTP 400 ("Conversation roles must
alternate"). The context builder sends a system message per block (prompt, preferences,
summary, memory), and history can hold two user messages in a row (after a failed reply, whose
empty row is left out). So, by default (``single``):

- every system message before the first turn becomes one section of a single leading system
  message, in order, separated by a rule (each block opens with its own header saying what it
  is); a system message after the turns (the per-turn blocks, sent last so that the
  prefix before them stays the same between turns and a server's prompt cache reuses it;
  marked ``AfterTurns``, so that on a first turn, with no history before them, they are not
  taken for leading ones) opens the user turn that follows it;
- consecutive messages of the same role are merged into one turn, so a failed reply's gap
  closes;
- a conversation window that opens with an assistant turn (its user message was summarised or
  left out) is opened by a short user turn saying so.

``separate`` keeps a system message per block and the turns as stored, for servers (OpenAI's)
that accept them. Either way the context report lists each block as built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from django.conf import settings

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

SECTION_SEPARATOR = "\n\n---\n\n"
TURN_SEPARATOR = "\n\n"
WINDOW_OPENER = "(Earlier messages of this conversation are left out or summarised above.)"


class AfterTurns(dict[str, str]):
    """A system block sent after the history (``memory.context.PER_TURN_BLOCKS``: it may
    change from one turn to the next). To everything else a plain message dict (equal to
    one, serialised as one, sent as its role and content); ``single`` opens the user turn
    that follows it with it even on a conversation's first turn, where no history stands
    before it: the leading system message is then the same on every turn of a conversation
    (a server's prompt cache keeps it), not the first turn's alone with the memory in it."""


def shape_messages(
    messages: Sequence[dict], *, shape: str | None = None
) -> list[ChatCompletionMessageParam]:
    """The messages as the configured server accepts them (see the module docs): plain
    role and content dicts, which is what the client's message parameters describe."""
    shape = shape or settings.MEMORYCHAT_MESSAGE_SHAPE
    if shape == "separate":
        shaped = [dict(m) for m in messages]
    else:
        shaped = single_system_alternating(messages)
    return cast("list[ChatCompletionMessageParam]", shaped)


def single_system_alternating(messages: Sequence[dict]) -> list[dict]:
    first_turn = next(
        (i for i, m in enumerate(messages) if m["role"] != "system" or isinstance(m, AfterTurns)),
        len(messages),
    )
    leading = messages[:first_turn]
    sections = [m["content"] for m in leading if m["role"] == "system" and m["content"].strip()]
    turns: list[dict] = []
    for message in messages[first_turn:]:
        if not message["content"].strip():
            continue
        if message["role"] == "system":
            # A block after the turns (the memory, kept last for prefix caching) opens the
            # user turn it precedes: strict templates take no system message there.
            message = {"role": "user", "content": message["content"]}
        if turns and turns[-1]["role"] == message["role"]:
            turns[-1]["content"] += TURN_SEPARATOR + message["content"]
        else:
            turns.append({"role": message["role"], "content": message["content"]})
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": WINDOW_OPENER})
    head = [{"role": "system", "content": SECTION_SEPARATOR.join(sections)}] if sections else []
    return head + turns


def alternates(messages: Sequence[dict]) -> bool:
    """True when ``messages`` is what a strict template accepts: at most one system message,
    first, then user/assistant turns alternating from the user's."""
    roles = [m["role"] for m in messages]
    if roles and roles[0] == "system":
        roles = roles[1:]
    return all(role == ("user" if i % 2 == 0 else "assistant") for i, role in enumerate(roles))
