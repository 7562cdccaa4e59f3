"""Benchmark: what the app adds to a streamed reply, next to a bare Channels relay and next to
calling the model directly.

N concurrent chats (1, 10, 50 by default) over real websockets to ``daphne`` running the app
(``DEBUG=false``, SQLite in a temporary directory, the in-memory channel layer), against a fake
OpenAI-compatible upstream in its own process that streams one 100-word reply at a fixed rate
(50 words/s: one SSE event every 20 ms). In the same run, in rotating phases, with the same
client and the same upstream:

* ``direct``: the same number of concurrent streams call the upstream with the
  ``openai.AsyncOpenAI`` client the app itself uses;
* ``relay``: the same number of chats through ``bench/relay.py``, a minimal Channels consumer
  that only calls the model and forwards batched chunks (same ASGI server, no database), in a
  server process of its own beside the app's;
* ``app``: the chats through the app.

Reported per N:

* time to first token (TTFT), p50/p95: direct = request → first content delta; relay and app =
  the ``send`` frame → the first ``chunk`` frame; added = side - direct; the app's added TTFT
  as a ratio to the relay's;
* server CPU per relayed chunk (one upstream SSE event), each server's CPU time over its own
  phases, and the app's as a ratio to the relay's;
* delivered rate: words/s from the first chunk to the last, as a share of the upstream's rate
  measured directly at the same N;
* the app server's resident memory, idle (after one warm-up turn) and peak (``VmHWM``);
* exactness: every reply equals the upstream's text, and the database holds exactly one user
  message and one complete, identical reply per turn.

``--vectors`` gives each user an earlier conversation with stored vectors (local embeddings, as
real users have them by default), so every turn's search embeds its query.

``--profile PATH`` also runs py-spy on the app server during the largest level's measured
rounds and reports a CPU budget per turn by stage (``bench/spy.py``). ``--statements`` times
the app's SQL statements in the server for the largest level, wall time against CPU time
(``bench/statements.py``).

    .venv/bin/python bench/stream.py            # 1, 10 and 50 chats
    .venv/bin/python bench/stream.py --quick    # 1 and 10 chats, about 3 minutes
    .venv/bin/python bench/stream.py --server uvicorn --workers 2 \
        --redis-url redis://127.0.0.1:6379/15 --chats 50,100   # make serve's shape
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.cli import int_list  # noqa: E402
from bench.data import load_json  # noqa: E402
from bench.harness import (  # noqa: E402
    SERVERS,
    AppServer,
    ChatSocket,
    Seat,
    Stream,
    Upstream,
    Workspace,
    cpu_seconds,
    cpus,
    create_seats,
    direct_client,
    direct_stream,
    django_run,
    percentile,
    stored_messages,
)
from bench.spy import Budget, Profiler, budget, table  # noqa: E402
from bench.statements import read as read_statements  # noqa: E402
from bench.statements import table as statements_table  # noqa: E402

CHATS = (1, 10, 50)
TURNS = 5  # sequential turns per chat per round and phase
MIN_SAMPLES = 40  # per level and side (12 with --quick): few chats get more turns
ROUNDS = 5
RATE = 50.0  # words (SSE events) per second from the upstream
WORDS = 100  # words per reply
PROMPTS = load_json("prompts.json")  # bench/data/prompts.json
SYSTEM = PROMPTS["system"]
# Targets (issue 17), ratios to the bare relay in the same run: added TTFT p50 at most
# factor x the relay's + slack ms, by number of chats; server CPU per relayed chunk at most
# factor x the relay's at 50 chats; the delivered share of the upstream rate at 50 chats.
TARGET_ADDED_P50 = {1: (2.0, 5.0), 10: (2.0, 5.0), 50: (2.0, 0.0)}
TARGET_CPU = (50, 1.5)
TARGET_SHARE = (50, 0.98)


def question(chat: int, turn: int) -> str:
    return PROMPTS["stream_question"].format(chat=chat, turn=turn)


@dataclass
class Level:
    chats: int
    turns: int = 0  # per chat, round and phase
    rounds: list[dict[str, list[Stream]]] = field(default_factory=list)
    start_rss: int = 0  # kB, the server just started
    idle_rss: int = 0  # kB, after one warm-up turn
    peak_rss: int = 0  # kB, VmHWM at the end
    # Per side ("app", "relay"): server CPU seconds, wall seconds, upstream and client CPU
    # seconds during that side's phases.
    cpu: dict[str, float] = field(default_factory=lambda: {"app": 0.0, "relay": 0.0})
    wall: dict[str, float] = field(default_factory=lambda: {"app": 0.0, "relay": 0.0})
    upstream_cpu: dict[str, float] = field(default_factory=lambda: {"app": 0.0, "relay": 0.0})
    client_cpu: dict[str, float] = field(default_factory=lambda: {"app": 0.0, "relay": 0.0})
    words: int = 0  # upstream events (one word each) per reply
    stored: dict[str, int] = field(default_factory=dict)
    load: list[float] = field(default_factory=list)  # 1-minute load average, start and end
    expected_turns: int = 0
    problems: list[str] = field(default_factory=list)

    def streams(self, name: str) -> list[Stream]:
        return [s for r in self.rounds for s in r[name]]

    def ttfts(self, name: str) -> list[float]:
        return [s.ttft * 1000 for s in self.streams(name) if s.ttft is not None]

    def rates(self, name: str) -> list[float]:
        return [s.rate for s in self.streams(name) if s.rate is not None]

    def ttft(self, name: str, q: float) -> float | None:
        return percentile(self.ttfts(name), q)

    def added(self, q: float, name: str = "app") -> float | None:
        side, direct = self.ttft(name, q), self.ttft("direct", q)
        return None if side is None or direct is None else side - direct

    def added_ratio(self, q: float = 50) -> float | None:
        app, relay = self.added(q), self.added(q, "relay")
        return app / relay if app is not None and relay and relay > 0 else None

    def cpu_share(self, name: str) -> float | None:
        return self.cpu[name] / self.wall[name] if self.wall[name] else None

    def cpu_per_chunk_us(self, name: str) -> float | None:
        """Server CPU µs per relayed upstream chunk (SSE event) during that side's phases."""
        chunks = len(self.streams(name)) * self.words
        return self.cpu[name] / chunks * 1e6 if chunks else None

    def cpu_ratio(self) -> float | None:
        app, relay = self.cpu_per_chunk_us("app"), self.cpu_per_chunk_us("relay")
        return app / relay if app is not None and relay else None

    def upstream_rate(self) -> float | None:
        rates = self.rates("direct")
        return statistics.median(rates) if rates else None

    def shares(self, name: str = "app") -> list[float]:
        base = self.upstream_rate()
        return [r / base for r in self.rates(name)] if base else []

    def share(self, q: float, name: str = "app") -> float | None:
        return percentile(self.shares(name), q)

    def frames_per_reply(self, name: str = "app") -> float | None:
        counts = [len(s.deliveries) for s in self.streams(name)]
        return statistics.median(counts) if counts else None


# -- one level: N concurrent chats -------------------------------------------------------------


async def _staggered(n: int, stagger: float, turns: int, one_turn) -> list[Stream]:
    """N chats at once, chat i starting i * stagger seconds in; each runs ``turns`` turns back
    to back (the next send as soon as the reply ended)."""

    async def chat(i: int) -> list[Stream]:
        await asyncio.sleep(i * stagger)
        return [await one_turn(i, t) for t in range(turns)]

    results = await asyncio.gather(*(chat(i) for i in range(n)))
    return [stream for streams in results for stream in streams]


SIDES = ("direct", "relay", "app")


async def drive(
    level: Level,
    server: AppServer,
    relay: AppServer,
    upstream: Upstream,
    seats,
    column,
    args,
    profiler: Profiler | None = None,
) -> None:
    n = level.chats
    stagger = 0.0 if args.burst else upstream.words / upstream.rate / n
    client = direct_client(upstream.base_url)
    sockets = [ChatSocket(server.ws_url, s.session, s.conversations[column]) for s in seats[:n]]
    relay_sockets = [ChatSocket(relay.ws_url, "", i + 1) for i in range(n)]
    servers = {"app": server, "relay": relay}
    counter = iter(range(10**9))

    async def app_turn(i: int, t: int) -> Stream:
        return await sockets[i].turn(question(i, next(counter)))

    async def relay_turn(i: int, t: int) -> Stream:
        return await relay_sockets[i].turn(question(i, next(counter)))

    async def direct_turn(i: int, t: int) -> Stream:
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": question(i, next(counter))},
        ]
        return await direct_stream(client, messages)

    turn_of = {"direct": direct_turn, "relay": relay_turn, "app": app_turn}
    # One chat, one turn each way: imports, caches and first connections; then "idle" memory.
    await sockets[0].connect()
    await relay_sockets[0].connect()
    await app_turn(0, 0)
    await relay_turn(0, 0)
    await direct_turn(0, 0)
    await asyncio.sleep(1.0)
    level.idle_rss = server.rss_kib()
    # All N connected and one unmeasured turn each way at full concurrency (connection pools).
    await asyncio.gather(*(s.connect() for s in [*sockets[1:], *relay_sockets[1:]]))
    for name in SIDES:
        await _staggered(n, stagger, 1, turn_of[name])
    turns = max(args.turns, -(-args.min_samples // (n * args.rounds)))
    level.turns = turns
    level.words = upstream.words
    level.expected_turns = 1 + n + args.rounds * turns * n

    if profiler is not None:
        profiler.start(server.pids())
    for round_ in range(args.rounds):
        streams: dict[str, list[Stream]] = {}
        # The three sides rotate, so that the machine's noise hits them alike.
        order = SIDES[round_ % 3 :] + SIDES[: round_ % 3]
        for name in order:
            if name == "direct":
                streams[name] = await _staggered(n, stagger, turns, direct_turn)
                continue
            side = servers[name]
            cpu0, wall0 = side.cpu_seconds(), time.perf_counter()
            up0, me0 = cpu_seconds(upstream.pid), time.process_time()
            streams[name] = await _staggered(n, stagger, turns, turn_of[name])
            level.cpu[name] += side.cpu_seconds() - cpu0
            level.wall[name] += time.perf_counter() - wall0
            level.upstream_cpu[name] += cpu_seconds(upstream.pid) - up0
            level.client_cpu[name] += time.process_time() - me0
        level.rounds.append(streams)
        if args.verbose:
            print(
                f"  {n} chats, round {round_ + 1}: TTFT p50"
                + "".join(
                    f" {name} {percentile([s.ttft * 1000 for s in streams[name]], 50):.1f} ms"
                    for name in SIDES
                ),
                file=sys.stderr,
                flush=True,
            )
    if profiler is not None:
        profiler.stop()
    level.peak_rss = server.peak_rss_kib()
    await asyncio.gather(*(s.close() for s in [*sockets, *relay_sockets]))
    await client.close()


def check(level: Level, upstream: Upstream) -> None:
    for name in SIDES:
        for stream in level.streams(name):
            if stream.status != "complete" or stream.text != upstream.reply:
                level.problems.append(
                    f"{name} reply {stream.status or 'unfinished'}"
                    f" ({len(stream.text.split())} of {upstream.words} words)"
                )
    stored, turns = level.stored, level.expected_turns
    wanted = {
        "messages": 2 * turns,
        "user": turns,
        "assistant": turns,
        "complete": turns,
        "exact": turns,
        "duplicate_client_ids": 0,
    }
    for key, value in wanted.items():
        if stored.get(key) != value:
            level.problems.append(f"database {key}: {stored.get(key)}, expected {value}")


_VECTORS_CODE = """
from django.contrib.auth import get_user_model
from chat import services
from memory.search import embeddings

for user in get_user_model().objects.filter(pk__in=user_ids):
    conversation = services.conversation_create(user=user, title="earlier")
    services.message_create_many(
        conversation=conversation,
        messages=[services.NewMessage(role, text) for _ in range(3) for role, text in turns],
    )
result = embeddings.embed_pending(limit=10**6)
"""


def give_vectors(env: dict[str, str], seats: list[Seat], reply: str) -> None:
    """An earlier conversation per user (three exchanges like the bench's), embedded: as with
    real users (embeddings on by default), every turn's search then embeds its query."""
    turns = [("user", question(0, 0)), ("assistant", reply)]
    embedded = django_run(_VECTORS_CODE, env=env, user_ids=[s.user_id for s in seats], turns=turns)
    if not embedded:
        raise RuntimeError("--vectors: nothing was embedded (are local embeddings installed?)")


def run(args) -> dict:
    began = time.perf_counter()
    levels = [Level(n) for n in args.chats]
    profiles: dict[int, Budget] = {}
    statements: dict[int, list[str]] = {}
    upstream = Upstream(interval=1.0 / args.rate, words=args.words).start()
    # A chat here sends about 28 messages a minute: above the default abuse limit of 20, so
    # the limit is raised (not switched off: its check stays on the measured path).
    workspace = Workspace(
        upstream_url=upstream.base_url,
        redis_url=args.redis_url,
        MESSAGES_PER_MINUTE="100000",
        REDIS_PREFIX=f"bench-stream-{os.getpid()}",
    )
    try:
        workspace.migrate()
        seats: list[Seat] = create_seats(workspace.env, max(args.chats), len(args.chats))
        if args.vectors:
            give_vectors(workspace.env, seats, upstream.reply)
        for column, level in enumerate(levels):
            if args.verbose:
                print(f"{level.chats} chats", file=sys.stderr, flush=True)
            timed = args.statements and level.chats == max(args.chats)
            prefix = workspace.path / f"statements-{level.chats}"
            server = workspace.server(
                f"server-{level.chats}",
                server=args.server,
                workers=args.workers,
                statements=prefix if timed else None,
            ).start()
            relay = workspace.relay(
                f"relay-{level.chats}", server=args.server, workers=args.workers
            )
            profiler = None
            if args.profile and level.chats == max(args.chats):
                profiler = Profiler(args.profile)
            try:
                relay.start()
                time.sleep(1.0)
                level.start_rss = server.rss_kib()
                level.load.append(os.getloadavg()[0])
                asyncio.run(drive(level, server, relay, upstream, seats, column, args, profiler))
                level.load.append(os.getloadavg()[0])
            except BaseException:
                print(server.log_tail(), relay.log_tail(), file=sys.stderr)
                raise
            finally:
                server.stop()
                relay.stop()
            if timed:
                found = read_statements(str(prefix))
                statements[level.chats] = statements_table(found, level.expected_turns)
            if profiler is not None:
                measured = len(level.streams("app"))
                profile = budget(args.profile, cpu_seconds=level.cpu["app"], turns=measured)
                profiles[level.chats] = profile
            conversations = [s.conversations[column] for s in seats[: level.chats]]
            level.stored = stored_messages(workspace.env, conversations, upstream.reply)
            check(level, upstream)
    finally:
        upstream.stop()
        workspace.cleanup()
    return {
        "levels": levels,
        "upstream": upstream,
        "seconds": time.perf_counter() - began,
        "burst": args.burst,
        "server": args.server,
        "workers": args.workers,
        "redis": bool(args.redis_url),
        "rounds": args.rounds,
        "turns": args.turns,
        "min_samples": args.min_samples,
        "profiles": profiles,
        "statements": statements,
        "vectors": args.vectors,
    }


# -- the report --------------------------------------------------------------------------------


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def _pair(a: float | None, b: float | None) -> str:
    return f"{_ms(a)} / {_ms(b)}"


def _mb(kib: int) -> str:
    return f"{kib / 1024:.0f}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.1f}%"


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}x"


def _us(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}"


def verdicts(levels: list[Level]) -> list[str]:
    by_n = {level.chats: level for level in levels}
    lines = []
    for n, (factor, slack) in TARGET_ADDED_P50.items():
        if n in by_n:
            app, relay = by_n[n].added(50), by_n[n].added(50, "relay")
            limit = None if relay is None else factor * max(relay, 0.0) + slack
            ok = app is not None and limit is not None and app <= limit
            lines.append(
                f"added TTFT p50 ≤ {factor:g}x the bare relay's"
                + (f" + {slack:g} ms" if slack else "")
                + f" with {n} chat{'s' * (n > 1)}: {'met' if ok else 'NOT met'}"
                f" ({_ms(app)} ms against ≤ {_ms(limit)}; relay {_ms(relay)} ms)"
            )
    n, factor = TARGET_CPU
    if n in by_n:
        ratio = by_n[n].cpu_ratio()
        ok = ratio is not None and ratio <= factor
        lines.append(
            f"server CPU per relayed chunk ≤ {factor:g}x the bare relay's with {n} chats:"
            f" {'met' if ok else 'NOT met'} ({_us(by_n[n].cpu_per_chunk_us('app'))} µs against"
            f" {_us(by_n[n].cpu_per_chunk_us('relay'))} µs: {_ratio(ratio)})"
        )
    n, target = TARGET_SHARE
    if n in by_n:
        share = by_n[n].share(50)
        ok = share is not None and share >= target
        lines.append(
            f"≥ {target:.0%} of the upstream rate delivered with {n} chats:"
            f" {'met' if ok else 'NOT met'} ({_pct(share)})"
        )
    exact = all(not level.problems for level in levels)
    lines.append(
        "exactness: "
        + (
            "every reply (app and relay) equals the upstream's text; the database holds"
            " exactly the turns sent, each reply once"
            if exact
            else "PROBLEMS: "
            + "; ".join(f"{lv.chats} chats: {p}" for lv in levels for p in lv.problems[:5])
        )
    )
    return lines


def report(result: dict) -> str:
    levels: list[Level] = result["levels"]
    upstream: Upstream = result["upstream"]
    lines = [
        "## stream: N concurrent chats through the app vs. a bare Channels relay vs. the"
        " upstream called directly",
        "",
        f"- machine: {platform.machine()}, {cpus()} CPUs, Python {platform.python_version()},"
        f" {platform.system()} {platform.release()}; daphne {metadata.version('daphne')},"
        f" channels {metadata.version('channels')}, openai {metadata.version('openai')},"
        f" websockets {metadata.version('websockets')}",
        f"- upstream: {upstream.words} words per reply, one SSE event every"
        f" {upstream.interval * 1000:.0f} ms (nominal {upstream.rate:.0f} words/s), own process",
        f"- app and relay: {result['server']}"
        + (f" --workers {result['workers']}" if result["workers"] > 1 else " (one process each)")
        + ", DEBUG=false; app on SQLite (WAL) in a temp dir, "
        + ("Redis channel layer and cache" if result["redis"] else "in-memory channel layer")
        + ", MESSAGES_PER_MINUTE raised to 100000; relay: bench/relay.py"
        + (
            "; each user has an earlier, embedded conversation (--vectors: every search embeds"
            " its query)"
            if result.get("vectors")
            else ""
        ),
        f"- per N: {result['rounds']} rounds x (N direct streams, N relay chats, N app chats,"
        f" the order rotating), at least {result['turns']} turns back to back per chat and"
        f" phase (at least {result['min_samples']} turns per side in all);"
        + (
            " all chats send at once"
            if result["burst"]
            else " chat i starts i/N of a reply's duration in (evenly staggered)"
        ),
        f"- run took {result['seconds']:.0f} s",
        "",
        "| chats | samples | direct TTFT p50 ms | relay added p50 / p95 ms"
        " | app added p50 / p95 ms | app / relay added p50 | relay / app CPU µs per chunk"
        " | app / relay CPU | relay / app server CPU | delivered relay / app p50 (app p5)"
        " | frames/reply relay / app | app RSS idle → peak MB | stored / expected |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for lv in levels:
        lines.append(
            f"| {lv.chats} | {len(lv.ttfts('app'))}"
            f" | {_ms(lv.ttft('direct', 50))}"
            f" | {_pair(lv.added(50, 'relay'), lv.added(95, 'relay'))}"
            f" | {_pair(lv.added(50), lv.added(95))}"
            f" | {_ratio(lv.added_ratio())}"
            f" | {_us(lv.cpu_per_chunk_us('relay'))} / {_us(lv.cpu_per_chunk_us('app'))}"
            f" | {_ratio(lv.cpu_ratio())}"
            f" | {_pct(lv.cpu_share('relay'))} / {_pct(lv.cpu_share('app'))}"
            f" | {_pct(lv.share(50, 'relay'))} / {_pct(lv.share(50))} ({_pct(lv.share(5))})"
            f" | {lv.frames_per_reply('relay') or 0:.0f} / {lv.frames_per_reply() or 0:.0f}"
            f" | {_mb(lv.idle_rss)} → {_mb(lv.peak_rss)}"
            f" | {lv.stored.get('messages', 0)} / {2 * lv.expected_turns} |"
        )
    lines += ["", *(f"- {line}" for line in verdicts(levels))]
    lines += [
        "",
        "Absolute figures (ms): "
        + "; ".join(
            f"{lv.chats} chats: TTFT p50 / p95 direct"
            f" {_pair(lv.ttft('direct', 50), lv.ttft('direct', 95))},"
            f" relay {_pair(lv.ttft('relay', 50), lv.ttft('relay', 95))},"
            f" app {_pair(lv.ttft('app', 50), lv.ttft('app', 95))};"
            f" upstream {lv.upstream_rate() or 0:.1f} words/s"
            for lv in levels
        )
        + ".",
        "",
        "CPU during the phases (share of one core), relay → app: "
        + "; ".join(
            f"{lv.chats} chats: server {_pct(lv.cpu_share('relay'))} → {_pct(lv.cpu_share('app'))},"
            f" upstream {_pct(lv.upstream_cpu['relay'] / lv.wall['relay'])} →"
            f" {_pct(lv.upstream_cpu['app'] / lv.wall['app'])},"
            f" clients {_pct(lv.client_cpu['relay'] / lv.wall['relay'])} →"
            f" {_pct(lv.client_cpu['app'] / lv.wall['app'])}"
            for lv in levels
            if lv.wall["app"] and lv.wall["relay"]
        )
        + ".",
        "",
        "Load average (1 min) at the start and end of each level, other work included: "
        + "; ".join(f"{lv.chats} chats: {' → '.join(f'{x:.1f}' for x in lv.load)}" for lv in levels)
        + ".",
    ]
    for n, rows in result.get("statements", {}).items():
        lines += [
            "",
            f"### SQL statements in the app server, {n} chats (--statements: wall time against"
            " the thread's CPU; the rest is waiting, for locks and for the GIL)",
            "",
            *rows,
        ]
    for n, profile in result.get("profiles", {}).items():
        lines += [
            "",
            f"### py-spy profile of the app server, {n} chats (measured rounds; the profiled"
            " run's timings are not the figures above if --profile was on)",
            "",
            *table(profile),
        ]
    return "\n".join(lines)


def raw(result: dict) -> dict:
    upstream: Upstream = result["upstream"]
    return {
        "seconds": result["seconds"],
        "burst": result["burst"],
        "server": result["server"],
        "workers": result["workers"],
        "redis": result["redis"],
        "upstream": {"words": upstream.words, "interval": upstream.interval},
        "levels": [
            {
                "chats": lv.chats,
                "turns": lv.turns,
                "rounds": [
                    {
                        name: {
                            "ttft_ms": [s.ttft * 1000 if s.ttft else None for s in streams],
                            "rate": [s.rate for s in streams],
                            "frames": [len(s.deliveries) for s in streams],
                        }
                        for name, streams in r.items()
                    }
                    for r in lv.rounds
                ],
                "rss_kib": {"start": lv.start_rss, "idle": lv.idle_rss, "peak": lv.peak_rss},
                "cpu_seconds": {
                    "server": lv.cpu,
                    "upstream": lv.upstream_cpu,
                    "clients": lv.client_cpu,
                    "wall": lv.wall,
                },
                "stored": lv.stored,
                "expected_turns": lv.expected_turns,
                "problems": lv.problems,
                "load": lv.load,
            }
            for lv in result["levels"]
        ],
    }


def parse_args(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="1 and 10 chats, 2 rounds of 3 turns, 12 samples at least: about 2 minutes",
    )
    parser.add_argument("--chats", type=int_list, default=None, help="e.g. 1,10,50 (the default)")
    parser.add_argument(
        "--turns", type=int, default=None, help=f"per chat, round and phase ({TURNS})"
    )
    parser.add_argument(
        "--min-samples",
        type=int,
        default=None,
        help=f"turns per side and level at least, by more turns per chat ({MIN_SAMPLES})",
    )
    parser.add_argument("--rounds", type=int, default=None, help=f"default {ROUNDS}")
    parser.add_argument("--rate", type=float, default=RATE, help=f"upstream words/s ({RATE:.0f})")
    parser.add_argument("--words", type=int, default=WORDS, help=f"words per reply ({WORDS})")
    parser.add_argument(
        "--burst", action="store_true", help="all chats send at once instead of staggered"
    )
    parser.add_argument(
        "--server",
        choices=SERVERS,
        default="daphne",
        help="the ASGI server: daphne (make run, the live tests) or uvicorn (make serve)",
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="uvicorn worker processes (above 1: --redis-url)"
    )
    parser.add_argument(
        "--redis-url", default="", help="e.g. redis://127.0.0.1:6379/15 (keys get a run prefix)"
    )
    parser.add_argument(
        "--vectors",
        action="store_true",
        help="give each user an earlier, embedded conversation: every search embeds its query",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write raw figures here")
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        help="py-spy the app server during the largest level's measured rounds; raw stacks"
        " written here, a CPU budget per turn in the report (py-spy samples without pausing,"
        " but it costs CPU: read the timings of a run without it)",
    )
    parser.add_argument(
        "--statements",
        action="store_true",
        help="time the app's SQL statements in the server (wall and CPU) for the largest level:"
        " a table of them in the report (bench/statements.py)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    args = parser.parse_args(argv)
    if args.workers > 1 and (args.server != "uvicorn" or not args.redis_url):
        parser.error("--workers above 1 needs --server uvicorn and --redis-url")
    if args.chats is None:
        args.chats = (1, 10) if args.quick else CHATS
    if args.turns is None:
        args.turns = 3 if args.quick else TURNS
    if args.rounds is None:
        args.rounds = 2 if args.quick else ROUNDS
    if args.min_samples is None:
        args.min_samples = 12 if args.quick else MIN_SAMPLES
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    result = run(args)
    print(report(result))
    if args.json:
        args.json.write_text(json.dumps(raw(result), indent=2) + "\n", encoding="utf-8")
    return 0 if all(not level.problems for level in result["levels"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
