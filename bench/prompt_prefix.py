"""Benchmark: how much of each turn's request a server's prompt cache can reuse (issue 42).

    .venv/bin/python bench/prompt_prefix.py                  # 25 turns, budgets 4096 and 1200
    .venv/bin/python bench/prompt_prefix.py --turns 40 --budget 8000

A user with six facts in one conversation asks about them, a turn at a time, in another; each
turn's request is built by the app (``memory.context.build``, the memory block recalled for
the question) and shaped for a strict template (``llm.messages``, MESSAGE_SHAPE=single). A
server's prompt cache (llama.cpp's slot cache, OpenAI's cached input tokens) reuses the part of
a request that begins the same as the previous one: the report gives, per order, the share of
the request's tokens (tiktoken's, of the rendered messages) in that common prefix, median and
lowest over turns 10 to the end. "memory first" is the order before issue 42 (the memory block
among the leading system blocks), rebuilt from the same request by moving that block back;
"memory last" is the order sent. After each turn the user's message is learned from, as the
after-turn batch does, so the learned style's lines change between turns as in a real
conversation. No model server is involved: it measures the prompts, not a server's time to
first token.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FACTS = [
    "My sister Ana lives in Porto.",
    "My dog Rex loves the beach.",
    "I work at Acme as a nurse.",
    "My favourite food is ramen.",
    "I am learning Portuguese.",
    "My car is a blue Fiat.",
]
QUESTIONS = [
    "Where does Ana live?",
    "What does Rex love?",
    "Where do I work?",
    "What food do I like?",
    "Which language am I learning?",
    "What car do I drive?",
]
REPLY = "Here is what I remember about that, in a few sentences of reply text. " * 3
QUICK_REPLY_SECONDS = 2.0  # the gap before each question (the learned pace's evidence)


def setup(path: str) -> None:
    os.environ["DATABASE_URL"] = "sqlite:///" + path
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings_bench")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def rendered(messages) -> str:
    from llm.messages import shape_messages

    shaped = shape_messages(messages, shape="single")
    return "".join(f"<{m['role']}>{m['content']}</{m['role']}>" for m in shaped)


def memory_first(messages: list[dict]) -> list[dict]:
    """The same request in the old order: the memory block after the leading system blocks."""
    out = list(messages)
    at = next((i for i, m in enumerate(out) if "<memory>" in m["content"]), None)
    if at is None:
        return out
    block = dict(out.pop(at))  # a plain system block there (not AfterTurns)
    leading = next((i for i, m in enumerate(out) if m["role"] != "system"), len(out))
    out.insert(leading, block)
    return out


def common_prefix(a: str, b: str) -> str:
    return a[
        : next(
            (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
        )
    ]


def run(turns: int, budget: int, n: int) -> dict[str, list[float]]:
    from django.contrib.auth import get_user_model

    from chat.services import conversation_create, message_create
    from contextwindow.tokens import count_tokens
    from memory.context import build
    from profiles.services import profile_observe_message

    user = get_user_model().objects.create_user(f"prefix{n}")
    about = conversation_create(user=user, title="About me")
    for fact in FACTS:
        message_create(conversation=about, role="user", content=fact)
    chat = conversation_create(user=user, title="Chat", context_budget=budget)
    shares: dict[str, list[float]] = {"memory first": [], "memory last": []}
    previous = dict.fromkeys(shares, "")
    for turn in range(turns):
        question = f"{QUESTIONS[turn % len(QUESTIONS)]} (turn {turn + 1})"
        stored = message_create(conversation=chat, role="user", content=question)
        built = build(conversation=chat, user_text=question, user_message=stored)
        for order, messages in (
            ("memory first", memory_first(built.messages)),
            ("memory last", built.messages),
        ):
            text = rendered(messages)
            reused = common_prefix(previous[order], text)
            shares[order].append(count_tokens(reused, "gpt-4o") / count_tokens(text, "gpt-4o"))
            previous[order] = text
        # Stored with its request's report, as the chat does: the next request's window keeps
        # the start this one had (memory.context._History's anchor).
        message_create(
            conversation=chat, role="assistant", content=REPLY, context_report=built.report
        )
        # The after-turn batch learns the user's style from the message (a quick exchange):
        # its lines come and go between turns, as in a real conversation.
        profile_observe_message(user=user, text=question, gap_seconds=QUICK_REPLY_SECONDS)
    return shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=25)
    parser.add_argument("--budget", type=int, action="append")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        setup(str(Path(directory) / "bench.sqlite3"))
        print("| budget | order | reused share, median (turns 10+) | lowest |")
        print("|---|---|---|---|")
        for n, budget in enumerate(args.budget or [4096, 1200]):
            for order, shares in run(args.turns, budget, n).items():
                late = shares[9:]
                print(f"| {budget} | {order} | {statistics.median(late):.2f} | {min(late):.2f} |")


if __name__ == "__main__":
    main()
