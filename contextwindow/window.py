"""The context window: keep a conversation inside a model's token budget.

Pure Python (tiktoken, no Django). The public API is the one of the original
``ConversationMemory`` seed; what changed is how it behaves:

* ``add`` is O(1) amortised: a running total replaces re-summing the window, a deque replaces
  list scans, and each message is tokenised exactly once.
* ``total_tokens`` is the exact prompt size of ``messages`` with OpenAI's chat-format overhead
  (3 tokens + the role per message), i.e. ``contextwindow.tokens.count_message_tokens(messages,
  prime_reply=False)``; ``max_tokens`` bounds it for every strategy.
* ``summary_buffer`` keeps one rolling summary. Each summarisation receives the previous summary
  (as a first system message) together with the messages it folds in, so nothing summarised is
  lost; the summary's token count includes its prefix.
* If ``summarise_fn`` raises, the memory falls back to trimming the oldest messages by tokens.
* The system prompt and the newest message are never dropped. When they alone exceed the budget
  (one huge message, or a summary plus the last messages still too big), everything else is
  dropped — older messages first, then the summary — and ``total_tokens`` stays above
  ``max_tokens``: the caller sees ``over_budget`` and decides (truncate, refuse). No loop.
* Roles other than system/user/assistant and non-string content raise at ``add``.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum

from contextwindow.tokens import encoding_for_model, message_overhead

logger = logging.getLogger(__name__)

ROLES = ("system", "user", "assistant")
SUMMARY_PREFIX = "[Earlier conversation summary]: "
KEEP_RECENT = 4  # messages summary_buffer keeps verbatim after folding the rest

SummariseFn = Callable[[list[dict[str, str]]], str]


class MemoryStrategy(str, Enum):
    SLIDING_WINDOW = "sliding_window"  # the last max_messages messages (and within max_tokens)
    TOKEN_LIMIT = "token_limit"  # noqa: S105 — as many recent messages as fit in max_tokens
    SUMMARY_BUFFER = "summary_buffer"  # fold older messages into a rolling summary


@dataclass(slots=True)
class Message:
    role: str  # "system", "user", "assistant"
    content: str
    timestamp: float = field(default_factory=time.time)
    token_count: int = 0  # tokens of the content alone


class ConversationMemory:
    """Conversation history kept within a model's context window by one of three strategies."""

    def __init__(
        self,
        system_prompt: str | None = None,
        strategy: MemoryStrategy | str = MemoryStrategy.TOKEN_LIMIT,
        max_tokens: int = 4096,
        max_messages: int = 20,
        model: str = "gpt-4o",
        summarise_fn: SummariseFn | None = None,
    ):
        try:
            self.strategy = MemoryStrategy(strategy)
        except ValueError:
            choices = ", ".join(s.value for s in MemoryStrategy)
            raise ValueError(f"unknown strategy {strategy!r}; choose one of {choices}") from None
        if not isinstance(max_tokens, int) or max_tokens < 1:
            raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
        if not isinstance(max_messages, int) or max_messages < 1:
            raise ValueError(f"max_messages must be a positive integer, got {max_messages!r}")
        if summarise_fn is not None and not callable(summarise_fn):
            raise TypeError("summarise_fn must be callable")
        self.max_tokens = max_tokens
        self.max_messages = max_messages
        self.model = model
        self.summarise_fn = summarise_fn

        self._enc = encoding_for_model(model)
        self._encode = self._enc.encode_ordinary  # special-token text counts as plain text
        self._overhead = {role: message_overhead(role, self._enc) for role in ROLES}
        self._system: list[Message] = []
        self._recent: deque[Message] = deque()
        self._summary: str | None = None
        self._summary_message: Message | None = None
        self._tokens = 0

        if system_prompt:
            self.add("system", system_prompt)

    # -- public API -------------------------------------------------------------------------

    def add(self, role: str, content: str, *, token_count: int | None = None) -> None:
        """Add a message and trim history if needed.

        ``token_count`` lets a caller that already knows the content's tokens (a stored message)
        skip tokenising it again.
        """
        overhead = self._overhead.get(role)
        if overhead is None:
            raise ValueError(f"role must be one of {', '.join(ROLES)}; got {role!r}")
        if not isinstance(content, str):
            raise TypeError(f"content must be a str, got {type(content).__name__}")
        if token_count is None:
            token_count = len(self._encode(content))
        elif type(token_count) is not int or token_count < 0:
            raise ValueError(f"token_count must be a non-negative int, got {token_count!r}")
        message = Message(role, content, token_count=token_count)
        if role == "system":
            self._system.append(message)
        else:
            self._recent.append(message)
        self._tokens += token_count + overhead
        if self._tokens > self.max_tokens or (
            self.strategy is MemoryStrategy.SLIDING_WINDOW and len(self._recent) > self.max_messages
        ):
            self._trim()

    @property
    def total_tokens(self) -> int:
        return self._tokens

    @property
    def over_budget(self) -> bool:
        """True only when the system prompt and the newest message alone exceed max_tokens."""
        return self._tokens > self.max_tokens

    @property
    def summary(self) -> str | None:
        """The rolling summary of folded messages (summary_buffer), without its prefix."""
        return self._summary

    @property
    def messages(self) -> list[dict[str, str]]:
        """Return messages in the format expected by the OpenAI API: system prompt first, then
        the rolling summary, then the recent messages in order."""
        head = (
            self._system
            if self._summary_message is None
            else [
                *self._system,
                self._summary_message,
            ]
        )
        return [{"role": m.role, "content": m.content} for m in (*head, *self._recent)]

    def clear(self, keep_system: bool = True) -> None:
        """Reset conversation history (and its summary); keep the system prompt if asked."""
        self._recent.clear()
        self._summary = None
        self._summary_message = None
        if not keep_system:
            self._system.clear()
        self._tokens = sum(self._cost(m) for m in self._system)

    def __len__(self) -> int:
        return len(self._system) + len(self._recent) + (self._summary_message is not None)

    def __repr__(self) -> str:
        return f"ConversationMemory({len(self)} messages, {self.total_tokens} tokens)"

    # -- trimming ---------------------------------------------------------------------------

    def _cost(self, message: Message) -> int:
        return message.token_count + self._overhead[message.role]

    def _trim(self) -> None:
        if self.strategy is MemoryStrategy.SLIDING_WINDOW:
            while len(self._recent) > self.max_messages:
                self._tokens -= self._cost(self._recent.popleft())
        elif (
            self.strategy is MemoryStrategy.SUMMARY_BUFFER
            and self.summarise_fn is not None
            and self._tokens > self.max_tokens
            and len(self._recent) > KEEP_RECENT
        ):
            self._fold_into_summary(self.summarise_fn)
        self._drop_oldest_until_within_budget()

    def _drop_oldest_until_within_budget(self) -> None:
        recent = self._recent
        while self._tokens > self.max_tokens and len(recent) > 1:
            self._tokens -= self._cost(recent.popleft())
        if self._tokens > self.max_tokens and self._summary_message is not None:
            self._set_summary(None)

    def _fold_into_summary(self, summarise_fn: SummariseFn) -> None:
        folded = [self._recent.popleft() for _ in range(len(self._recent) - KEEP_RECENT)]
        payload = [{"role": m.role, "content": m.content} for m in folded]
        if self._summary_message is not None:
            payload.insert(0, {"role": "system", "content": self._summary_message.content})
        try:
            text = summarise_fn(payload)
            if not isinstance(text, str):
                raise TypeError(f"summarise_fn returned {type(text).__name__}, not str")
        except Exception:
            logger.warning("summarise_fn failed; trimming by tokens instead", exc_info=True)
            self._recent.extendleft(reversed(folded))
            return
        self._tokens -= sum(self._cost(m) for m in folded)
        self._set_summary(text)

    def _set_summary(self, text: str | None) -> None:
        if self._summary_message is not None:
            self._tokens -= self._cost(self._summary_message)
        self._summary = text
        if text is None:
            self._summary_message = None
            return
        content = SUMMARY_PREFIX + text
        self._summary_message = Message("system", content, token_count=len(self._encode(content)))
        self._tokens += self._cost(self._summary_message)


def select_recent(
    costs_newest_first: Iterable[int],
    budget: int,
    max_messages: int | None = None,
    *,
    keep_newest: bool = True,
) -> int:
    """How many of the newest messages fit in ``budget`` tokens (and ``max_messages``).

    The database-backed context engine uses this with stored per-message costs, reading
    newest-first and stopping at the first message that no longer fits, so a turn costs
    O(window), never O(history). With ``keep_newest`` the newest message always counts, as in
    ``ConversationMemory``.
    """
    used = 0
    kept = 0
    for cost in costs_newest_first:
        if max_messages is not None and kept >= max_messages:
            break
        if used + cost > budget and (kept or not keep_newest):
            break
        used += cost
        kept += 1
    return kept
