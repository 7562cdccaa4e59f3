"""Real server processes for browser, scale-out tests and benchmarks: `config.asgi:application`
under daphne (or uvicorn) on a free port, with its own environment (database, channel layer,
model URL)."""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # tests/support/ -> the project
SERVERS = ("daphne", "uvicorn")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, process: subprocess.Popen, timeout: float, what: str) -> None:
    """Return once something listens on the port; fail early if ``process`` exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on port {port} within {timeout:.0f} s")


# Every process started by ``spawn`` and not stopped yet: stopped at exit, whatever ends us.
_running: set[subprocess.Popen] = set()


def spawn(command: list[str], **options) -> subprocess.Popen:
    """``subprocess.Popen`` of a server (or a helper) in a process group of its own, stopped
    with its whole group by ``stop_process`` and, failing that, when this interpreter exits:
    normally, on an exception, on Ctrl-C or on SIGTERM/SIGHUP (turned into ``SystemExit``
    when nothing else handles them). Its own group: a uvicorn master's workers, or anything a
    server forks, go with it even when the master died first."""
    _exit_on_termination()
    process = subprocess.Popen(command, start_new_session=True, **options)
    _running.add(process)
    return process


def stop_process(process: subprocess.Popen | None, timeout: float = 10.0) -> None:
    """SIGTERM to the process's group (see ``spawn``; only the process itself if it leads
    none), SIGKILL to it after ``timeout`` seconds. Also when the process itself has already
    exited: a uvicorn master that died may leave its workers behind."""
    if process is None:
        return
    own_group = process in _running
    _running.discard(process)

    def signal_all(sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if own_group:
                os.killpg(process.pid, sig)
            elif process.poll() is None:
                process.send_signal(sig)

    signal_all(signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        signal_all(signal.SIGKILL)
        process.wait()
    if own_group and _group_alive(process.pid):
        deadline = time.monotonic() + timeout  # the leader is gone; its workers finish theirs
        while _group_alive(process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        signal_all(signal.SIGKILL)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member we may not signal: not ours to wait for
        return False
    return True


@atexit.register
def stop_all() -> None:
    """Stop every process ``spawn`` started and nobody stopped (at exit, or by hand)."""
    for process in list(_running):
        stop_process(process, timeout=5.0)


def _exit_on_termination() -> None:
    """SIGTERM and SIGHUP end this interpreter through ``SystemExit`` (so ``finally`` blocks
    and ``stop_all`` run) when they would otherwise kill it outright. Only the main thread
    may set handlers; a handler someone else set is left alone."""
    if threading.current_thread() is not threading.main_thread():
        return
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is signal.SIG_DFL:
            signal.signal(sig, _raise_system_exit)


def _raise_system_exit(signum: int, frame) -> None:
    raise SystemExit(128 + signum)


def log_tail(path: Path, chars: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-chars:]
    except OSError:
        return ""


def project_env(*, strip: tuple[str, ...] = (), **overrides: str) -> dict[str, str]:
    """The app's environment for a child process: none of the caller's OPENAI_/DJANGO_ settings
    (nor those starting with a prefix in ``strip``), development defaults, then ``overrides``."""
    own = ("OPENAI_", "DJANGO_", *strip)
    env = {k: v for k, v in os.environ.items() if not k.startswith(own)}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="true",
        ALLOWED_HOSTS="127.0.0.1,localhost",
        CREATE_DEMO_USER="false",
        PYTHONUNBUFFERED="1",
    )
    env.update(overrides)
    return env


def manage(
    *args: str,
    env: dict[str, str],
    input_text: str | None = None,
    timeout: float = 180,
    root: Path = ROOT,
) -> str:
    """``manage.py`` of the checkout at ``root`` (another one: a benchmark's earlier commit)."""
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        input=input_text,
        timeout=timeout,
    )
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stderr[-4000:]}")
    return result.stdout


def create_user(env: dict[str, str], username: str, password: str, staff: bool = False) -> None:
    manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; U = get_user_model(); "
        f"U.objects.filter(username={username!r}).exists() or "
        f"U.objects.create_user({username!r}, password={password!r}, is_staff={staff!r})",
        env=env,
    )


class ServerProcess:
    """``config.asgi:application`` on a free port, logging to ``log_path``: under daphne (as
    ``make run`` serves it) or uvicorn (as ``make serve`` does; ``workers`` above 1 needs a
    ``REDIS_URL`` in ``env``)."""

    def __init__(
        self,
        env: dict[str, str],
        port: int | None = None,
        *,
        log_path: Path | None = None,
        server: str = "daphne",
        workers: int = 1,
        root: Path = ROOT,
    ):
        if server not in SERVERS:
            raise ValueError(f"server must be one of {SERVERS}")
        self.env = env
        self.port = port or free_port()
        default_log = Path(tempfile.gettempdir()) / f"memorychat-server-{self.port}.log"
        self.log_path = Path(log_path or default_log)
        self.server = server
        self.workers = workers
        self.root = root  # the checkout served (another one: a benchmark's earlier commit)
        self.process: subprocess.Popen | None = None

    start_timeout = 30.0  # seconds to listen; a benchmark's loaded machine may want more

    def command(self) -> list[str]:
        app, host, port = "config.asgi:application", "127.0.0.1", str(self.port)
        if self.server == "daphne":
            return [sys.executable, "-m", "daphne", "-b", host, "-p", port, app]
        workers = ["--workers", str(self.workers)] if self.workers > 1 else []
        return [sys.executable, "-m", "uvicorn", app, "--host", host, "--port", port, *workers]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self, timeout: float | None = None) -> ServerProcess:
        timeout = self.start_timeout if timeout is None else timeout
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        if self.running:
            raise RuntimeError(f"the server on port {self.port} is already running")
        with self.log_path.open("w") as log:  # the child keeps its own handle
            self.process = spawn(
                self.command(), cwd=self.root, env=self.env, stdout=log, stderr=subprocess.STDOUT
            )
        try:
            wait_for_port(self.port, self.process, timeout, "the app server")
        except RuntimeError as exc:
            stop_process(self.process)
            raise RuntimeError(f"{exc}:\n{self.log_tail()}") from None
        return self

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        stop_process(self.process)

    def kill(self) -> None:
        """SIGKILL the server (its workers too), as a crash would: nothing of it cleans up."""
        if self.process is None:
            return
        if self.process in _running:
            _running.discard(self.process)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
        elif self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def log_tail(self, chars: int = 4000) -> str:
        return log_tail(self.log_path, chars)

    def __enter__(self) -> ServerProcess:
        # ``with server.start() as ...`` must not start a second one (on the same port, the
        # first one would be left running, unstopped).
        return self if self.running else self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
