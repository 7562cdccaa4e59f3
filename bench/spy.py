"""A py-spy profile of the app server during a benchmark, read as a CPU budget per turn.

``Profiler(path).start(pids)`` runs ``py-spy record`` (raw collapsed stacks, every thread,
idle threads left out, without pausing the process) on the server until ``stop()``.
``budget(path, cpu_seconds, turns)`` turns the samples into CPU µs per turn: a stack's share of
all samples times the server's measured CPU time over the turns, by the stage of a turn it
belongs to (``STAGES``: the first stage whose marker is in the stack, innermost frame first)
and by function (self and inclusive). py-spy samples at a fixed rate only the threads that are
running, so a share of samples is a share of CPU (the GIL included: a thread waiting for it is
not running).

    .venv/bin/python bench/spy.py PROFILE.txt --cpu-seconds 30 --turns 1250   # re-read one
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

RATE = 200  # samples per second per running thread

# (stage, markers): a sample belongs to the first stage one of whose markers (a function name,
# or "function (module" to be precise) is in its stack, looked for innermost frame first. The
# order matters where stages nest (the reply_end frame is built inside the turn's task).
STAGES: list[tuple[str, tuple[str, ...]]] = [
    ("before: rate limit", ("hit (chat/limits.py",)),
    ("before: store message + placeholder", ("turn_begin (chat/services.py", "turn_retry (")),
    ("before: retrieval (recall_for_turn)", ("recall_for_turn (memory/recall.py",)),
    ("before: context build (rest)", ("build (memory/context.py",)),
    ("before: model request set-up", ("stream (llm/providers.py",)),
    (
        "before: user_message/reply_start frames",
        ("take_turn (chat/turn/drive.py", "_prepared (chat/turn/setup.py"),
    ),
    ("after: store reply", ("reply_finish (chat/services.py",)),
    ("after: reply_end frame (Markdown, report)", ("reply_end (chat/protocol.py",)),
    (
        "after: style learning",
        (
            "profile_observe_message (profiles/services.py",
            "profiles_observe_messages (profiles/services.py",
        ),
    ),
    ("after: light extractor", ("memories_from_turn (",)),
    (
        "after: memory scheduling",
        (
            "conversation_after_turn (memory/services/summaries.py",
            "conversations_after_turn (memory/services/summaries.py",
            "memory_enabled_many (",
            "profiles_get_many (",  # the batch's one profile read: the switch and the style
        ),
    ),
    (
        "after: other",
        (
            "after_turn (chat/turn/gate.py",
            "after_turns (chat/turn/after.py",
            "_store_with_retries (",
        ),
    ),
    ("per chunk: read upstream SSE", ("_deltas (llm/providers.py",)),
    (
        "per chunk: batch + frame + other tabs",
        (
            "add (chat/streaming.py",
            "flush (chat/streaming.py",
            "forward (chat/fanout.py",
            "publish (chat/live.py",
            "_pump (chat/live.py",
            "_drain (chat/fanout.py",
        ),
    ),
    (
        "per turn: task and thread hops",
        (
            "run (chat/turn/reply.py",
            "thread_handler (asgiref",
            "__call__ (asgiref/sync.py",
            "close_old_connections",
        ),
    ),
    (
        "channels: consumer dispatch",
        ("dispatch (channels/", "await_many_dispatch (channels/", "receive (channels/layers.py"),
    ),
    ("server: websocket I/O (daphne/twisted/autobahn)", ("twisted/", "autobahn/", "daphne/")),
    ("server: uvicorn/websockets I/O", ("uvicorn/", "websockets/")),
    ("asyncio event loop (selector, callbacks)", ("asyncio/",)),
]
OTHER = "other"


@dataclass
class Budget:
    samples: int = 0
    turns: int = 0
    cpu_seconds: float = 0.0
    stages: Counter = field(default_factory=Counter)  # stage -> samples
    self_time: Counter = field(default_factory=Counter)  # leaf function -> samples
    inclusive: Counter = field(default_factory=Counter)  # function anywhere -> samples

    def us_per_turn(self, samples: int) -> float:
        if not self.samples or not self.turns:
            return 0.0
        return samples / self.samples * self.cpu_seconds / self.turns * 1e6


def _stage(frames: list[str]) -> str:
    for stage, markers in STAGES:
        for frame in reversed(frames):
            if any(marker in frame for marker in markers):
                return stage
    return OTHER


def budget(path: Path, *, cpu_seconds: float, turns: int) -> Budget:
    result = Budget(turns=turns, cpu_seconds=cpu_seconds)
    for line in Path(path).read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [f for f in stack.split(";") if not f.startswith(("thread (", "process "))]
        if not frames:
            continue
        result.samples += n
        result.stages[_stage(frames)] += n
        result.self_time[frames[-1]] += n
        for frame in set(frames):
            result.inclusive[frame] += n
    return result


def table(result: Budget, top: int = 12) -> list[str]:
    """Markdown: CPU µs per turn by stage, then the top functions by self time."""
    lines = [
        f"{result.samples} samples; {result.cpu_seconds:.1f} s of server CPU over"
        f" {result.turns} turns = {result.cpu_seconds / max(result.turns, 1) * 1e6:,.0f} µs"
        " per turn",
        "",
        "| stage | CPU µs per turn | share |",
        "|---|---:|---:|",
    ]
    order = [stage for stage, _ in STAGES] + [OTHER]
    for stage in sorted(order, key=lambda s: -result.stages[s]):
        if result.stages[stage]:
            lines.append(
                f"| {stage} | {result.us_per_turn(result.stages[stage]):,.0f}"
                f" | {result.stages[stage] / result.samples:.1%} |"
            )
    lines += ["", "| function (self time) | CPU µs per turn | share |", "|---|---:|---:|"]
    for frame, n in result.self_time.most_common(top):
        lines.append(f"| `{frame}` | {result.us_per_turn(n):,.0f} | {n / result.samples:.1%} |")
    return lines


class Profiler:
    """``py-spy record`` on running processes until ``stop()`` (SIGINT makes it write)."""

    def __init__(self, path: Path, rate: int = RATE):
        self.path = Path(path)
        self.rate = rate
        self.processes: list[subprocess.Popen] = []
        self.outputs: list[Path] = []

    @staticmethod
    def available() -> str | None:
        return shutil.which("py-spy") or (
            str(Path(sys.executable).with_name("py-spy"))
            if Path(sys.executable).with_name("py-spy").exists()
            else None
        )

    def start(self, pids: list[int]) -> None:
        spy = self.available()
        if spy is None:
            raise RuntimeError("py-spy is not installed (pip install py-spy)")
        for pid in pids:
            out = self.path.with_suffix(f".{pid}.txt")
            self.outputs.append(out)
            self.processes.append(
                subprocess.Popen(
                    [
                        spy,
                        "record",
                        "--pid",
                        str(pid),
                        "--rate",
                        str(self.rate),
                        "--format",
                        "raw",
                        "--nolineno",
                        "--threads",
                        "--nonblocking",
                        "--output",
                        str(out),
                    ],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
            )

    def stop(self) -> None:
        for process in self.processes:
            process.send_signal(signal.SIGINT)
        for process in self.processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
        # One file for all processes (uvicorn workers): collapsed stacks add up.
        with self.path.open("w") as merged:
            for out in self.outputs:
                if out.exists():
                    merged.write(out.read_text(errors="replace"))
                    out.unlink()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("profile", type=Path, help="py-spy raw output")
    parser.add_argument("--cpu-seconds", type=float, required=True)
    parser.add_argument("--turns", type=int, required=True)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args(argv)
    print(
        "\n".join(
            table(budget(args.profile, cpu_seconds=args.cpu_seconds, turns=args.turns), args.top)
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
