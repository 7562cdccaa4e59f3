"""Shared pieces for benchmarks that drive the real application in processes of its own.

* ``Upstream``       -- the tests' fake OpenAI-compatible model server (``tests/support``),
                        run by ``bench/upstream.py`` in its own process, streaming one fixed
                        reply at a fixed rate;
* ``bench_env``      -- a production-like environment for the app (``DEBUG=false``, a secret
                        key, ``ALLOWED_HOSTS``), on SQLite in a temporary directory by default
                        or on any ``DATABASE_URL`` / ``REDIS_URL`` (PostgreSQL + Redis);
* ``AppServer``      -- the live tests' ``config.asgi:application`` under daphne or uvicorn
                        as a subprocess (``tests/support``), with its resident memory
                        (``VmRSS``/``VmHWM``) and CPU time read from ``/proc``; start several
                        (or uvicorn workers) on one ``REDIS_URL`` for a scaled-out stack;
* ``JobWorker``      -- ``manage.py db_worker`` as a subprocess (the summary jobs the app
                        queues after turns), with its memory and CPU time;
* ``create_seats``   -- users, their signed-in session cookies and conversations, made in one
                        ``manage.py shell`` run (no password hashing: cheap for many users);
* ``ChatSocket``     -- the tests' websocket client (docs/protocol.md), timing each turn;
* ``direct_stream``  -- the same ``openai.AsyncOpenAI`` streaming call the app makes, timed
                        the same way: the baseline a turn through the app is compared with;
* ``stored_messages``-- what the database holds for some conversations, for exactness checks.

Everything here is usable from one asyncio loop with many clients at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

# Imported as bench.harness, so the project is on sys.path already: no path set-up here.
from bench.upstream import reply_text
from tests.support.live_server import (
    ROOT,
    ServerProcess,
    log_tail,
    manage,
    project_env,
    spawn,
    stop_process,
    wait_for_port,
)
from tests.support.live_server import SERVERS as SERVERS  # re-exported: the scripts' choices
from tests.support.ws_client import ChatSocket as BaseChatSocket

PYTHON = sys.executable
RESULT_MARK = "BENCH-RESULT "
MANAGE_TIMEOUT = 600  # seconds: seeding thousands of users takes a while
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


# -- /proc ----------------------------------------------------------------------------------


def proc_status_kib(pid: int, name: str) -> int:
    """A ``kB`` field of ``/proc/<pid>/status``: VmRSS (resident now), VmHWM (peak)."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(name + ":"):
                return int(line.split()[1])
    raise KeyError(name)


def cpu_seconds(pid: int) -> float:
    """User + system CPU time the process has used (``/proc/<pid>/stat`` fields 14 and 15)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# -- the fake upstream ----------------------------------------------------------------------


class Upstream:
    """``bench/upstream.py`` in its own process: one reply of ``words`` words, one SSE event of
    ``chunk_words`` words every ``interval`` seconds (the nominal rate is ``rate`` words/s)."""

    def __init__(self, *, interval: float = 0.02, words: int = 100, chunk_words: int = 1):
        self.interval = interval
        self.words = words
        self.chunk_words = chunk_words
        self.reply = reply_text(words)
        self.process: subprocess.Popen | None = None
        self.base_url = ""

    @property
    def rate(self) -> float:
        """Nominal words per second."""
        return self.chunk_words / self.interval

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self, timeout: float = 20.0) -> Upstream:
        if self.running:
            raise RuntimeError("the fake upstream is already running")
        self.process = spawn(
            [
                PYTHON,
                str(ROOT / "bench" / "upstream.py"),
                f"--interval={self.interval}",
                f"--words={self.words}",
                f"--chunk-words={self.chunk_words}",
            ],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.process.stdout.readline()  # the process prints its address first
        if not line:
            stop_process(self.process)
            raise RuntimeError("the fake upstream exited before it listened")
        self.base_url = json.loads(line)["base_url"]
        port = int(self.base_url.rsplit(":", 1)[1].split("/")[0])
        wait_for_port(port, self.process, timeout, "the fake upstream")
        return self

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        if self.process is not None and self.process.stdin is not None:
            self.process.stdin.close()
        stop_process(self.process)

    def __enter__(self) -> Upstream:
        return self if self.running else self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# -- the application ------------------------------------------------------------------------


def sqlite_url(directory: Path) -> str:
    return f"sqlite:///{Path(directory) / 'bench.sqlite3'}"


def bench_env(
    *,
    database_url: str,
    upstream_url: str = "",
    redis_url: str = "",
    **overrides: str,
) -> dict[str, str]:
    """The app's environment as in production: ``DEBUG`` off, a random ``SECRET_KEY``,
    ``ALLOWED_HOSTS`` for the loopback. Nothing of the caller's own settings leaks in."""
    env = project_env(
        strip=("DATABASE_URL", "REDIS_", "SECRET_KEY", "ALLOWED_HOSTS", "DEBUG"),
        DEBUG="false",
        SECRET_KEY=secrets.token_urlsafe(50),
        DATABASE_URL=database_url,
    )
    if upstream_url:
        env.update(OPENAI_API_KEY="bench-key", OPENAI_BASE_URL=upstream_url)
    if redis_url:
        env["REDIS_URL"] = redis_url
    env.update(overrides)
    return env


def django_run(code: str, *, env: dict[str, str], root: Path = ROOT, **values):
    """Run ``code`` in ``manage.py shell`` (of the checkout at ``root``) with ``values`` bound
    as JSON-decoded names; the code sets ``result``, which comes back decoded from JSON."""
    prelude = "import json\n" + "".join(
        f"{name} = json.loads({json.dumps(json.dumps(value))})\n" for name, value in values.items()
    )
    epilogue = f"\nprint({RESULT_MARK!r} + json.dumps(result))\n"
    out = manage(
        "shell", "-c", prelude + code + epilogue, env=env, timeout=MANAGE_TIMEOUT, root=root
    )
    for line in reversed(out.splitlines()):
        if line.startswith(RESULT_MARK):
            return json.loads(line[len(RESULT_MARK) :])
    raise RuntimeError(f"no result from manage.py shell:\n{out[-2000:]}")


class AppServer(ServerProcess):
    """The app server the live tests start (``tests.support.live_server.ServerProcess``), with
    its memory and CPU figures, covering the process and its children (uvicorn's workers)."""

    start_timeout = 60.0  # a machine under load may start it slowly

    def pids(self) -> list[int]:
        """The server process and its descendants (uvicorn's workers)."""
        found, queue = [], [self.pid]
        while queue:
            pid = queue.pop()
            found.append(pid)
            for task in Path(f"/proc/{pid}/task").glob("*/children"):
                with contextlib.suppress(OSError):
                    queue += [int(child) for child in task.read_text().split()]
        return found

    def _sum(self, read) -> float:
        total = 0
        for pid in self.pids():
            with contextlib.suppress(OSError, KeyError):  # a process that just exited
                total += read(pid)
        return total

    def rss_kib(self) -> int:
        """Resident memory now, summed over the processes."""
        return int(self._sum(lambda pid: proc_status_kib(pid, "VmRSS")))

    def peak_rss_kib(self) -> int:
        """Each process's peak resident memory (VmHWM), summed: with several processes an
        upper bound of the peak they reached together."""
        return int(self._sum(lambda pid: proc_status_kib(pid, "VmHWM")))

    def cpu_seconds(self) -> float:
        return self._sum(cpu_seconds)


class RelayServer(AppServer):
    """``bench/relay.py``'s bare relay under the same ASGI server (and workers) as the app:
    the baseline ``bench/stream.py`` reports the app against."""

    def command(self) -> list[str]:
        command = super().command()
        return [
            ("bench.relay:application" if c == "config.asgi:application" else c) for c in command
        ]


class StatementsServer(AppServer):
    """The app with its SQL statements timed (``bench/statements.py``), writing them under
    ``prefix``: what ``bench/stream.py --statements`` serves for its largest level."""

    def __init__(self, env: dict[str, str], *, prefix: Path, **kwargs):
        super().__init__({**env, "BENCH_STATEMENTS_PATH": str(prefix)}, **kwargs)

    def command(self) -> list[str]:
        command = super().command()
        return [
            ("bench.statements_asgi:application" if c == "config.asgi:application" else c)
            for c in command
        ]


class JobWorker:
    """``manage.py db_worker`` on every queue without the reloader, as ``make serve`` runs it
    beside the server, logging to ``log_path``; its memory and CPU time as for ``AppServer``."""

    def __init__(self, env: dict[str, str], *, log_path: Path, worker_id: str = ""):
        self.env = env
        self.log_path = Path(log_path)
        self.worker_id = worker_id
        self.process: subprocess.Popen | None = None

    def command(self) -> list[str]:
        worker_id = ["--worker-id", self.worker_id] if self.worker_id else []
        return [PYTHON, "manage.py", "db_worker", "--queue-name", "*", "--no-reload", *worker_id]

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self, settle: float = 1.0) -> JobWorker:
        """Start it; fail if it exits within ``settle`` seconds (bad settings, no database)."""
        if self.running:
            raise RuntimeError("the job worker is already running")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("w") as log:
            self.process = spawn(
                self.command(), cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        try:
            self.process.wait(timeout=settle)
        except subprocess.TimeoutExpired:
            return self
        raise RuntimeError(
            f"the job worker exited with {self.process.returncode}:\n{self.log_tail()}"
        )

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, timeout: float = 30.0) -> None:
        stop_process(self.process, timeout=timeout)

    def log_tail(self, chars: int = 4000) -> str:
        return log_tail(self.log_path, chars)

    def rss_kib(self) -> int:
        return proc_status_kib(self.pid, "VmRSS")

    def peak_rss_kib(self) -> int:
        return proc_status_kib(self.pid, "VmHWM")

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.pid)

    def __enter__(self) -> JobWorker:
        return self if self.running else self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class Workspace:
    """A temporary directory holding a fresh SQLite database (unless ``database_url`` is
    given), migrated; ``env`` is the app's environment for it."""

    def __init__(
        self,
        *,
        upstream_url: str = "",
        database_url: str = "",
        redis_url: str = "",
        **overrides: str,
    ):
        self._dir = tempfile.TemporaryDirectory(prefix="memorychat-bench-")
        self.path = Path(self._dir.name)
        self.env = bench_env(
            database_url=database_url or sqlite_url(self.path),
            upstream_url=upstream_url,
            redis_url=redis_url,
            **overrides,
        )

    def migrate(self) -> Workspace:
        manage("migrate", "--noinput", env=self.env, timeout=MANAGE_TIMEOUT)
        return self

    def server(
        self,
        name: str = "server",
        *,
        server: str = "daphne",
        workers: int = 1,
        statements: Path | None = None,
    ):
        if statements is not None:
            return StatementsServer(
                self.env,
                prefix=statements,
                log_path=self.path / f"{name}.log",
                server=server,
                workers=workers,
            )
        return AppServer(
            self.env, log_path=self.path / f"{name}.log", server=server, workers=workers
        )

    def relay(self, name: str = "relay", *, server: str = "daphne", workers: int = 1):
        return RelayServer(
            self.env, log_path=self.path / f"{name}.log", server=server, workers=workers
        )

    def worker(self, name: str = "worker") -> JobWorker:
        return JobWorker(self.env, log_path=self.path / f"{name}.log", worker_id=name)

    def cleanup(self) -> None:
        self._dir.cleanup()


# -- users, sessions and conversations -------------------------------------------------------


@dataclass
class Seat:
    """One signed-in user: the ``sessionid`` cookie value and their conversations' ids."""

    username: str
    user_id: int
    session: str
    conversations: list[int]


_SEATS_CODE = """
from django.contrib.auth import get_user_model
from django.test import Client
from chat import services

User = get_user_model()
result = []
for i in range(users):
    name = f"{prefix}{i:05d}"
    user = User.objects.filter(username=name).first()
    if user is None:
        user = User(username=name)
        user.set_unusable_password()  # no hashing: cheap for thousands of users
        user.save()
    client = Client()
    client.force_login(user)
    conversations = [
        services.conversation_create(user=user, title=f"bench {n + 1}").pk
        for n in range(per_user)
    ]
    result.append([name, user.pk, client.cookies["sessionid"].value, conversations])
"""


def create_seats(
    env: dict[str, str], users: int, conversations_per_user: int = 1, prefix: str = "bench"
) -> list[Seat]:
    """``users`` users (made if missing), each signed in once, each with new conversations.
    The conversations are titled, so no ``title`` frame interleaves with the first turn."""
    rows = django_run(
        _SEATS_CODE, env=env, users=users, per_user=conversations_per_user, prefix=prefix
    )
    return [Seat(*row) for row in rows]


_STORED_CODE = """
from collections import Counter
from chat.models import Message

rows = list(
    Message.objects.filter(conversation_id__in=conversation_ids)
    .values_list("conversation_id", "role", "status", "content", "client_id")
)
users = [r for r in rows if r[1] == "user"]
replies = [r for r in rows if r[1] == "assistant"]
ids = Counter((r[0], r[4]) for r in users)
result = {
    "messages": len(rows),
    "user": len(users),
    "assistant": len(replies),
    "complete": sum(r[2] == Message.Status.COMPLETE for r in replies),
    "exact": sum(r[2] == Message.Status.COMPLETE and r[3] == expected_reply for r in replies),
    "duplicate_client_ids": sum(n - 1 for n in ids.values() if n > 1),
}
"""


def stored_messages(
    env: dict[str, str], conversation_ids: Sequence[int], expected_reply: str
) -> dict[str, int]:
    """Counts of what the database holds for these conversations: messages, user messages,
    replies, complete replies, replies equal to ``expected_reply``, repeated client ids."""
    return django_run(
        _STORED_CODE,
        env=env,
        conversation_ids=list(conversation_ids),
        expected_reply=expected_reply,
    )


# -- clients --------------------------------------------------------------------------------


@dataclass
class Stream:
    """One streamed reply as a client saw it (``time.perf_counter`` seconds)."""

    started: float
    deliveries: list[tuple[float, str]] = field(default_factory=list)
    ended: float | None = None
    status: str = ""
    error: str = ""

    @property
    def text(self) -> str:
        return "".join(text for _, text in self.deliveries)

    @property
    def ttft(self) -> float | None:
        """Request sent → first text received."""
        return self.deliveries[0][0] - self.started if self.deliveries else None

    @property
    def rate(self) -> float | None:
        """Words per second after the first delivery: the words of every later delivery over
        the time from the first delivery to the last."""
        if len(self.deliveries) < 2:
            return None
        span = self.deliveries[-1][0] - self.deliveries[0][0]
        words = sum(len(text.split()) for _, text in self.deliveries[1:])
        return words / span if span > 0 else None


class TurnError(Exception):
    pass


class ChatSocket(BaseChatSocket):
    """One browser tab on one conversation (the tests' client, ``tests.support.ws_client``):
    ``await turn(text)`` sends a message and returns the reply's ``Stream`` once its
    ``reply_end`` arrives (``deliveries`` are the chunk frames).
    """

    not_ready = TurnError

    def __init__(self, ws_url: str, session: str, conversation_id: int):
        super().__init__(ws_url, session, conversation_id)
        self.sent = 0

    async def connect(self, timeout: float = 30.0) -> ChatSocket:
        # No compression, no receive queue limit: the client side must not be what is timed.
        return await super().connect(
            timeout, ready_timeout=timeout, compression=None, max_queue=None
        )

    async def turn(self, text: str, *, client_id: str | None = None, timeout: float = 120.0):
        self.sent += 1
        client_id = client_id or f"c{self.conversation_id}-{self.sent}-{secrets.token_hex(4)}"
        frame = json.dumps({"type": "send", "text": text, "client_id": client_id})
        perf = time.perf_counter
        stream = Stream(started=perf())
        await self.connection.send(frame)
        reply_id = None
        async with asyncio.timeout(timeout):
            while True:
                raw = await self.connection.recv()
                now = perf()
                frame = json.loads(raw)
                kind = frame.get("type")
                if kind == "chunk" and frame["id"] == reply_id:
                    stream.deliveries.append((now, frame["text"]))
                elif kind == "reply_start":
                    reply_id = frame["id"]
                elif kind == "reply_end" and frame["id"] == reply_id:
                    stream.ended, stream.status, stream.error = now, frame["status"], frame["error"]
                    return stream
                elif kind == "error" and frame.get("client_id") == client_id:
                    raise TurnError(f"{frame['code']}: {frame['message']}")


def direct_client(base_url: str, *, timeout: float = 60.0, max_retries: int = 2):
    """The client the app builds in ``llm.clients.async_client``, pointed at ``base_url``."""
    import httpx2
    import openai

    return openai.AsyncOpenAI(
        api_key="bench-key",
        base_url=base_url,
        timeout=httpx2.Timeout(timeout, connect=10.0),
        max_retries=max_retries,
    )


async def direct_stream(client, messages: list[dict], *, model: str = "gpt-4o") -> Stream:
    """The streaming call ``llm.providers.OpenAIProvider.stream`` makes, timed like a turn."""
    perf = time.perf_counter
    stream = Stream(started=perf())
    response = await client.chat.completions.create(
        model=model, messages=messages, stream=True, stream_options={"include_usage": True}
    )
    async for chunk in response:
        now = perf()
        for choice in chunk.choices:
            if choice.delta is not None and choice.delta.content:
                stream.deliveries.append((now, choice.delta.content))
            if choice.finish_reason:
                stream.status = "complete"
    stream.ended = perf()
    return stream


# -- statistics -----------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0-100), linear between closest ranks; None for no values."""
    ordered = sorted(values)
    if not ordered:
        return None
    rank = (len(ordered) - 1) * q / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)
