"""Benchmark of profiles.domains: how often the learned level is right, and what it costs.

    .venv/bin/python bench/domains.py [--samples 300] [--seed 7] [--after 5]

Accuracy: the held set ``bench/data/domain_levels.json`` (10 messages per domain and level,
3 domains x 3 levels, written without self-descriptions; see its ``_about``). For each
domain and level, ``samples`` random sequences of ``after`` different messages are learned
from a fresh start with ``estimate`` and ``level_for`` exactly as ``profiles.expertise``
stores them; the level after the last message is compared with the truth. Also: the rate
after 3 and 10 messages, and whether the message's domain was recognised at all.

Speed: ``analyse_domains`` per message, microseconds (median, p99 over the held set, each
message analysed ``rounds`` times). The database side of the after-turn learning is measured
by ``bench/domains_db.py``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.data import load_json
from profiles.domains import LEVELS, analyse_domains, estimate, level_for

HELD = {k: v for k, v in load_json("domain_levels.json").items() if not k.startswith("_")}


def learned_level(slug: str, messages: list[str]) -> str:
    score, evidence, level = 0.5, 0, ""
    for text in messages:
        found = analyse_domains(text).get(slug)
        if found is None or found.reading is None:
            continue
        score = estimate(score, evidence, found.reading, found.weight)
        evidence += found.weight
        level = level_for(score, evidence, level)
    return level


def accuracy(after: int, samples: int, rng: random.Random) -> dict[tuple[str, str], float]:
    rates = {}
    for slug, levels in HELD.items():
        for level in LEVELS:
            messages = levels[level]
            right = sum(
                learned_level(slug, rng.sample(messages, min(after, len(messages)))) == level
                for _ in range(samples)
            )
            rates[slug, level] = right / samples
    return rates


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--after", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    recognised = sum(
        slug in analyse_domains(text) for slug, levels in HELD.items()
        for messages in levels.values() for text in messages
    )  # fmt: skip
    total = sum(len(m) for levels in HELD.values() for m in levels.values())
    print(f"domain recognised: {recognised}/{total} messages")
    for after in sorted({3, args.after, 10}):
        rates = accuracy(after, args.samples, rng)
        overall = statistics.fmean(rates.values())
        cells = "  ".join(f"{s}/{lv[:3]} {r:.0%}" for (s, lv), r in rates.items())
        print(f"after {after:2} messages: {overall:.1%} right  ({cells})")

    texts = [t for levels in HELD.values() for m in levels.values() for t in m]
    times = []
    for text in texts:
        start = time.perf_counter()
        for _ in range(args.rounds):
            analyse_domains(text)
        times.append((time.perf_counter() - start) / args.rounds * 1e6)
    times.sort()
    print(
        f"analyse_domains: median {statistics.median(times):.0f} µs, "
        f"p99 {times[int(len(times) * 0.99) - 1]:.0f} µs, max {times[-1]:.0f} µs "
        f"per message (Python {sys.version.split()[0]})"
    )


if __name__ == "__main__":
    main()
