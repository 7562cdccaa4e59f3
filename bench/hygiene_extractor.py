"""The light extractor's cost per user message: facts only (before issue 35.5) against facts,
decisions and action items (``memory.extraction.extract_turn``). It runs after the reply,
off its first token.

    env -u DATABASE_URL PYTHONPATH=. .venv/bin/python -m bench.hygiene_extractor
"""

from __future__ import annotations

import datetime
import os
import time

TODAY = datetime.date(2026, 1, 1)
TEXTS = [
    "Hi! My name is Alice, I live in Lyon and my daughter's name is Ada. I work as a nurse.",
    "We decided to go to Porto in August. I need to fix the fence by Friday.",
    "Can you explain how photosynthesis works in simple terms, with an example from my garden?",
    ("Here is a longer message about my week. " * 20) + "I will call the plumber tomorrow.",
]
ROUNDS = 300


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")
    import django

    django.setup()
    from memory.extraction import extract_facts_only, extract_turn

    messages = [[{"role": "user", "content": text}] for text in TEXTS]
    for extractor in (extract_facts_only, extract_turn):
        start = time.perf_counter()
        for _ in range(ROUNDS):
            for message in messages:
                extractor(message, today=TODAY)
        per = (time.perf_counter() - start) / (ROUNDS * len(messages)) * 1e3
        print(f"{extractor.__name__}: {per:.2f} ms per message")


if __name__ == "__main__":
    main()
