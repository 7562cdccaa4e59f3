"""The benchmarks' and live tests' server processes (tests.support.live_server.spawn) end
with everything they started, however the script that started them ends."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from tests.support.live_server import ROOT, ServerProcess, spawn, stop_process

# A "server" that forks a worker of its own (as uvicorn's master does) and prints its pid.
MASTER = textwrap.dedent(
    """
    import subprocess, sys, time
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    print(worker.pid, flush=True)
    time.sleep(float(sys.argv[1]))
    """
)


def gone(pid: int, within: float = 10.0) -> bool:
    """True once ``pid`` has exited (a zombie waiting for init counts as exited)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def start_master(seconds: float) -> tuple[subprocess.Popen, int]:
    master = spawn([sys.executable, "-c", MASTER, str(seconds)], stdout=subprocess.PIPE, text=True)
    return master, int(master.stdout.readline())


def test_stop_ends_the_workers_with_their_master():
    master, worker = start_master(120)
    stop_process(master, timeout=5)
    assert master.returncode is not None
    assert gone(worker)


def test_stop_ends_the_workers_of_a_master_that_already_died():
    master, worker = start_master(0)
    master.wait()
    assert not gone(worker, within=0.2)  # orphaned, still running
    stop_process(master, timeout=5)
    assert gone(worker)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_script_ended_by_a_signal_stops_its_servers(sig):
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(ROOT)!r})
        from tests.support.live_server import spawn
        master = spawn([sys.executable, "-c", {MASTER!r}, "120"], stdout=-1, text=True)
        print(master.pid, master.stdout.readline().strip(), flush=True)
        time.sleep(120)
        """
    )
    bench = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        master, worker = (int(pid) for pid in bench.stdout.readline().split())
        bench.send_signal(sig)
        assert bench.wait(timeout=20) != 0
        assert gone(master)
        assert gone(worker)
    finally:
        if bench.poll() is None:
            bench.kill()
            bench.wait()


class HttpServer(ServerProcess):
    """A stand-in server that needs no Django: Python's own http.server on the port."""

    def command(self) -> list[str]:
        return [sys.executable, "-m", "http.server", str(self.port), "--bind", "127.0.0.1"]


def test_a_started_server_used_as_a_context_manager_is_not_started_twice(tmp_path):
    server = HttpServer(dict(os.environ), log_path=tmp_path / "server.log")
    with server.start() as same:
        assert same is server
        first = server.pid
        with pytest.raises(RuntimeError, match="already running"):
            server.start()
    assert server.pid == first
    assert gone(first)
