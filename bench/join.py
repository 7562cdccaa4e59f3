"""Benchmark: a tab that joins a reply in flight (issue 36: its first frame within 200 ms of
connecting, p95, with 50 replies in flight), and whether what it shows is exact.

Per round, N chats (50) each send one message over a websocket; the fake upstream
(``bench/upstream.py``, its own process) streams a long reply (600 words at 20 words/s: 30 s),
so every reply is in flight for the whole join window (a join that comes after its reply
ended all the same, on a host too loaded to keep the schedule, is counted ``late``, apart).
Once each chat has seen its first chunk, every chat "reloads": its sending tab closes and
a NEW websocket of the same user opens on the conversation, the joins spread evenly over
``--join-spread`` seconds in a shuffled order. Timed from the start of the connect (TCP,
upgrade, sign-in, ownership) to:

* the handshake (``open``: the consumer has checked the session, the user's socket slots
  and the conversation, and entered its room);
* ``ready`` (the socket's first frame, whose ``streaming`` must be the reply's id);
* the first frame carrying the reply so far (docs/protocol.md, "Resuming a reply in
  flight"): the ``resume``, or a ``snapshot`` if one comes first.

The joined tab then reads to ``reply_end`` and folds the frames as the page does
(``JoinedView``): from the reply's own process, the resume's text and the chunks after it
(each chunk's ``seq`` exactly one more than the last: no gap, nothing doubled); from another
process, the resume and then snapshots (each extending what is shown). It must end on the
stored reply's text, its HTML (appended blocks + last tail) equal to ``reply_end``'s; and
the database must hold each turn once, the reply complete and equal to the upstream's.

Two shapes in one run, one after the other on one SQLite database:

* ``one``: uvicorn, one process, the in-memory channel layer;
* ``two``: uvicorn ``--workers 2`` on Redis (``--redis-url``). Which worker a connection
  lands on is the kernel's choice; this script reads it from ``/proc`` (the worker that holds
  the accepted socket, ``socket_owner``), for the sending tab (the reply runs in its worker)
  and for the joining one. A join that lands on the reply's worker is measured (``same``)
  and tried again with another new tab, up to ``--attempts`` tabs, so the other worker's
  path (``chat.join`` through Redis) gets its samples; the report says how often the first
  tab landed on the other worker. The frames agree: only a tab on another worker gets
  snapshots.

    .venv/bin/python bench/join.py                                        # both shapes
    .venv/bin/python bench/join.py --redis-url redis://127.0.0.1:6379/3 --rounds 3
    .venv/bin/python bench/join.py --shapes one --chats 10 --rounds 1     # a quick look
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from websockets.asyncio.client import connect  # noqa: E402

from bench.data import load_json  # noqa: E402
from bench.harness import (  # noqa: E402
    AppServer,
    ChatSocket,
    Seat,
    Upstream,
    Workspace,
    create_seats,
    percentile,
    stored_messages,
)

CHATS = 50
ROUNDS = 3
WORDS = 600
RATE = 20.0  # words (SSE events) per second: a 600-word reply is 30 s in flight
JOIN_SPREAD = 6.0  # seconds over which the N joins of a round are spread
START_SPREAD = 1.0  # seconds over which the N messages of a round are sent
ATTEMPTS = 3  # tabs per join at most, in the two-worker shape, to land on the other worker
TARGET_P95_MS = 200.0
SHAPES = ("one", "two")
PROMPTS = load_json("prompts.json")


# -- what a joined tab shows (pure: tests/bench/test_join.py) ----------------------------------


@dataclass
class JoinedView:
    """The frames of one reply, folded as the page folds them (docs/protocol.md): a
    ``resume`` sets the text and HTML so far; a ``chunk`` with the next ``seq`` appends (one
    whose ``seq`` is already shown is skipped, and counted); a ``snapshot`` replaces
    everything when it is not older than what is shown; ``reply_end`` ends it. Anything the
    page could not show exactly is a ``problem``."""

    reply_id: int
    text: str = ""
    html: str = ""  # final blocks so far
    tail: str = ""  # the open block, replaced by each chunk
    seq: int | None = None  # last chunk shown; None before the resume
    resumed: bool = False
    chunks: int = 0
    snapshots: int = 0
    skipped: int = 0  # chunks already in the resume (the page skips them)
    end: dict | None = None
    problems: list[str] = field(default_factory=list)

    def take(self, frame: dict) -> bool:
        """Fold one frame; True once it carries the reply so far for the first time."""
        if frame.get("id") != self.reply_id:
            return False
        kind = frame["type"]
        first = False
        if kind == "resume":
            if self.resumed:
                self.problems.append("a second resume")
            first = not self.resumed and self.seq is None
            self.resumed = True
            self._show(frame["text"], frame["html"], frame["tail"], frame["seq"])
        elif kind == "snapshot":
            self.snapshots += 1
            first = self.seq is None
            if frame["seq"] is not None and self.seq is not None and frame["seq"] < self.seq:
                return False  # older than what is shown: the page skips it
            if not frame["text"].startswith(self.text):
                self.problems.append(f"snapshot seq {frame['seq']} does not extend the text")
            self._show(frame["text"], frame["html"], "", frame["seq"])
        elif kind == "chunk":
            self.chunks += 1
            if self.seq is None:
                self.problems.append(f"chunk seq {frame['seq']} before any resume")
            elif frame["seq"] <= self.seq:
                self.skipped += 1
                return False
            elif frame["seq"] != self.seq + 1:
                self.problems.append(f"gap: chunk seq {frame['seq']} after {self.seq}")
            self.text += frame["text"]
            self.html += frame["html"]
            self.tail = frame["tail"]
            self.seq = frame["seq"]
        elif kind == "reply_end":
            self.end = frame
        return first

    def _show(self, text: str, html: str, tail: str, seq: int | None) -> None:
        self.text, self.html, self.tail = text, html, tail
        self.seq = seq if seq is not None else self.seq or 0

    @property
    def shown_html(self) -> str:
        return self.html + self.tail

    def check(self, expected_text: str) -> list[str]:
        """What the tab shows at the end against the stored reply."""
        problems = list(self.problems)
        if self.end is None:
            problems.append("no reply_end")
        elif self.end["status"] != "complete":
            problems.append(f"reply_end status {self.end['status']}")
        if not self.resumed:
            problems.append("no resume")
        if self.snapshots == 0:  # the reply's own process: the chunks bring every word
            if self.text != expected_text:
                problems.append(
                    f"text {len(self.text.split())} words, stored {len(expected_text.split())}"
                )
            elif self.end is not None and self.shown_html != self.end["html"]:
                problems.append("the chunks' HTML differs from reply_end's")
        elif not expected_text.startswith(self.text):  # another process: reply_end completes it
            problems.append("the last snapshot is not a prefix of the stored reply")
        return problems


# -- which worker holds a connection ------------------------------------------------------------


def _endpoint(field_: str) -> tuple[str, int]:
    address, port = field_.split(":")
    return address, int(port, 16)


def socket_inode(tcp_table: str, server_port: int, client_port: int) -> int | None:
    """The inode of the server's side of the loopback connection from ``client_port`` to
    ``server_port``, from a ``/proc/net/tcp`` table (IPv4)."""
    for line in tcp_table.splitlines()[1:]:
        fields = line.split()
        if len(fields) < 10:
            continue
        (_, local), (_, remote) = _endpoint(fields[1]), _endpoint(fields[2])
        if local == server_port and remote == client_port:
            return int(fields[9])
    return None


def socket_owner(pids: list[int], server_port: int, client_port: int) -> int | None:
    """The process among ``pids`` (a server and its workers) that holds the accepted socket
    of the connection from ``client_port``: the worker that serves that tab."""
    with open("/proc/net/tcp", encoding="ascii") as table:
        inode = socket_inode(table.read(), server_port, client_port)
    if inode is None:
        return None
    target = f"socket:[{inode}]"
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    return pid
            except OSError:
                continue
    return None


# -- one shape -----------------------------------------------------------------------------------


@dataclass
class Join:
    """One new tab on a conversation whose reply is in flight."""

    round: int
    attempt: int
    open_ms: float | None = None  # connect -> the websocket handshake done (accepted)
    ready_ms: float | None = None
    first_ms: float | None = None  # connect -> the first frame carrying the reply so far
    first_kind: str = ""
    worker: str = ""  # "same" or "other" (than the reply's), "" with one process
    frames_say: str = ""  # "chunks" or "snapshots": what followed the resume
    resume_seq: int | None = None
    age_s: float = 0.0  # since the reply's first chunk, when the tab began to connect
    late: bool = False  # the reply had ended before the tab opened: nothing to join
    problems: list[str] = field(default_factory=list)


@dataclass
class Shape:
    name: str
    joins: list[Join] = field(default_factory=list)
    load: list[float] = field(default_factory=list)
    stored: dict = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def firsts(self, worker: str | None = None) -> list[float]:
        return [
            j.first_ms
            for j in self.joins
            if j.first_ms is not None and (worker is None or j.worker == worker)
        ]

    def readies(self) -> list[float]:
        return [j.ready_ms for j in self.joins if j.ready_ms is not None and not j.late]

    def opens(self) -> list[float]:
        return [j.open_ms for j in self.joins if j.open_ms is not None and not j.late]


async def _open_tab(server: AppServer, seat: Seat, conversation: int) -> ChatSocket:
    return await ChatSocket(server.ws_url, seat.session, conversation).connect()


async def _owner(server: AppServer, tab: ChatSocket) -> int | None:
    client_port = tab.connection.local_address[1]
    return await asyncio.to_thread(socket_owner, server.pids(), server.port, client_port)


async def _join(
    server: AppServer,
    seat: Seat,
    conversation: int,
    reply_id: int,
    round_: int,
    attempt: int,
    *,
    first_chunk: float,
    reply_seconds: float,
) -> tuple[Join, ChatSocket, JoinedView, int | None]:
    """Open a new tab and time it to its first frame carrying the reply so far."""
    join = Join(round=round_, attempt=attempt)
    view = JoinedView(reply_id)
    perf = time.perf_counter
    started = perf()
    join.age_s = started - first_chunk
    tab = ChatSocket(server.ws_url, seat.session, conversation)
    tab.connection = await connect(
        tab.url,
        origin=tab.origin,
        additional_headers=tab.headers,
        open_timeout=30,
        compression=None,
        max_queue=None,
    )
    join.open_ms = (perf() - started) * 1000  # the handshake: the consumer accepted
    tab.ready = await tab.receive(30)
    join.ready_ms = (perf() - started) * 1000
    if tab.ready.get("streaming") is None and join.age_s > reply_seconds - 1.0:
        # A loaded host: this chat's reply ended before its turn to join came.
        join.late = True
        view.end = {}
        return join, tab, view, None
    if tab.ready.get("streaming") != reply_id:
        join.problems.append(f"ready.streaming {tab.ready.get('streaming')}, not {reply_id}")
    try:
        while view.end is None:
            frame = await tab.receive(30)
            if view.take(frame):
                join.first_ms = (perf() - started) * 1000
                join.first_kind = frame["type"]
                join.resume_seq = view.seq
                break
    except TimeoutError:
        join.problems.append("nothing of the reply within 30 s")
    return join, tab, view, (await _owner(server, tab) if server.workers > 1 else None)


async def _follow(join: Join, tab: ChatSocket, view: JoinedView, expected: str) -> None:
    """Read the joined tab to ``reply_end`` and check what it shows against the reply."""
    try:
        while view.end is None:
            view.take(await tab.receive(60))
    except TimeoutError:
        join.problems.append("no reply_end within 60 s")
    finally:
        await tab.close()
    join.frames_say = "snapshots" if view.snapshots else "chunks"
    join.problems += view.check(expected)


class JoinSchedule:
    """When each chat reloads: once every chat's reply has sent a chunk (all in flight), the
    chats in ``order`` one ``step`` seconds after another."""

    def __init__(self, order: list[int], step: float):
        self.order = order
        self.step = step
        self.waiting = len(order)
        self.all_in = asyncio.Event()
        self.begin = 0.0

    async def in_flight(self, index: int) -> float:
        """Chat ``index`` has its reply in flight; returns its join time once all have."""
        self.waiting -= 1
        if self.waiting == 0:
            self.begin = time.perf_counter()
            self.all_in.set()
        await self.all_in.wait()
        return self.begin + self.order.index(index) * self.step


async def one_chat(
    server: AppServer,
    seat: Seat,
    conversation: int,
    text: str,
    *,
    start_at: float,
    schedule: JoinSchedule,
    index: int,
    round_: int,
    attempts: int,
    expected: str,
    reply_seconds: float,
) -> list[Join]:
    """Send a message, wait for the reply's first chunk and for every chat to be in flight,
    then reload at this chat's join time: close the tab, open a new one. With workers, a
    new tab that landed on the reply's worker stays open (a second tab, followed to the end
    like the others) and another one opens, up to ``attempts`` tabs."""
    sender = await _open_tab(server, seat, conversation)
    owner = await _owner(server, sender) if server.workers > 1 else None
    await asyncio.sleep(max(0.0, start_at - time.perf_counter()))
    await sender.send({"type": "send", "text": text, "client_id": f"j{conversation}-{round_}"})
    reply_id = None
    while True:
        frame = await sender.receive(60)
        if frame["type"] == "reply_start":
            reply_id = frame["id"]
        elif frame["type"] == "chunk" and frame["id"] == reply_id:
            first_chunk = time.perf_counter()
            break
        elif frame["type"] == "error":
            raise RuntimeError(f"chat {index}: {frame}")
    join_at = await schedule.in_flight(index)
    await asyncio.sleep(max(0.0, join_at - time.perf_counter()))
    await sender.close()  # a reload: the old tab goes first
    joins, followers = [], []
    for attempt in range(attempts):
        join, tab, view, worker = await _join(
            server,
            seat,
            conversation,
            reply_id,
            round_,
            attempt,
            first_chunk=first_chunk,
            reply_seconds=reply_seconds,
        )
        if owner is not None and worker is not None:
            join.worker = "same" if worker == owner else "other"
        joins.append(join)
        if join.late:
            await tab.close()
            break
        followers.append(asyncio.create_task(_follow(join, tab, view, expected)))
        if join.worker != "same":
            break
    await asyncio.gather(*followers)
    return joins


async def drive(shape: Shape, server: AppServer, seats: list[Seat], column: int, args) -> None:
    rng = random.Random(7)
    attempts = args.attempts if server.workers > 1 else 1

    async def one_round(round_: int, chats: int, measured: bool) -> None:
        now = time.perf_counter()
        start_at = [now + 0.5 + i * args.start_spread / chats for i in range(chats)]
        order = list(range(chats))
        rng.shuffle(order)
        schedule = JoinSchedule(order, args.join_spread / chats)
        tasks = [
            asyncio.create_task(
                one_chat(
                    server,
                    seats[i],
                    seats[i].conversations[column],
                    PROMPTS["stream_question"].format(chat=i, turn=round_),
                    start_at=start_at[i],
                    schedule=schedule,
                    index=i,
                    round_=round_,
                    attempts=attempts,
                    expected=args.expected,
                    reply_seconds=args.words / args.rate,
                )
            )
            for i in range(chats)
        ]
        async with asyncio.timeout(180):
            results = await asyncio.gather(*tasks)
        if measured:
            shape.joins += [j for joins in results for j in joins]

    await one_round(0, 1, measured=False)  # warm-up: imports, connections, the first join
    shape.load.append(os.getloadavg()[0])
    for round_ in range(1, args.rounds + 1):
        await one_round(round_, args.chats, measured=True)
        if args.verbose:
            firsts = [j.first_ms for j in shape.joins if j.round == round_ and j.first_ms]
            print(
                f"  {shape.name} round {round_}: first frame p50"
                f" {percentile(firsts, 50):.1f} ms p95 {percentile(firsts, 95):.1f} ms",
                file=sys.stderr,
                flush=True,
            )
    shape.load.append(os.getloadavg()[0])


def run_shape(name: str, workspace: Workspace, seats: list[Seat], column: int, args) -> Shape:
    shape = Shape(name)
    began = time.perf_counter()
    env = dict(workspace.env)
    if name == "two":
        env.update(REDIS_URL=args.redis_url, REDIS_PREFIX=f"bench-join-{os.getpid()}")
    server = AppServer(
        env,
        log_path=workspace.path / f"server-{name}.log",
        server="uvicorn",
        workers=2 if name == "two" else 1,
    )
    with server:
        try:
            asyncio.run(drive(shape, server, seats, column, args))
        except BaseException:
            print(server.log_tail(), file=sys.stderr)
            raise
    conversations = [s.conversations[column] for s in seats[: args.chats]]
    shape.stored = stored_messages(workspace.env, conversations, args.expected)
    turns = 1 + (args.chats * args.rounds)
    wanted = {"user": turns, "assistant": turns, "complete": turns, "exact": turns}
    for key, value in wanted.items():
        if shape.stored.get(key) != value:
            shape.problems.append(f"database {key}: {shape.stored.get(key)}, expected {value}")
    shape.seconds = time.perf_counter() - began
    return shape


def run(args) -> list[Shape]:
    upstream = Upstream(interval=1.0 / args.rate, words=args.words).start()
    args.expected = upstream.reply
    workspace = Workspace(upstream_url=upstream.base_url, MESSAGES_PER_MINUTE="100000")
    try:
        workspace.migrate()
        seats = create_seats(workspace.env, args.chats, len(args.shapes), prefix="join")
        return [
            run_shape(name, workspace, seats, column, args)
            for column, name in enumerate(args.shapes)
        ]
    finally:
        upstream.stop()
        workspace.cleanup()


# -- the report ---------------------------------------------------------------------------------


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:.1f}"


def report(shapes: list[Shape], args) -> str:
    lines = [
        f"## join: a new tab on a reply in flight ({args.chats} replies in flight,"
        f" {args.rounds} rounds)",
        "",
        f"- upstream: {args.words} words at {args.rate:g} words/s"
        f" ({args.words / args.rate:.0f} s a reply), own process; messages sent over"
        f" {args.start_spread:g} s, joins spread over {args.join_spread:g} s once every reply"
        " has sent a chunk",
        "- one: uvicorn, one process, in-memory channel layer; two: uvicorn --workers 2,"
        " Redis; SQLite (WAL), DEBUG=false",
        "",
        "| shape | joins | open p50 / p95 ms | ready p50 / p95 ms | first frame p50 / p95 ms"
        " | max ms | same worker: n, p50 / p95 | other worker: n, p50 / p95"
        " | first tab on the other"
        " | exact | load 1-min |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for shape in shapes:
        firsts, readies, opens = shape.firsts(), shape.readies(), shape.opens()
        cells = []
        for worker in ("same", "other"):
            values = shape.firsts(worker)
            cells.append(
                f"{len(values)}, {_ms(percentile(values, 50))} / {_ms(percentile(values, 95))}"
                if values
                else "—"
            )
        firsts_tabs = [j for j in shape.joins if j.attempt == 0 and j.worker]
        other_first = (
            f"{sum(j.worker == 'other' for j in firsts_tabs)} of {len(firsts_tabs)}"
            if firsts_tabs
            else "—"
        )
        bad = [j for j in shape.joins if j.problems]
        checked = [j for j in shape.joins if not j.late]
        late = len(shape.joins) - len(checked)
        lines.append(
            f"| {shape.name} | {len(firsts)}{f' (+{late} late)' if late else ''}"
            f" | {_ms(percentile(opens, 50))} / {_ms(percentile(opens, 95))}"
            f" | {_ms(percentile(readies, 50))} / {_ms(percentile(readies, 95))}"
            f" | {_ms(percentile(firsts, 50))} / {_ms(percentile(firsts, 95))}"
            f" | {_ms(max(firsts) if firsts else None)}"
            f" | {cells[0]} | {cells[1]} | {other_first}"
            f" | {len(checked) - len(bad)} of {len(checked)}"
            f" | {' → '.join(f'{x:.1f}' for x in shape.load)} |"
        )
    lines.append("")
    for shape in shapes:
        p95 = percentile(shape.firsts(), 95)
        ok = p95 is not None and p95 <= TARGET_P95_MS
        lines.append(
            f"- {shape.name}: first frame p95 ≤ {TARGET_P95_MS:.0f} ms:"
            f" {'met' if ok else 'NOT met'} ({_ms(p95)} ms)"
        )
        disagree = [
            j
            for j in shape.joins
            if j.worker and j.frames_say and (j.worker == "other") != (j.frames_say == "snapshots")
        ]
        if any(j.worker for j in shape.joins):
            lines.append(
                f"- {shape.name}: /proc and the frames agree on the worker for"
                f" {len(shape.joins) - len(disagree)} of {len(shape.joins)} tabs"
            )
        problems = shape.problems + [
            f"round {j.round} attempt {j.attempt}: {p}" for j in shape.joins for p in j.problems
        ]
        lines.append(
            f"- {shape.name}: exactness: "
            + (
                "every joined tab showed the stored reply, no gap, nothing doubled; the"
                " database holds each turn once"
                if not problems
                else "PROBLEMS: " + "; ".join(problems[:8])
            )
        )
        lines.append(f"- {shape.name}: took {shape.seconds:.0f} s")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chats", type=int, default=CHATS, help=f"replies in flight ({CHATS})")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"measured ({ROUNDS})")
    parser.add_argument("--words", type=int, default=WORDS, help=f"words per reply ({WORDS})")
    parser.add_argument("--rate", type=float, default=RATE, help=f"words/s ({RATE:g})")
    parser.add_argument("--join-spread", type=float, default=JOIN_SPREAD)
    parser.add_argument("--start-spread", type=float, default=START_SPREAD)
    parser.add_argument(
        "--attempts", type=int, default=ATTEMPTS, help="two workers: tabs per join at most"
    )
    parser.add_argument(
        "--shapes", default=",".join(SHAPES), help="one,two (the default): which to run"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/3")
    parser.add_argument("--json", type=Path, default=None, help="also write raw figures here")
    parser.add_argument("-v", "--verbose", action="store_true", help="progress on stderr")
    args = parser.parse_args(argv)
    args.shapes = [s for s in args.shapes.split(",") if s]
    if not set(args.shapes) <= set(SHAPES):
        parser.error(f"--shapes: some of {SHAPES}")
    reply_seconds = args.words / args.rate
    if args.join_spread + args.start_spread + 3 > reply_seconds:
        parser.error("the joins would not all fall while the replies are in flight")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    shapes = run(args)
    print(report(shapes, args))
    if args.json:
        raw = [
            {
                "shape": s.name,
                "joins": [j.__dict__ for j in s.joins],
                "load": s.load,
                "stored": s.stored,
                "problems": s.problems,
            }
            for s in shapes
        ]
        args.json.write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")
    ok = all(not s.problems and not any(j.problems for j in s.joins) for s in shapes)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
