"""Benchmark: what ``ConversationMemory.add`` costs next to tokenising the message once.

For each token budget (4k, 128k, 1M) and conversation length (1k, 10k, 100k messages) it times,
over the same deterministic chat messages and in the same run:

* floor      -- ``len(enc.encode_ordinary(text))`` once per message: the least any exact
                token-budget memory can do per add;
* ours       -- ``contextwindow.window.ConversationMemory.add`` (token_limit strategy);
* seed       -- the original seed class, executed at run time from ``../shared/seeds/`` (never
                copied into the project), ``tiktoken.encoding_for_model`` pointed at the
                encodings shipped in ``contextwindow/encodings`` so it runs offline;
* langchain  -- ``langchain_core.messages.trim_messages(strategy="last")`` called once per
                turn on the full history, as LangChain applications trim (optional).

Implementations are interleaved within each round (in rotating order) so machine noise hits
them alike; each figure is the median over rounds. The seed (O(window) per add) and LangChain
(O(history) per turn) are sampled at large sizes: see ``--help`` and bench/README.md.

    .venv/bin/python bench/window.py            # the full run, a few minutes
    .venv/bin/python bench/window.py --quick    # a smaller run, well under a minute
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.cli import int_list  # noqa: E402
from bench.corpus import chat_messages  # noqa: E402
from bench.data import load_json  # noqa: E402
from contextwindow.tokens import encoding_for_model, message_overhead  # noqa: E402
from contextwindow.window import ConversationMemory, MemoryStrategy  # noqa: E402

MODEL = "gpt-4o"
SYSTEM_PROMPT = load_json("prompts.json")["system"]  # bench/data/prompts.json
BUDGETS = (4_000, 128_000, 1_000_000)
COUNTS = (1_000, 10_000, 100_000)
TARGET_BUDGET = 1_000_000
TARGET_RATIO = 1.3  # ours/floor at TARGET_BUDGET
SEEDS_DIR = ROOT.parent / "shared" / "seeds"

# Sampling of the slow baselines (per cell and round); full runs below these sizes.
SEED_FULL_UP_TO = 10_000  # messages; above, SEED_BLOCKS blocks of SEED_BLOCK turns
SEED_BLOCKS = 10
SEED_BLOCK = 100
LANGCHAIN_TURNS = {1_000: 20, 10_000: 10, 100_000: 3}  # sampled single turns; else 3

Pairs = list[tuple[str, str]]
perf_ns = time.perf_counter_ns


# -- the seed, loaded at run time ----------------------------------------------------------


def extract_seed_code(text: str) -> str:
    """The Python code of a seed document: after the "pythonCopy" line, before "# Usage"."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "pythonCopy") + 1
    except StopIteration:
        raise ValueError('no "pythonCopy" line') from None
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("# Usage")), None)
    return "\n".join(lines[start:end])


def load_seed(path: Path | None = None) -> tuple[types.ModuleType | None, str]:
    """The seed module executed from its document, or None and the reason it is absent."""
    if path is None:
        if not SEEDS_DIR.is_dir():
            return None, f"{SEEDS_DIR} is absent"
        candidates = sorted(SEEDS_DIR.glob("*.txt"))
    elif not path.is_file():
        return None, f"{path} is absent"
    else:
        candidates = [path]
    for candidate in candidates:
        text = candidate.read_text(encoding="utf-8")
        if "class ConversationMemory" not in text:
            continue
        try:
            code = extract_seed_code(text)
        except ValueError as exc:
            return None, f"{candidate}: {exc}"
        module = types.ModuleType("seed_window")
        module.__file__ = str(candidate)
        sys.modules[module.__name__] = module  # dataclasses look their module up
        exec(compile(code, str(candidate), "exec"), module.__dict__)  # noqa: S102
        # Offline: the seed's tiktoken.encoding_for_model would download the encoding.
        module.tiktoken = types.SimpleNamespace(encoding_for_model=encoding_for_model)
        return module, os.path.relpath(candidate, ROOT)
    return None, f"no seed with a ConversationMemory class in {SEEDS_DIR}"


# -- LangChain, optional -------------------------------------------------------------------


@dataclass
class LangChain:
    trim_messages: Callable
    system: object
    human: type
    ai: type
    version: str
    counter: Callable = field(repr=False)


def load_langchain(encoding) -> tuple[LangChain | None, str]:
    try:
        from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, trim_messages
    except ImportError:
        return None, "langchain-core is not installed (pip install -e '.[dev]')"
    encode = encoding.encode_ordinary
    overhead = {
        "system": message_overhead("system", encoding),
        "human": message_overhead("user", encoding),
        "ai": message_overhead("assistant", encoding),
    }

    def count(messages):  # a list counter, as in LangChain's "trim messages" how-to
        return sum(overhead[m.type] + len(encode(m.content)) for m in messages)

    lc = LangChain(
        trim_messages=trim_messages,
        system=SystemMessage(content=SYSTEM_PROMPT),
        human=HumanMessage,
        ai=AIMessage,
        version=metadata.version("langchain-core"),
        counter=count,
    )
    return lc, f"langchain-core {lc.version}"


def lc_message(lc: LangChain, role: str, text: str):
    return (lc.human if role == "user" else lc.ai)(content=text)


def lc_trim(lc: LangChain, history: list, budget: int) -> list:
    return lc.trim_messages(
        history,
        max_tokens=budget,
        token_counter=lc.counter,
        strategy="last",
        include_system=True,
    )


# -- timers: each returns nanoseconds per add (or per turn) ---------------------------------


def time_floor(pairs: Pairs, encode) -> float:
    gc.collect()
    start = perf_ns()
    for _role, text in pairs:
        len(encode(text))
    return (perf_ns() - start) / len(pairs)


def new_ours(budget: int) -> ConversationMemory:
    return ConversationMemory(
        system_prompt=SYSTEM_PROMPT,
        strategy=MemoryStrategy.TOKEN_LIMIT,
        max_tokens=budget,
        model=MODEL,
    )


def time_ours(pairs: Pairs, budget: int) -> float:
    memory = new_ours(budget)
    add = memory.add
    gc.collect()
    start = perf_ns()
    for role, text in pairs:
        add(role, text)
    return (perf_ns() - start) / len(pairs)


def new_seed(seed, budget: int):
    return seed.ConversationMemory(
        system_prompt=SYSTEM_PROMPT,
        strategy=seed.MemoryStrategy.TOKEN_LIMIT,
        max_tokens=budget,
        model=MODEL,
    )


def seed_at(seed, budget: int, pairs: Pairs, tokens: list[int], turn: int):
    """A seed memory in the state its own ``add`` leaves after ``turn`` messages, built directly.

    The seed's token_limit keeps the longest suffix whose content tokens, with the system
    prompt's, fit the budget (it counts no chat overhead).
    """
    memory = new_seed(seed, budget)
    used = sum(m.token_count for m in memory._messages)
    first = turn
    while first > 0 and used + tokens[first - 1] <= budget:
        first -= 1
        used += tokens[first]
    memory._messages.extend(
        seed.Message(role=role, content=text, token_count=tokens[i])
        for i, (role, text) in enumerate(pairs[first:turn], start=first)
    )
    return memory


def sample_starts(n: int, blocks: int, block: int) -> list[tuple[int, int]]:
    """(start, length) of ``blocks`` blocks centred on evenly spaced turns (midpoint rule)."""
    if blocks * block >= n:
        return [(0, n)]
    starts = []
    for k in range(blocks):
        start = int((k + 0.5) * n / blocks) - block // 2
        starts.append((min(max(start, 0), n - block), block))
    return starts


def time_seed(seed, pairs: Pairs, tokens: list[int], budget: int, plan) -> float:
    elapsed = turns = 0
    for start, length in plan:
        if start == 0:
            memory = new_seed(seed, budget)
        else:
            memory = seed_at(seed, budget, pairs, tokens, start)
        add = memory.add
        block = pairs[start : start + length]
        gc.collect()
        begin = perf_ns()
        for role, text in block:
            add(role, text)
        elapsed += perf_ns() - begin
        turns += length
    return elapsed / turns


def time_langchain(lc: LangChain, pairs: Pairs, lc_history: list, budget: int, plan) -> float:
    elapsed = turns = 0
    trim = lc.trim_messages
    counter = lc.counter
    for start, length in plan:
        history = [lc.system, *lc_history[:start]]
        block = pairs[start : start + length]
        gc.collect()
        begin = perf_ns()
        for role, text in block:
            history.append((lc.human if role == "user" else lc.ai)(content=text))
            trim(
                history,
                max_tokens=budget,
                token_counter=counter,
                strategy="last",
                include_system=True,
            )
        elapsed += perf_ns() - begin
        turns += length
    return elapsed / turns


# -- checks: the implementations keep what they claim to ------------------------------------


def check_equivalence(pairs: Pairs, tokens: list[int], seed, lc: LangChain | None) -> list[str]:
    """Ours and LangChain keep the same window; the seed's fast-forward matches its own add."""
    notes = []
    for budget in (4_000, 20_000):
        memory = new_ours(budget)
        history = [] if lc is None else [lc.system]
        for role, text in pairs:
            memory.add(role, text)
            if lc is not None:
                history.append(lc_message(lc, role, text))
        if lc is not None:
            roles = {"system": "system", "human": "user", "ai": "assistant"}
            kept = [
                {"role": roles[m.type], "content": m.content} for m in lc_trim(lc, history, budget)
            ]
            if kept != memory.messages:
                raise AssertionError(f"ours and langchain keep different windows at {budget}")
        if seed is not None:
            real = new_seed(seed, budget)
            for role, text in pairs:
                real.add(role, text)
            built = seed_at(seed, budget, pairs, tokens, len(pairs))
            if real.messages != built.messages:
                raise AssertionError(f"seed fast-forward differs from the seed at {budget}")
    if seed is None and lc is None:
        return ["no baseline to check against"]
    notes.append(
        f"checked on {len(pairs)} messages at 4k and 20k budgets: "
        + "; ".join(
            [
                *(["ours and langchain keep the same window"] if lc else []),
                *(["the seed's fast-forward state equals its own add's"] if seed else []),
            ]
        )
    )
    return notes


# -- the run -------------------------------------------------------------------------------


@dataclass
class Cell:
    budget: int
    n: int
    figures: dict[str, list[float]] = field(default_factory=dict)
    sampled: dict[str, str] = field(default_factory=dict)

    def add(self, name: str, ns: float) -> None:
        self.figures.setdefault(name, []).append(ns)

    def median(self, name: str) -> float | None:
        values = self.figures.get(name)
        return statistics.median(values) if values else None

    def ratio(self, name: str) -> float | None:
        """Median over rounds of this round's figure over the same round's floor."""
        values, floors = self.figures.get(name), self.figures.get("floor")
        if not values or not floors:
            return None
        return statistics.median(v / f for v, f in zip(values, floors, strict=True))


def run(args) -> dict:
    began = time.perf_counter()
    encoding = encoding_for_model(MODEL)
    encode = encoding.encode_ordinary
    count = max(args.counts)
    pairs_all = chat_messages(count, lambda text: len(encode(text)))
    tokens_all = [len(encode(text)) for _role, text in pairs_all]

    seed, seed_note = (None, "disabled (--no-seed)") if args.no_seed else load_seed(args.seed_file)
    lc, lc_note = (
        (None, "disabled (--no-langchain)") if args.no_langchain else load_langchain(encoding)
    )
    lc_history = [lc_message(lc, r, t) for r, t in pairs_all] if lc else []

    checks = check_equivalence(pairs_all[:600], tokens_all[:600], seed, lc)
    # Everything built so far lives for the whole run: keep the collector off it.
    gc.collect()
    gc.freeze()

    cells = [Cell(b, n) for n in args.counts for b in args.budgets]
    plans: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for n in args.counts:
        plans["seed", n] = (
            [(0, n)]
            if n <= args.seed_full_up_to
            else sample_starts(n, args.seed_blocks, args.seed_block)
        )
        turns = args.langchain_turns or LANGCHAIN_TURNS.get(n, 3)
        plans["langchain", n] = sample_starts(n, turns, 1)
    present = [name for name, there in (("seed", seed), ("langchain", lc)) if there]
    for cell in cells:
        for name in present:
            plan = plans[name, cell.n]
            if plan != [(0, cell.n)]:
                blocks, length = len(plan), plan[0][1]
                cell.sampled[name] = (
                    f"{blocks} turns of {cell.n:,}"
                    if length == 1
                    else f"{blocks} blocks of {length} turns ({blocks * length:,} of {cell.n:,})"
                )

    # Warm up every implementation once (imports, caches, first-call paths).
    warm = pairs_all[:200]
    time_floor(warm, encode)
    time_ours(warm, 4_000)
    if seed:
        time_seed(seed, warm, tokens_all, 4_000, [(0, len(warm))])
    if lc:
        time_langchain(lc, warm, lc_history, 4_000, [(0, 20)])

    runners: dict[str, Callable[[Cell], float]] = {
        "floor": lambda c: time_floor(pairs_all[: c.n], encode),
        "ours": lambda c: time_ours(pairs_all[: c.n], c.budget),
    }
    if seed:
        runners["seed"] = lambda c: time_seed(
            seed, pairs_all[: c.n], tokens_all, c.budget, plans["seed", c.n]
        )
    if lc:
        runners["langchain"] = lambda c: time_langchain(
            lc, pairs_all[: c.n], lc_history, c.budget, plans["langchain", c.n]
        )
    names = list(runners)
    for round_ in range(args.rounds):
        for cell in cells:
            shift = (round_ + cells.index(cell)) % len(names)
            for name in names[shift:] + names[:shift]:
                cell.add(name, runners[name](cell))
            if args.verbose:
                figures = ", ".join(f"{k} {v[-1]:,.0f}" for k, v in cell.figures.items())
                print(
                    f"round {round_ + 1} budget {cell.budget:,} n {cell.n:,}: {figures}",
                    file=sys.stderr,
                    flush=True,
                )
    gc.unfreeze()

    return {
        "cells": cells,
        "rounds": args.rounds,
        "seconds": time.perf_counter() - began,
        "seed": seed_note if seed else f"skipped: {seed_note}",
        "langchain": lc_note if lc else f"skipped: {lc_note}",
        "checks": checks,
        "corpus": {
            "messages": count,
            "tokens": sum(tokens_all),
            "user": _spread(
                t for (r, _), t in zip(pairs_all, tokens_all, strict=True) if r == "user"
            ),
            "assistant": _spread(
                t for (r, _), t in zip(pairs_all, tokens_all, strict=True) if r == "assistant"
            ),
        },
    }


def _spread(values) -> str:
    values = sorted(values)
    return f"{values[0]}-{values[-1]} tokens (median {statistics.median(values):.0f})"


# -- the report ----------------------------------------------------------------------------


def _ns(value: float | None, mark: str = "") -> str:
    return "—" if value is None else f"{value:,.0f}{mark}"


def _x(value: float | None) -> str:
    return "—" if value is None else f"{value:,.2f}x"


def _budget(budget: int) -> str:
    return f"{budget // 1_000_000}M" if budget % 1_000_000 == 0 else f"{budget // 1000}k"


def report(result: dict) -> str:
    cells: list[Cell] = result["cells"]
    corpus = result["corpus"]
    lines = [
        "## window: per-add cost of `ConversationMemory.add` (token_limit)",
        "",
        f"- machine: {platform.machine()}, {_cpus()} CPUs, Python {platform.python_version()},"
        f" {platform.system()} {platform.release()}; tiktoken {metadata.version('tiktoken')}",
        f"- corpus: {corpus['messages']:,} alternating messages, {corpus['tokens']:,} tokens;"
        f" user {corpus['user']}, assistant {corpus['assistant']}",
        f"- seed: {result['seed']}",
        f"- langchain: {result['langchain']}",
        f"- {'; '.join(result['checks'])}",
        f"- {result['rounds']} round(s), medians; run took {result['seconds']:.0f} s",
        "",
        "| budget | messages | floor ns/add | ours ns/add | ours/floor | seed ns/add | seed/floor"
        " | langchain ns/turn | langchain/floor |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for cell in cells:
        seed_mark = " †" if "seed" in cell.sampled else ""
        lc_mark = " ‡" if "langchain" in cell.sampled else ""
        lines.append(
            f"| {_budget(cell.budget)} | {cell.n:,} | {_ns(cell.median('floor'))}"
            f" | {_ns(cell.median('ours'))} | {_x(cell.ratio('ours'))}"
            f" | {_ns(cell.median('seed'), seed_mark)} | {_x(cell.ratio('seed'))}"
            f" | {_ns(cell.median('langchain'), lc_mark)} | {_x(cell.ratio('langchain'))} |"
        )
    for name, mark in (("seed", "†"), ("langchain", "‡")):
        hows = list(dict.fromkeys(c.sampled[name] for c in cells if name in c.sampled))
        if hows:
            how = "; ".join(hows)
            lines += ["", f"{mark} {name} sampled per cell and round (midpoint rule): {how}."]
    target = [c for c in cells if c.budget == TARGET_BUDGET and c.ratio("ours") is not None]
    if target:
        worst = max(c.ratio("ours") for c in target)
        verdict = "met" if worst <= TARGET_RATIO else "NOT met"
        lines += [
            "",
            f"Target ours/floor ≤ {TARGET_RATIO}x at a {_budget(TARGET_BUDGET)} budget: {verdict}"
            f" (worst {worst:.2f}x over {', '.join(f'{c.n:,}' for c in target)} messages).",
        ]
    return "\n".join(lines)


def _cpus() -> str:
    try:
        return str(len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return str(os.cpu_count())


def parse_args(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="1k and 10k messages, 3 rounds: well under a minute"
    )
    parser.add_argument("--budgets", type=int_list, default=BUDGETS, help="e.g. 4k,128k,1m")
    parser.add_argument("--counts", type=int_list, default=None, help="e.g. 1k,10k,100k")
    parser.add_argument("--rounds", type=int, default=None, help="default 5 (3 with --quick)")
    parser.add_argument("--seed-file", type=Path, default=None, help="the seed document")
    parser.add_argument("--no-seed", action="store_true")
    parser.add_argument("--no-langchain", action="store_true")
    parser.add_argument(
        "--seed-full-up-to",
        type=int,
        default=SEED_FULL_UP_TO,
        help=f"time every seed add up to this many messages (default {SEED_FULL_UP_TO:,})",
    )
    parser.add_argument("--seed-blocks", type=int, default=SEED_BLOCKS)
    parser.add_argument("--seed-block", type=int, default=SEED_BLOCK)
    parser.add_argument(
        "--langchain-turns",
        type=int,
        default=None,
        help="sampled langchain turns per cell and round (default 20/10/3 for 1k/10k/100k)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write raw figures here")
    parser.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    args = parser.parse_args(argv)
    if args.counts is None:
        args.counts = (1_000, 10_000) if args.quick else COUNTS
    if args.rounds is None:
        args.rounds = 3 if args.quick else 5
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    result = run(args)
    print(report(result))
    if args.json:
        raw = {
            **{k: v for k, v in result.items() if k != "cells"},
            "cells": [
                {"budget": c.budget, "messages": c.n, "ns": c.figures, "sampled": c.sampled}
                for c in result["cells"]
            ],
        }
        args.json.write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
