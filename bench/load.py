"""Load test: many concurrent websocket users, many turns each, on both stacks the app runs on.

Per stack, in one run (``--stack sqlite,postgres``):

* ``sqlite``   -- SQLite (WAL) in a temporary directory, the in-memory channel layer and cache,
  ONE server process (``make run``'s embedded defaults);
* ``postgres`` -- a scratch PostgreSQL database (created, then dropped) and Redis (channel
  layer and abuse-limit cache, under a key prefix of this run's, deleted afterwards), TWO
  server processes on two ports, users alternating between them (as two machines behind a
  load balancer would share them; one process per port, so each one's memory is its own).

Each stack also runs one ``manage.py db_worker`` beside the servers: the app queues summary
jobs after turns (every 12 stored messages of a conversation), and the worker's writes compete
with the chat's. The servers are uvicorn (``make serve``; ``--server daphne`` for ``make run``'s
server), ``DEBUG=false``. The model is the fake OpenAI-compatible upstream (``bench/upstream.py``,
its own process) streaming one fixed reply of ``--words`` words, one word every ``--interval``
seconds; the worker summarises with the offline extractive summariser (the fake upstream cannot
answer the summary's JSON schema), so every job it runs is real work on the database.

``--users`` users (one conversation each) connect within ``--stagger`` seconds and each sends
``--turns`` messages back to back: the next as soon as the previous reply's ``reply_end``
arrived. Beside them, ``--direct`` loops call the same upstream directly with the ``openai``
client the app uses, from the same process and event loop, for the baseline. Reported:

* errors: ``error`` frames, a ``reply_end`` whose status is not ``complete``, a reply whose
  streamed text differs from the upstream's, websocket closes, timeouts, failed connects;
* lost / duplicated messages, counted in the database afterwards by ``client_id``: every turn
  the app answered must be stored once as a user message with exactly one complete reply equal
  to the upstream's text; nothing refused may be stored; nothing else may be there;
* time to first token (TTFT): app = ``send`` frame → first ``chunk`` frame; direct = request →
  first content delta; added = app - direct, at p50 and p95;
* peak resident memory (``VmHWM``) and CPU share of every server and worker process;
* wall time, turns/s, and the summary jobs done and failed.

With ``--second-tab`` each user also keeps a second tab open on its conversation that only
watches (on the other server process when there are two, so its frames cross the channel
layer); it must see every reply whole, as docs/protocol.md promises every tab.

    .venv/bin/python bench/load.py                      # 100 users x 20 turns, both stacks
    .venv/bin/python bench/load.py --quick              # 20 users x 5 turns
    .venv/bin/python bench/load.py --stack postgres -v  # one stack, progress on stderr
    .venv/bin/python bench/load.py --think 5            # users pause 5 s between turns
    .venv/bin/python bench/load.py --stack postgres --second-tab

Exit status 1 when any message was lost or duplicated (or, with ``--second-tab``, a second
tab missed part of a reply).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import html
import json
import math
import os
import platform
import re
import resource
import secrets
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.data import load_json  # noqa: E402
from bench.harness import (  # noqa: E402
    SERVERS,
    AppServer,
    ChatSocket,
    JobWorker,
    Stream,
    TurnError,
    Upstream,
    Workspace,
    cpu_seconds,
    cpus,
    create_seats,
    direct_client,
    direct_stream,
    django_run,
    percentile,
    proc_status_kib,
)

USERS, TURNS = 100, 20
QUICK_USERS, QUICK_TURNS = 20, 5
WORDS, INTERVAL = 40, 0.02  # the upstream's reply: 40 words, one every 20 ms (0.8 s)
STAGGER = 2.0  # seconds over which the users connect and start
DIRECT = 10  # concurrent direct-to-upstream loops for the baseline
TIMEOUT = 60.0  # seconds a turn may take before it counts as timed out
DRAIN_TIMEOUT = 180.0  # seconds to wait for the worker to finish the queued jobs
STACKS = ("sqlite", "postgres")
PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"
REDIS = "redis://127.0.0.1:6379/0"
PROMPTS = load_json("prompts.json")  # bench/data/prompts.json
SYSTEM = PROMPTS["system"]
ANSWERED = ("complete", "interrupted", "failed")  # a reply_end came: the app stored the turn


def question(user: int, turn: int) -> str:
    return PROMPTS["load_question"].format(user=user, turn=turn + 1)


def default_rate_limit(words: int, interval: float) -> int:
    """MESSAGES_PER_MINUTE for the run: twice the most one user can send back to back (a turn
    lasts at least the reply's streaming time), and at least 120."""
    fastest = max(words * interval, 0.05)
    return max(120, math.ceil(2 * 60 / fastest))


# -- what one run records ---------------------------------------------------------------------


@dataclass
class Turn:
    user: int
    turn: int
    client_id: str
    server: int
    outcome: str = "not_sent"  # complete | interrupted | failed | refused:<code> | timeout |
    #                            closed | not_sent
    ttft: float | None = None  # seconds
    duration: float | None = None  # send → reply_end, seconds
    text_ok: bool = False
    detail: str = ""

    @property
    def error(self) -> str:
        """The error kind this turn counts as, or "" for a clean turn."""
        if self.outcome == "complete":
            return "" if self.text_ok else "text differs"
        return self.outcome.split(":")[0] if self.outcome.startswith("refused") else self.outcome


@dataclass
class Proc:
    role: str
    pid: int
    peak_kib: int = 0
    cpu: float = 0.0  # CPU seconds during the load
    main_cpu: float = 0.0  # of which its main thread (the event loop of a server)


def main_thread_cpu(pid: int) -> float:
    """CPU seconds of a process's main thread (a server's event loop; its other threads run
    the ORM work and the database driver)."""
    with open(f"/proc/{pid}/task/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far, from ``/proc/stat``."""
    with open("/proc/stat", encoding="ascii") as stat:
        values = [int(v) for v in stat.readline().split()[1:9]]
    idle = values[3] + values[4]  # idle + iowait
    return sum(values) - idle, sum(values)


@dataclass
class SecondTab:
    """A second tab on a user's conversation that only watches (``--second-tab``): on the
    other server process when there are two, so its frames cross the channel layer."""

    user: int
    expected: int = 0  # replies the sending tab saw end
    ends: dict[int, str] = field(default_factory=dict)  # reply id → status of its reply_end
    texts: dict[int, str] = field(default_factory=dict)  # reply id → text it ended with
    snapshots: int = 0  # live snapshots of replies while they streamed
    synced: int = 0  # replies whose end came only in answer to a sync frame
    connected: bool = False
    frames: int = 0  # frames received after ready
    ended_by: str = ""  # why its reader stopped early, if it did

    def whole(self, reply: str) -> int:
        return sum(s == "complete" and self.texts.get(i) == reply for i, s in self.ends.items())

    def gaps(self, reply: str) -> int:
        return sum(s == "complete" and self.texts.get(i) != reply for i, s in self.ends.items())


@dataclass
class StackRun:
    name: str
    label: str
    users: int
    turns_per_user: int
    servers: int
    turns: list[Turn] = field(default_factory=list)
    direct: list[Stream] = field(default_factory=list)
    direct_errors: int = 0
    connects: list[float] = field(default_factory=list)  # seconds per successful connect
    connect_errors: list[str] = field(default_factory=list)
    reconnects: int = 0
    wall: float = 0.0  # first user start → last turn done
    users_done: int = 0
    load_ended: Callable[[], None] = lambda: None  # measures the end of the load, once
    client_cpu: float = 0.0
    machine_cpu: float = 0.0  # share of all CPUs busy during the load, every process counted
    load: list[float] = field(default_factory=list)  # 1-minute load average, start and end
    loop_lag: list[float] = field(default_factory=list)  # client event-loop lag samples, s
    procs: list[Proc] = field(default_factory=list)
    db: dict = field(default_factory=dict)
    jobs: dict = field(default_factory=dict)
    drain_seconds: float = 0.0
    logs: dict[str, dict] = field(default_factory=dict)  # log name → findings
    kept_logs: str = ""
    versions: str = ""
    rate_limit: int = 0
    reply: str = ""  # the upstream's text
    second_tabs: list[SecondTab] = field(default_factory=list)

    # figures

    def answered(self) -> list[Turn]:
        return [t for t in self.turns if t.outcome in ANSWERED]

    def errors(self) -> Counter:
        counts = Counter(t.error for t in self.turns if t.error)
        if self.connect_errors:
            counts["connect"] += len(self.connect_errors)
        return counts

    def error_rate(self) -> float:
        attempts = len(self.turns) + len(self.connect_errors)
        return sum(self.errors().values()) / attempts if attempts else 0.0

    def app_ttfts(self) -> list[float]:
        return [t.ttft * 1000 for t in self.turns if t.ttft is not None]

    def direct_ttfts(self) -> list[float]:
        return [s.ttft * 1000 for s in self.direct if s.ttft is not None]

    def ttft(self, side: str, q: float) -> float | None:
        values = self.app_ttfts() if side == "app" else self.direct_ttfts()
        return percentile(values, q)

    def added(self, q: float) -> float | None:
        app, direct = self.ttft("app", q), self.ttft("direct", q)
        return None if app is None or direct is None else app - direct

    def durations(self) -> list[float]:
        return [t.duration * 1000 for t in self.turns if t.duration is not None]

    def throughput(self) -> float:
        return len(self.answered()) / self.wall if self.wall else 0.0

    def clean(self) -> bool:
        """Nothing lost or duplicated in the database; every second tab saw every reply."""
        tabs_ok = all(t.whole(self.reply) == t.expected for t in self.second_tabs)
        return bool(self.db) and not self.db["lost"] and not self.db["duplicated"] and tabs_ok


# -- the load ---------------------------------------------------------------------------------


async def _connect(run: StackRun, url: str, seat, args) -> ChatSocket | None:
    """Connect like a page does: on failure, try again after a pause, three times."""
    for attempt in range(3):
        sock = ChatSocket(url, seat.session, seat.conversations[0])
        began = time.perf_counter()
        try:
            await sock.connect(timeout=args.timeout)
        except Exception as exc:
            run.connect_errors.append(f"{type(exc).__name__}: {exc}"[:200])
            with contextlib.suppress(Exception):
                await sock.close()
            await asyncio.sleep(1.0 + attempt)
            continue
        run.connects.append(time.perf_counter() - began)
        return sock
    return None


async def _user(run: StackRun, i: int, seat, servers: list[AppServer], reply: str, args):
    from websockets.exceptions import ConnectionClosed

    server = i % len(servers)
    turns = [Turn(i, t, f"u{i}-t{t + 1}", server) for t in range(args.turns)]
    run.turns.extend(turns)
    await asyncio.sleep(i * args.stagger / max(args.users, 1))
    sock = await _connect(run, servers[server].ws_url, seat, args)
    watcher = None
    if args.second_tab and sock is not None:
        watcher = await _watch(run, i, servers[(server + 1) % len(servers)].ws_url, seat, args)
    try:
        for turn in turns:
            if sock is None:
                break  # the rest stay "not_sent"
            began = time.perf_counter()
            try:
                stream = await sock.turn(
                    question(i, turn.turn), client_id=turn.client_id, timeout=args.timeout
                )
            except TurnError as exc:
                turn.outcome = "refused:" + str(exc).split(":", 1)[0]
                turn.detail = str(exc)[:200]
            except TimeoutError:
                turn.outcome = "timeout"
            except ConnectionClosed as exc:
                turn.outcome, turn.detail = "closed", str(exc)[:200]
            else:
                turn.outcome = stream.status
                turn.ttft = stream.ttft
                turn.duration = stream.ended - stream.started
                turn.text_ok = stream.text == reply
                turn.detail = stream.error[:200]
            if turn.outcome in ("timeout", "closed"):  # a page would reconnect
                turn.duration = time.perf_counter() - began
                with contextlib.suppress(Exception):
                    await sock.close()
                run.reconnects += 1
                sock = await _connect(run, servers[server].ws_url, seat, args)
            elif args.think:
                await asyncio.sleep(args.think)
    finally:
        run.users_done += 1
        if run.users_done == args.users:
            run.load_ended()
        if sock is not None:
            with contextlib.suppress(Exception):
                await sock.close()
        if watcher is not None:
            await watcher(sum(t.outcome in ANSWERED for t in turns))


async def _watch(run: StackRun, i: int, url: str, seat, args):
    """Open the second tab and read its frames; returns a coroutine function that, given the
    number of replies to expect, waits (up to 10 s) for their reply_end and closes the tab."""
    tab = SecondTab(i)
    run.second_tabs.append(tab)
    sock = ChatSocket(url, seat.session, seat.conversations[0])
    try:
        await sock.connect(timeout=args.timeout)
    except Exception as exc:
        run.connect_errors.append(f"second tab: {type(exc).__name__}: {exc}"[:200])

        async def nothing(expected: int) -> None:
            tab.expected = expected

        return nothing
    tab.connected = True
    ended = asyncio.Event()

    async def read() -> None:
        try:
            async for raw in sock.connection:
                see(json.loads(raw))
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            tab.ended_by = f"{type(exc).__name__}: {exc}"[:200]
        else:
            tab.ended_by = "the server closed the socket"

    def see(frame: dict) -> None:
        tab.frames += 1
        kind = frame.get("type")
        if kind == "reply_start":
            tab.texts.setdefault(frame["id"], "")
        elif kind == "chunk":  # only the sending tab should get these
            tab.texts[frame["id"]] = tab.texts.get(frame["id"], "") + frame["text"]
        elif kind == "snapshot":  # other tabs: the whole text so far
            tab.snapshots += 1
            tab.texts[frame["id"]] = frame["text"]
        elif kind == "reply_end":
            tab.ends[frame["id"]] = frame["status"]
            tab.texts[frame["id"]] = html.unescape(re.sub(r"<[^>]+>", "", frame["html"])).strip()
            ended.set()

    reader = asyncio.create_task(read())

    async def finish(expected: int) -> None:
        tab.expected = expected
        deadline = time.monotonic() + 10.0
        while len(tab.ends) < expected and time.monotonic() < deadline and not reader.done():
            ended.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ended.wait(), max(deadline - time.monotonic(), 0.01))
        # As the page does after a quiet spell: ask for replies it heard of but saw no end of.
        unended = [i for i in tab.texts if i not in tab.ends]
        for reply_id in unended:
            with contextlib.suppress(Exception):
                await sock.connection.send(json.dumps({"type": "sync", "reply_id": reply_id}))
        deadline = time.monotonic() + 5.0
        while any(i not in tab.ends for i in unended) and time.monotonic() < deadline:
            ended.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(ended.wait(), max(deadline - time.monotonic(), 0.01))
        tab.synced = sum(i in tab.ends for i in unended)
        reader.cancel()
        with contextlib.suppress(BaseException):
            await reader
        with contextlib.suppress(Exception):
            await sock.close()

    return finish


async def _direct_loop(run: StackRun, k: int, client, stop: asyncio.Event, args) -> None:
    await asyncio.sleep(k * args.stagger / max(args.direct, 1))
    n = 0
    while not stop.is_set():
        n += 1
        messages = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": question(10_000 + k, n)},
        ]
        try:
            run.direct.append(await direct_stream(client, messages))
        except Exception:
            run.direct_errors += 1
            await asyncio.sleep(0.5)
        if args.think:
            await asyncio.sleep(args.think)


async def _lag_monitor(run: StackRun, stop: asyncio.Event, every: float = 0.05) -> None:
    while not stop.is_set():
        before = time.perf_counter()
        await asyncio.sleep(every)
        run.loop_lag.append(time.perf_counter() - before - every)


async def _progress(run: StackRun, stop: asyncio.Event, total: int) -> None:
    began = time.perf_counter()
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 10.0)
        done = [t for t in run.turns if t.outcome != "not_sent"]
        errors = sum(bool(t.error) for t in done) + len(run.connect_errors)
        print(
            f"  {run.name}: {time.perf_counter() - began:.0f} s, {len(done)}/{total} turns,"
            f" {errors} errors",
            file=sys.stderr,
            flush=True,
        )


async def drive(run: StackRun, servers, upstream: Upstream, seats, args) -> None:
    client = direct_client(upstream.base_url)
    users, warm = seats[: args.users], seats[args.users :]
    # One unmeasured turn per server process and one direct call: imports, the tokenizer,
    # connection pools.
    for server, seat in zip(servers, warm, strict=True):
        sock = await ChatSocket(server.ws_url, seat.session, seat.conversations[0]).connect()
        await sock.turn("Warming up.", timeout=args.timeout)
        await sock.close()
    await direct_stream(client, [{"role": "user", "content": "Warming up."}])
    await asyncio.sleep(1.0)

    stop = asyncio.Event()
    side = [asyncio.create_task(_lag_monitor(run, stop))]
    side += [
        asyncio.create_task(_direct_loop(run, k, client, stop, args)) for k in range(args.direct)
    ]
    if args.verbose:
        side.append(asyncio.create_task(_progress(run, stop, args.users * args.turns)))
    cpu0 = {p.pid: (cpu_seconds(p.pid), main_thread_cpu(p.pid)) for p in run.procs}
    busy0, total0 = machine_busy()
    run.load.append(os.getloadavg()[0])
    me0, began = time.process_time(), time.perf_counter()

    def load_ended() -> None:
        """Called once, when the last user's last turn ended (second tabs may still wait)."""
        run.wall = time.perf_counter() - began
        run.client_cpu = time.process_time() - me0
        busy1, total1 = machine_busy()
        run.load.append(os.getloadavg()[0])
        run.machine_cpu = (busy1 - busy0) / (total1 - total0) if total1 > total0 else 0.0
        for proc in run.procs:
            with contextlib.suppress(OSError):
                proc.cpu = cpu_seconds(proc.pid) - cpu0[proc.pid][0]
                proc.main_cpu = main_thread_cpu(proc.pid) - cpu0[proc.pid][1]

    run.load_ended = load_ended
    await asyncio.gather(
        *(_user(run, i, seat, servers, upstream.reply, args) for i, seat in enumerate(users))
    )
    stop.set()
    await asyncio.gather(*side)
    await client.close()
    run.turns.sort(key=lambda t: (t.user, t.turn))


# -- the database afterwards --------------------------------------------------------------------

_ROWS_CODE = """
from chat.models import Message

result = [
    [pk, conversation, role, status, client_id, reply_to, content == expected_reply]
    for pk, conversation, role, status, client_id, reply_to, content in Message.objects.filter(
        conversation_id__in=conversation_ids
    ).values_list("pk", "conversation_id", "role", "status", "client_id", "reply_to_id", "content")
]
"""

_JOBS_CODE = """
from django.db.models import Count
from django.utils import timezone
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult
from memory.models import SummaryRun

tasks = {}
for path, status, n in DBTaskResult.objects.values_list("task_path", "status").annotate(
    n=Count("id")
).order_by():
    tasks[f"{path.rsplit('.', 1)[-1]}:{status}"] = n
later = DBTaskResult.objects.filter(status=TaskResultStatus.READY, run_after__gt=timezone.now())
result = {
    "tasks": tasks,
    "runs": dict(SummaryRun.objects.values_list("status").annotate(n=Count("id")).order_by()),
    "due": DBTaskResult.objects.ready().count(),
    "running": DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING).count(),
    "later": dict(later.values_list("task_path").annotate(n=Count("id")).order_by()),
    "failures": list(
        DBTaskResult.objects.filter(status=TaskResultStatus.FAILED)
        .values_list("exception_class_path", flat=True)
        .distinct()[:5]
    ),
    "run_errors": list(
        SummaryRun.objects.exclude(error="").values_list("error", flat=True).distinct()[:5]
    ),
}
"""


def account(turns: list[Turn], conversations: dict[int, int], rows: list[list]) -> dict:
    """Lost and duplicated messages, by client_id. ``conversations`` maps user → conversation.

    * a turn the app answered (a ``reply_end`` came) must be stored as exactly one user message
      with exactly one reply; when the client saw it complete, that reply must be complete and
      equal to the upstream's text. A missing message or reply, or a reply stored with less
      than what was streamed, is lost; a second copy is duplicated;
    * a turn refused with an ``error`` frame, or never sent, must have stored nothing;
    * a turn cut by a timeout or a closed socket may or may not be stored, but at most once;
    * any other message in these conversations is duplicated.
    """
    users_by_key: dict[tuple[int, str], list[list]] = defaultdict(list)
    replies_to: dict[int, list[list]] = defaultdict(list)
    for row in rows:
        _, conversation, role, _, client_id, reply_to, _ = row
        if role == "user":
            users_by_key[(conversation, client_id)].append(row)
        elif role == "assistant":
            replies_to[reply_to].append(row)
    lost = duplicated = 0
    problems: list[str] = []
    seen_users: set[int] = set()
    for turn in turns:
        key = (conversations[turn.user], turn.client_id)
        stored = users_by_key.get(key, [])
        seen_users.update(row[0] for row in stored)
        replies = [r for row in stored for r in replies_to.get(row[0], [])]
        if turn.outcome == "not_sent" or turn.outcome.startswith("refused"):
            if stored or replies:
                duplicated += len(stored) + len(replies)
                problems.append(f"{turn.client_id} ({turn.outcome}) stored anyway")
            continue
        if len(stored) > 1:
            duplicated += len(stored) - 1
            problems.append(f"{turn.client_id}: {len(stored)} user messages")
        if len(replies) > 1:
            duplicated += len(replies) - 1
            problems.append(f"{turn.client_id}: {len(replies)} replies")
        answered = turn.outcome in ANSWERED
        if not stored:
            if answered:
                lost += 2
                problems.append(f"{turn.client_id} ({turn.outcome}): no user message stored")
            continue
        if not replies:
            if answered:
                lost += 1
                problems.append(f"{turn.client_id} ({turn.outcome}): no reply stored")
            continue
        if turn.outcome == "complete":
            status, exact = replies[0][3], replies[0][6]
            if status != "complete" or not exact:
                lost += 1
                problems.append(
                    f"{turn.client_id}: reply stored {status}"
                    f"{'' if exact else ' with other text'}, the client saw it complete"
                )
    ours = {row[0] for row in rows if row[2] == "user"}
    strays = ours - seen_users
    stray_replies = [
        row for row in rows if row[2] == "assistant" and row[5] not in seen_users | strays
    ]
    if strays or stray_replies:
        duplicated += len(strays) + len(stray_replies)
        problems.append(f"{len(strays)} user messages, {len(stray_replies)} replies not sent")
    answered = [t for t in turns if t.outcome in ANSWERED]
    return {
        "lost": lost,
        "duplicated": duplicated,
        "problems": problems,
        "messages": len(rows),
        "expected": 2 * len(answered),
        "user": sum(row[2] == "user" for row in rows),
        "assistant": sum(row[2] == "assistant" for row in rows),
        "complete": sum(row[2] == "assistant" and row[3] == "complete" for row in rows),
        "exact": sum(row[2] == "assistant" and row[3] == "complete" and row[6] for row in rows),
        "streaming": sum(row[3] == "streaming" for row in rows),
        "client_ids": sum(n - 1 for n in Counter((r[1], r[4]) for r in rows if r[4]).values()),
    }


def drain(env: dict[str, str], worker: JobWorker, timeout: float) -> tuple[dict, float]:
    """Wait until the worker has run every job that is due and no summary run is waiting
    (the stale-run watch jobs are due ten minutes later: they are left, and counted)."""
    began = time.perf_counter()
    while True:
        jobs = django_run(_JOBS_CODE, env=env)
        waiting = jobs["runs"].get("queued", 0) + jobs["runs"].get("running", 0)
        if (not jobs["due"] and not jobs["running"] and not waiting) or (
            time.perf_counter() - began > timeout
        ):
            return jobs, time.perf_counter() - began
        if worker.process is not None and worker.process.poll() is not None:
            return jobs, time.perf_counter() - began  # the worker died: report what is left
        time.sleep(2.0)


# -- logs -------------------------------------------------------------------------------------

EXCEPTION_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Timeout|Interrupt)\w*)\b(.*)")


def scan_log(path: Path) -> dict:
    """Tracebacks, ERROR/WARNING lines and the distinct exceptions a process logged."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return {"tracebacks": 0, "errors": 0, "warnings": 0, "exceptions": [], "bytes": 0}
    lines = text.splitlines()
    exceptions = Counter()
    for line in lines:
        match = EXCEPTION_LINE.match(line)
        if match:
            exceptions[(match.group(1) + match.group(2))[:160]] += 1
    return {
        "tracebacks": text.count("Traceback (most recent call last)"),
        "errors": sum(line.startswith("ERROR") or " ERROR " in line for line in lines),
        "warnings": sum(line.startswith("WARNING") for line in lines),
        "exceptions": exceptions.most_common(5),
        "bytes": len(text),
    }


# -- one stack --------------------------------------------------------------------------------


def _pg_admin(admin_url: str, statement: str) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as connection:
        connection.execute(statement)


def _pg_version(admin_url: str) -> str:
    import psycopg

    with psycopg.connect(admin_url) as connection:
        return connection.execute("SHOW server_version").fetchone()[0].split()[0]


def _redis_cleanup(url: str, prefix: str) -> int:
    import redis

    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        for start in range(0, len(keys), 500):
            client.delete(*keys[start : start + 500])
        return len(keys)
    finally:
        client.close()


def run_stack(name: str, args) -> StackRun:
    tag = f"{os.getpid()}_{secrets.token_hex(3)}"
    servers_n = 1 if name == "sqlite" else 2
    server_label = (
        f"{servers_n} {args.server} process{'es' if servers_n > 1 else ''}"
        + (" on two ports, users alternating" if servers_n > 1 else "")
        + ", 1 db_worker"
    )
    rate_limit = args.messages_per_minute or default_rate_limit(args.words, args.interval)
    run = StackRun(
        name=name,
        label=(
            "SQLite (WAL) + in-memory channel layer and cache"
            if name == "sqlite"
            else "PostgreSQL + Redis (channel layer and cache)"
        )
        + f"; {server_label}",
        users=args.users,
        turns_per_user=args.turns,
        servers=servers_n,
        rate_limit=rate_limit,
    )
    upstream = Upstream(interval=args.interval, words=args.words).start()
    run.reply = upstream.reply
    run.procs.append(Proc("upstream", upstream.pid))
    drop_database = None
    redis_prefix = f"bench-load-{tag}"
    extra = {}
    if name == "postgres":
        admin = args.postgres_url
        database = f"memorychat_load_{tag}"
        _pg_admin(admin, f'CREATE DATABASE "{database}"')

        def drop_database() -> None:
            _pg_admin(admin, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')

        extra = {
            "database_url": urlunsplit(urlsplit(admin)._replace(path=f"/{database}")),
            "redis_url": args.redis_url,
        }
        run.versions = f"PostgreSQL {_pg_version(admin)}, Redis {_redis_version(args.redis_url)}"
    else:
        import sqlite3

        run.versions = f"SQLite {sqlite3.sqlite_version}"
    # A user here sends one message per reply, back to back: the abuse limit is raised above
    # that (not switched off: its check stays on the measured path). MAX_CONCURRENT_STREAMS
    # keeps its default: a user streams one reply at a time.
    workspace = Workspace(
        upstream_url=upstream.base_url,
        MESSAGES_PER_MINUTE=str(rate_limit),
        REDIS_PREFIX=redis_prefix,
        **extra,
    )
    servers: list[AppServer] = []
    worker: JobWorker | None = None
    try:
        if args.verbose:
            print(f"{name}: migrating, {args.users} users", file=sys.stderr, flush=True)
        workspace.migrate()
        seats = create_seats(workspace.env, args.users + servers_n, prefix="load")
        conversations = {i: seat.conversations[0] for i, seat in enumerate(seats[: args.users])}
        for k in range(servers_n):
            servers.append(
                AppServer(
                    workspace.env,
                    log_path=workspace.path / f"server-{k + 1}.log",
                    server=args.server,
                ).start()
            )
            run.procs.append(Proc(f"server {k + 1}", servers[-1].pid))
        # The worker summarises offline (no key): the fake upstream has no JSON-schema answers.
        worker_env = {**workspace.env, "OPENAI_API_KEY": ""}
        worker = JobWorker(worker_env, log_path=workspace.path / "worker.log", worker_id=tag)
        worker.start()
        run.procs.append(Proc("db_worker", worker.pid))
        if args.verbose:
            print(f"{name}: load", file=sys.stderr, flush=True)
        asyncio.run(drive(run, servers, upstream, seats, args))
        for proc, server in zip(run.procs[1:], servers, strict=False):
            proc.peak_kib = server.peak_rss_kib()
        run.procs[0].peak_kib = proc_status_kib(upstream.pid, "VmHWM")
        for server in servers:
            server.stop()
        if args.verbose:
            print(f"{name}: waiting for the job worker", file=sys.stderr, flush=True)
        run.jobs, run.drain_seconds = drain(workspace.env, worker, args.drain_timeout)
        run.procs[-1].peak_kib = worker.peak_rss_kib()
        worker.stop()
        rows = django_run(
            _ROWS_CODE,
            env=workspace.env,
            conversation_ids=list(conversations.values()),
            expected_reply=upstream.reply,
        )
        run.db = account(run.turns, conversations, rows)
    finally:
        for server in servers:
            server.stop()
        if worker is not None:
            worker.stop()
        upstream.stop()
        logs = sorted(workspace.path.glob("*.log"))
        run.logs = {path.stem: scan_log(path) for path in logs}
        problems = bool(sum(run.errors().values()) or run.db.get("problems") or not run.db)
        problems = problems or any(log["tracebacks"] for log in run.logs.values())
        if args.logs or problems:
            target = Path(args.logs or tempfile.mkdtemp(prefix="memorychat-load-")) / name
            target.mkdir(parents=True, exist_ok=True)
            for path in logs:
                shutil.copy2(path, target / path.name)
            run.kept_logs = str(target)
        workspace.cleanup()
        if drop_database is not None:
            drop_database()
        if name == "postgres":
            with contextlib.suppress(Exception):
                _redis_cleanup(args.redis_url, redis_prefix)
    return run


def _redis_version(url: str) -> str:
    import redis

    client = redis.Redis.from_url(url)
    try:
        return client.info("server")["redis_version"]
    finally:
        client.close()


# -- the report -------------------------------------------------------------------------------


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _pair(a: float | None, b: float | None) -> str:
    return f"{_ms(a)} / {_ms(b)}"


def _mb(kib: int) -> str:
    return f"{kib / 1024:.0f} MB"


def _errors_text(run: StackRun) -> str:
    errors = run.errors()
    total = sum(errors.values())
    text = f"{total} ({run.error_rate():.2%})"
    if errors:
        text += ": " + ", ".join(f"{kind} {n}" for kind, n in errors.most_common())
    return text


def _jobs_text(run: StackRun) -> str:
    jobs = run.jobs
    if not jobs:
        return "—"
    runs = jobs.get("runs", {})
    tasks = jobs.get("tasks", {})
    summarise = {k.split(":")[1]: n for k, n in tasks.items() if k.startswith("summarise_")}
    later = sum(jobs.get("later", {}).values())
    return (
        f"summary runs: {runs.get('done', 0)} done, {runs.get('failed', 0)} failed,"
        f" {runs.get('queued', 0) + runs.get('running', 0)} unfinished;"
        f" jobs: {summarise.get('SUCCESSFUL', 0)} successful,"
        f" {sum(n for k, n in tasks.items() if k.endswith(':FAILED'))} failed"
        f" ({later} stale-run checks due later); queue drained"
        f" {run.drain_seconds:.0f} s after the last turn"
    )


def _logs_text(run: StackRun) -> str:
    parts = []
    for name, found in run.logs.items():
        bits = [f"{found['tracebacks']} tracebacks"]
        if found["warnings"]:
            bits.append(f"{found['warnings']} warnings")
        parts.append(f"{name}: {', '.join(bits)}")
    return "; ".join(parts) or "—"


def _second_tab_text(run: StackRun) -> str:
    tabs = run.second_tabs
    expected = sum(t.expected for t in tabs)
    whole = sum(t.whole(run.reply) for t in tabs)
    missing = sum(max(t.expected - len(t.ends), 0) for t in tabs)
    gaps = sum(t.gaps(run.reply) for t in tabs)
    users = sum(t.whole(run.reply) < t.expected for t in tabs)
    where = "on the other server process" if run.servers > 1 else "on the same process"
    return (
        f"{len(tabs)} tabs {where}: {whole} of {expected} replies seen whole;"
        f" {missing} reply_end never arrived, {gaps} complete with text missing;"
        f" {users} users' second tab missed something"
        + f"; {sum(t.frames for t in tabs)} frames received"
        + f" ({sum(t.snapshots for t in tabs)} live snapshots);"
        + f" {sum(t.synced for t in tabs)} replies completed by a sync request"
        + (
            "; readers stopped early: "
            + ", ".join(
                f"{why} (x{n})"
                for why, n in Counter(t.ended_by for t in tabs if t.ended_by).most_common(3)
            )
            if any(t.ended_by for t in tabs)
            else ""
        )
        + (
            f"; {sum(not t.connected for t in tabs)} not connected"
            if any(not t.connected for t in tabs)
            else ""
        )
    )


def server_cpu_per_turn(run: StackRun) -> float:
    cpu = sum(p.cpu for p in run.procs if p.role.startswith("server"))
    return 1000 * cpu / max(len(run.answered()), 1)


def stack_table(run: StackRun) -> list[str]:
    total = run.users * run.turns_per_user
    answered = len(run.answered())
    complete = sum(t.outcome == "complete" and t.text_ok for t in run.turns)
    db = run.db
    lag = percentile([x * 1000 for x in run.loop_lag], 99)
    by_server = ""
    if run.servers > 1:
        by_server = "; ".join(
            f"server {k + 1}: "
            + _pair(
                percentile([t.ttft * 1000 for t in run.turns if t.server == k and t.ttft], 50),
                percentile([t.ttft * 1000 for t in run.turns if t.server == k and t.ttft], 95),
            )
            for k in range(run.servers)
        )
    cpu = "—"
    if run.wall:
        cpu = ", ".join(
            f"{p.role} {p.cpu / run.wall:.0%}"
            + (
                f" (event loop {p.main_cpu / run.wall:.0%}, ORM threads"
                f" {(p.cpu - p.main_cpu) / run.wall:.0%})"
                if p.role.startswith("server")
                else ""
            )
            for p in run.procs
        )
        cpu += f", clients (this process) {run.client_cpu / run.wall:.0%}"
        cpu += (
            f"; whole machine {run.machine_cpu:.0%} of {cpus()} CPUs busy (load average"
            f" {' → '.join(f'{x:.1f}' for x in run.load)}, other work included)"
        )
    rows = [
        ("configuration", run.label + f" ({run.versions})"),
        (
            "load",
            f"{run.users} users x {run.turns_per_user} turns = {total} turns, one conversation"
            f" each, back to back; MESSAGES_PER_MINUTE={run.rate_limit}",
        ),
        ("turns answered / complete and exact", f"{answered} / {complete} of {total}"),
        ("errors (rate)", _errors_text(run)),
        (
            "**lost / duplicated messages** (database)",
            f"**{db.get('lost')} / {db.get('duplicated')}**",
        ),
        (
            "stored messages",
            f"{db.get('messages')} of {db.get('expected')} expected (user {db.get('user')},"
            f" replies {db.get('assistant')}: complete {db.get('complete')}, equal to the"
            f" upstream's text {db.get('exact')}; repeated client_ids {db.get('client_ids')})",
        ),
        (
            "app TTFT p50 / p95 ms",
            f"{_pair(run.ttft('app', 50), run.ttft('app', 95))} (n={len(run.app_ttfts())})"
            + (f"; {by_server}" if by_server else ""),
        ),
        (
            "direct TTFT p50 / p95 ms",
            f"{_pair(run.ttft('direct', 50), run.ttft('direct', 95))}"
            f" (n={len(run.direct_ttfts())}, {run.direct_errors} errors)",
        ),
        ("**added TTFT p50 / p95 ms**", f"**{_pair(run.added(50), run.added(95))}**"),
        (
            "turn p50 / p95 ms (send → reply_end)",
            _pair(percentile(run.durations(), 50), percentile(run.durations(), 95)),
        ),
        (
            "connect p50 / p95 ms",
            _pair(
                percentile([c * 1000 for c in run.connects], 50),
                percentile([c * 1000 for c in run.connects], 95),
            )
            + (f"; {run.reconnects} reconnects" if run.reconnects else ""),
        ),
        ("wall time, throughput", f"{run.wall:.1f} s, {run.throughput():.1f} turns/s"),
        (
            "**peak RSS per process** (VmHWM)",
            ", ".join(f"{p.role} {_mb(p.peak_kib)}" for p in run.procs if p.role != "upstream")
            + f" (upstream {_mb(run.procs[0].peak_kib)})",
        ),
        ("CPU during the load (share of one core)", cpu),
        (
            "server CPU per answered turn",
            f"{server_cpu_per_turn(run):.1f} ms" if run.answered() else "—",
        ),
        ("background jobs", _jobs_text(run)),
        ("process logs", _logs_text(run)),
        ("client event-loop lag p99", f"{_ms(lag)} ms"),
    ]
    if run.second_tabs:
        rows.insert(6, ("second tabs (watching)", _second_tab_text(run)))
    lines = [f"### {run.name}", "", "| measure | value |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    notes = []
    if db.get("problems"):
        notes.append("database problems: " + "; ".join(db["problems"][:10]))
    details = Counter(t.detail for t in run.turns if t.error and t.detail)
    if details:
        notes.append(
            "error details: " + "; ".join(f"{d} (x{n})" for d, n in details.most_common(5))
        )
    if run.connect_errors:
        notes.append(
            "connect errors: "
            + "; ".join(f"{d} (x{n})" for d, n in Counter(run.connect_errors).most_common(3))
        )
    for name, found in run.logs.items():
        if found["exceptions"]:
            notes.append(
                f"{name} log exceptions: "
                + "; ".join(f"`{e}` (x{n})" for e, n in found["exceptions"])
            )
    jobs = run.jobs
    if jobs.get("failures") or jobs.get("run_errors"):
        notes.append(f"job failures: {jobs.get('failures')}; run errors: {jobs.get('run_errors')}")
    if run.kept_logs:
        notes.append(f"logs kept in {run.kept_logs}")
    if notes:
        lines += ["", *(f"- {note}" for note in notes)]
    return lines


def report(runs: list[StackRun], args, seconds: float) -> str:
    lines = [
        f"## load: {args.users} websocket users x {args.turns} turns",
        "",
        f"- machine: {platform.machine()}, {cpus()} CPUs, Python {platform.python_version()},"
        f" {platform.system()} {platform.release()}; {args.server}"
        f" {metadata.version(args.server)}, channels {metadata.version('channels')},"
        f" channels-redis {metadata.version('channels_redis')}, openai"
        f" {metadata.version('openai')}, websockets {metadata.version('websockets')}",
        f"- upstream: `bench/upstream.py` in its own process, {args.words} words per reply, one"
        f" every {args.interval * 1000:.0f} ms ({args.words * args.interval:.2f} s of"
        f" streaming); {args.direct} direct loops beside the users for the baseline TTFT",
        f"- users connect within {args.stagger:.0f} s, then send back to back"
        + (f" with {args.think:.1f} s between turns" if args.think else "")
        + f"; a turn times out after {args.timeout:.0f} s; DEBUG=false;"
        " MAX_CONCURRENT_STREAMS at its default (3); MESSAGES_PER_MINUTE raised (see the"
        " tables) since a user here sends one message per reply",
        "- the db_worker summarises with the offline extractive summariser (no key in its"
        " environment): the fake upstream cannot answer the summary's JSON schema",
        *(
            [
                "- `--second-tab`: each user also keeps a second tab open on its conversation"
                " that only watches (on the other server process on the two-process stack);"
                " it must see every reply whole"
            ]
            if args.second_tab
            else []
        ),
        f"- run took {seconds:.0f} s in all (migrations, users, draining the job queue)",
        "",
        "| stack | server processes | turns | errors | lost / duplicated | added TTFT p50 / p95"
        " ms | app TTFT p95 ms | turns/s | peak RSS per process |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for run in runs:
        peaks = ", ".join(
            f"{p.role} {p.peak_kib / 1024:.0f}" for p in run.procs if p.role != "upstream"
        )
        lines.append(
            f"| {run.name} | {run.servers} | {len(run.answered())} / {len(run.turns)}"
            f" | {run.error_rate():.2%} | {run.db.get('lost')} / {run.db.get('duplicated')}"
            f" | {_pair(run.added(50), run.added(95))} | {_ms(run.ttft('app', 95))}"
            f" | {run.throughput():.1f} | {peaks} MB |"
        )
    for run in runs:
        lines += ["", *stack_table(run)]
    return "\n".join(lines)


def raw(runs: list[StackRun], args) -> dict:
    return {
        "args": {k: v for k, v in vars(args).items() if not isinstance(v, Path)},
        "stacks": [
            {
                "name": run.name,
                "label": run.label,
                "wall": run.wall,
                "turns": [
                    [t.user, t.turn, t.server, t.outcome, t.ttft, t.duration, t.text_ok]
                    for t in run.turns
                ],
                "direct_ttft": [s.ttft for s in run.direct],
                "errors": dict(run.errors()),
                "connect_errors": run.connect_errors,
                "procs": [vars(p) for p in run.procs],
                "db": run.db,
                "jobs": run.jobs,
                "logs": run.logs,
                "client_cpu": run.client_cpu,
                "machine_cpu": run.machine_cpu,
                "load": run.load,
                "second_tabs": [
                    [t.user, t.expected, len(t.ends), t.whole(run.reply), t.frames, t.ended_by]
                    for t in run.second_tabs
                ],
                "loop_lag_p99": percentile(run.loop_lag, 99),
            }
            for run in runs
        ],
    }


# -- command line -------------------------------------------------------------------------------


def _stacks(text: str) -> tuple[str, ...]:
    names = tuple(item.strip() for item in text.split(",") if item.strip())
    unknown = [n for n in names if n not in STACKS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"stacks are {', '.join(STACKS)}; got {text!r}")
    return names


def parse_args(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=None, help=f"default {USERS}")
    parser.add_argument("--turns", type=int, default=None, help=f"per user, default {TURNS}")
    parser.add_argument(
        "--quick", action="store_true", help=f"{QUICK_USERS} users x {QUICK_TURNS} turns"
    )
    parser.add_argument(
        "--stack", type=_stacks, default=STACKS, help="sqlite,postgres (the default) or one"
    )
    parser.add_argument(
        "--server",
        choices=SERVERS,
        default="uvicorn",
        help="uvicorn (make serve, the default) or daphne (make run)",
    )
    parser.add_argument("--words", type=int, default=WORDS, help=f"words per reply ({WORDS})")
    parser.add_argument(
        "--interval", type=float, default=INTERVAL, help=f"seconds per word ({INTERVAL})"
    )
    parser.add_argument(
        "--stagger", type=float, default=STAGGER, help=f"seconds to start all users ({STAGGER})"
    )
    parser.add_argument(
        "--second-tab",
        action="store_true",
        help="each user also keeps a watching tab open (on the other server process when there"
        " are two) that must see every reply whole",
    )
    parser.add_argument(
        "--think", type=float, default=0.0, help="seconds between a reply and the next message"
    )
    parser.add_argument(
        "--direct", type=int, default=DIRECT, help=f"direct baseline loops ({DIRECT})"
    )
    parser.add_argument(
        "--timeout", type=float, default=TIMEOUT, help=f"seconds per turn ({TIMEOUT:.0f})"
    )
    parser.add_argument(
        "--messages-per-minute",
        type=int,
        default=0,
        help="the abuse limit for the run (default: twice what a user can send, at least 120)",
    )
    parser.add_argument(
        "--drain-timeout",
        type=float,
        default=DRAIN_TIMEOUT,
        help=f"seconds to wait for the job queue afterwards ({DRAIN_TIMEOUT:.0f})",
    )
    parser.add_argument(
        "--postgres-url",
        default=PG_ADMIN,
        help=f"an admin URL; a scratch database is made beside it ({PG_ADMIN})",
    )
    parser.add_argument(
        "--redis-url", default=REDIS, help=f"keys get a prefix of the run's ({REDIS})"
    )
    parser.add_argument("--logs", type=Path, default=None, help="keep the process logs here")
    parser.add_argument("--json", type=Path, default=None, help="also write raw figures here")
    parser.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    args = parser.parse_args(argv)
    if args.users is None:
        args.users = QUICK_USERS if args.quick else USERS
    if args.turns is None:
        args.turns = QUICK_TURNS if args.quick else TURNS
    if args.users < 1 or args.turns < 1:
        parser.error("--users and --turns must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    began = time.perf_counter()
    runs = [run_stack(name, args) for name in args.stack]
    print(report(runs, args, time.perf_counter() - began))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if args.verbose:
        print(f"(this process peaked at {peak_mb:.0f} MB)", file=sys.stderr)
    if args.json:
        args.json.write_text(json.dumps(raw(runs, args), indent=2) + "\n", encoding="utf-8")
    return 0 if all(run.clean() for run in runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
