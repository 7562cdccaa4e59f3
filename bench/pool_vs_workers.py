"""Benchmark: the set-up process pool against more uvicorn workers (issue 36, item 3).

Runs ``bench/stream.py`` under uvicorn on the Redis channel layer in three shapes, alternating
them ``--repeats`` times in one run so that the machine's noise hits them alike:

* ``pool``: 1 worker with its set-up process (``SETUP_PROCESSES=1``, main before the pool's
  removal; on a tree without ``chat.setup_workers`` the variable is ignored);
* ``1 worker``: 1 worker, set-ups in the server's threads (``SETUP_PROCESSES=0``);
* ``2 workers``: 2 workers, set-ups in their threads.

Each stream run measures its own bare relay (same server, same workers) and the direct client
beside the app. Reported per shape and level, the median over repeats of: the app's TTFT p50,
the app's TTFT p50 less the relay's, the delivered rate p50 (share of the upstream's), the CPU
per relayed chunk against the relay's; and each shape's figures as a ratio to the first's.

    .venv/bin/python bench/pool_vs_workers.py --redis-url redis://127.0.0.1:6379/7
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import percentile  # noqa: E402

ATTEMPTS = 3
SHAPES = {  # name: (uvicorn workers, SETUP_PROCESSES)
    "pool": (1, "1"),
    "1 worker": (1, "0"),
    "2 workers": (2, "0"),
}


def run_stream(shape: str, args, out: Path) -> dict:
    workers, processes = SHAPES[shape]
    command = [
        sys.executable,
        str(ROOT / "bench" / "stream.py"),
        "--server",
        "uvicorn",
        "--workers",
        str(workers),
        "--redis-url",
        args.redis_url,
        "--chats",
        args.chats,
        "--rounds",
        str(args.rounds),
        "--turns",
        str(args.turns),
        "--min-samples",
        str(args.min_samples),
        "--json",
        str(out),
    ]
    env = {**os.environ, "SETUP_PROCESSES": processes}
    for _attempt in range(ATTEMPTS):  # a loaded host may not start a server in time
        done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
        if out.exists():
            break
        print(f"{shape}: stream.py failed, again\n{done.stderr[-1500:]}", file=sys.stderr)
    else:
        raise RuntimeError(f"{shape}: stream.py failed {ATTEMPTS} times")
    result = json.loads(out.read_text())
    result["problems"] = [p for level in result["levels"] for p in level["problems"]]
    return result


def figures(level: dict) -> dict[str, float | None]:
    """One level of one stream run: the figures compared."""

    def all_of(side: str, key: str) -> list[float]:
        return [v for r in level["rounds"] for v in r[side][key] if v is not None]

    app, relay = all_of("app", "ttft_ms"), all_of("relay", "ttft_ms")
    direct_rate = statistics.median(all_of("direct", "rate"))
    cpu = level["cpu_seconds"]["server"]
    app_p50, relay_p50 = percentile(app, 50), percentile(relay, 50)
    shares = [r / direct_rate for r in all_of("app", "rate")]
    return {
        "app_ttft": app_p50,
        "app_ttft_p95": percentile(app, 95),
        "over_relay": app_p50 - relay_p50
        if app_p50 is not None and relay_p50 is not None
        else None,
        "delivered": percentile(shares, 50),
        "cpu_ratio": cpu["app"] / cpu["relay"] if cpu["relay"] else None,
        "load": statistics.fmean(level["load"]) if level["load"] else None,
    }


def median(values: list[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.median(kept) if kept else None


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _ratio(row: dict, base: dict, key: str) -> str:
    a, b = row[key], base.get(key)
    return f"{a / b:.2f}x" if a is not None and b else "—"


def report(runs: dict[str, list[dict]], args, seconds: float) -> str:
    shapes = list(runs)
    levels = [int(c) for c in args.chats.split(",")]
    lines = [
        f"`bench/pool_vs_workers.py --chats {args.chats} --repeats {args.repeats} --rounds"
        f" {args.rounds} --turns {args.turns} --min-samples {args.min_samples}`"
        f" ({seconds / 60:.0f} min, uvicorn, Redis channel layer, SQLite): medians over"
        f" {args.repeats} alternating runs; ratios to `{shapes[0]}`.",
        "",
        "| chats | shape | app TTFT p50 ms | ratio | app - relay p50 ms | p95 ms"
        " | delivered p50 | ratio | CPU per chunk / relay's | runs' app - relay ms | load |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for index, chats in enumerate(levels):
        base: dict[str, float | None] = {}
        for shape in shapes:
            per_run = [figures(run["levels"][index]) for run in runs[shape]]
            row = {key: median([f[key] for f in per_run]) for key in per_run[0]}
            base = base or row
            spread = ", ".join(_ms(f["over_relay"]) for f in per_run)
            delivered = "—" if row["delivered"] is None else f"{row['delivered'] * 100:.1f} %"
            cpu = "—" if row["cpu_ratio"] is None else f"{row['cpu_ratio']:.2f}x"
            lines.append(
                f"| {chats} | {shape} | {_ms(row['app_ttft'])} | {_ratio(row, base, 'app_ttft')}"
                f" | {_ms(row['over_relay'])} | {_ms(row['app_ttft_p95'])} | {delivered}"
                f" | {_ratio(row, base, 'delivered')} | {cpu} | {spread} | {_ms(row['load'])} |"
            )
    problems = [p for shape in shapes for run in runs[shape] for p in run["problems"]]
    lines += [
        "",
        "Problems: "
        + ("; ".join(problems) if problems else "none (every reply exact, stored once)."),
    ]
    return "\n".join(lines)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--redis-url", required=True, help="e.g. redis://127.0.0.1:6379/15")
    parser.add_argument("--chats", default="10,50")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each shape, alternating")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--min-samples", type=int, default=24)
    parser.add_argument(
        "--shapes", default=",".join(SHAPES), help=f"a subset of: {', '.join(SHAPES)}"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write every run's figures")
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    shapes = args.shapes.split(",")
    runs: dict[str, list[dict]] = {shape: [] for shape in shapes}
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="pool-vs-workers-") as tmp:
        for repeat in range(args.repeats):
            order = shapes[repeat % len(shapes) :] + shapes[: repeat % len(shapes)]
            for shape in order:
                if args.verbose:
                    print(f"repeat {repeat + 1}: {shape}", file=sys.stderr, flush=True)
                out = Path(tmp) / f"{repeat}-{shape.replace(' ', '-')}.json"
                runs[shape].append(run_stream(shape, args, out))
    print(report(runs, args, time.perf_counter() - began))
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2) + "\n", encoding="utf-8")
    return 0 if not any(run["problems"] for r in runs.values() for run in r) else 1


if __name__ == "__main__":
    raise SystemExit(main())
