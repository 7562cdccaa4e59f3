"""Benchmark of profiles.style.analyse: microseconds per user message.

    .venv/bin/python bench/style.py [--messages 600] [--rounds 7] [--seed 7]

The corpus is deterministic: hand-written user messages in the styles the analyser tells apart
(casual chat with emoji, formal letters, technical questions with identifiers and code, pasted
tracebacks, long multi-paragraph requests, other languages), plus longer messages made by joining
them, for a spread of 2 to about 400 words. Each message is analysed ``rounds`` times in batches;
a message's time is the median of its batches. The script prints the median, p90, p99 and
maximum of those per-message times, in microseconds, by length bucket and overall, with the
Python version. No Django needed (the analyser imports none).
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.data import load_json
from profiles.style import analyse

BASE_MESSAGES = list(load_json("style_messages.json"))  # bench/data/style_messages.json


def build_corpus(size: int, seed: int) -> list[str]:
    """``size`` messages: the base messages, then joins of 2-6 of them (longer messages)."""
    rng = random.Random(seed)
    corpus = list(BASE_MESSAGES)
    while len(corpus) < size:
        parts = rng.sample(BASE_MESSAGES, rng.randint(2, 6))
        corpus.append(("\n\n" if rng.random() < 0.5 else " ").join(parts))
    return corpus[:size]


def time_message(text: str, rounds: int, batch: int) -> float:
    """Median microseconds per call of ``analyse(text)`` over ``rounds`` batches."""
    samples = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(batch):
            analyse(text)
        samples.append((time.perf_counter_ns() - start) / batch / 1000)
    return statistics.median(samples)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    corpus = build_corpus(args.messages, args.seed)
    for text in corpus[:50]:  # warm up
        analyse(text)
    times = [(len(text.split()), time_message(text, args.rounds, args.batch)) for text in corpus]

    print(
        f"profiles.style.analyse: {len(corpus)} messages, {args.rounds} rounds x {args.batch} "
        f"calls (Python {platform.python_version()}, {platform.machine()})"
    )
    print(f"{'words':>10} {'messages':>9} {'median µs':>10} {'p90 µs':>8} {'max µs':>8}")
    buckets = [(0, 20), (21, 60), (61, 150), (151, 10**9)]
    for low, high in buckets:
        chosen = [t for words, t in times if low <= words <= high]
        if not chosen:
            continue
        label = f"{low}-{high}" if high < 10**9 else f"{low}+"
        print(
            f"{label:>10} {len(chosen):>9} {statistics.median(chosen):>10.1f} "
            f"{percentile(chosen, 0.9):>8.1f} {max(chosen):>8.1f}"
        )
    every = [t for _, t in times]
    print(
        f"{'all':>10} {len(every):>9} {statistics.median(every):>10.1f} "
        f"{percentile(every, 0.9):>8.1f} {max(every):>8.1f}"
    )
    typical = [t for words, t in times if words <= 60]
    print(
        f"typical message (<= 60 words): median {statistics.median(typical):.1f} µs, "
        f"p99 {percentile(typical, 0.99):.1f} µs (target <= 50 µs)"
    )


if __name__ == "__main__":
    main()
