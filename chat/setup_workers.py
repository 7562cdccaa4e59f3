"""A turn's set-up (the context build, storing the message) in processes of their own.

Why: in the server's process each statement of a set-up lets go of the GIL and then waits
for the event loop, which at 50 chats holds it for the other chats' chunks; a dozen
statements a turn, about a millisecond each (bench/README.md, stream, "Seventh session"). A
set-up process has its own GIL, on another core. ``MEMORYCHAT_SETUP_PROCESSES``
(``SETUP_PROCESSES``) says how many each server process starts; 0 keeps the set-up in the
server's database threads (the tests' default: a test's settings overrides and uncommitted
rows do not reach another process).

The event loop itself talks to the workers, each over a socket pair of its own (non-blocking
here, ``loop.sock_sendall`` / ``sock_recv``; ``Connection.send_bytes`` framing there), one job
at a time each. A ``ProcessPoolExecutor`` did this before: its job and its result each passed
through threads of the server (the pool's manager, the call queue's feeder), which wait for
the GIL the event loop holds, about 0.4 ms a trip on an idle host and far more at 50 chats
(bench/README.md, stream, "Fifteenth session").

The workers are spawned, not forked (the server has threads, whose locks a fork would copy
held), set Django up once and open the databases the server's connections name (a test
database too). A job takes the conversation (a model instance, pickled) and gives back the
function's result with the conversation's title and activity time, which a set-up may
change. A worker that died is replaced at once; the job that found it dead runs in a thread
instead (``chat.turn.run_setup``): a store that had committed is then seen as a resend (its
client_id), never stored twice.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import logging
import multiprocessing
import os
import pickle
import socket
import struct
import threading
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool

__all__ = ["BrokenProcessPool", "enabled", "run", "shutdown", "warm", "worker_pids"]

from django.conf import settings
from django.db import close_old_connections, connections

from chat import setup_process
from memory.selectors import system_prompt_generation, system_prompt_seen

logger = logging.getLogger(__name__)

# A worker that dies twice within this many seconds (one that cannot start, say) pauses the
# set-up processes for as long: set-ups run in threads meanwhile, not a new process each turn.
PAUSE_AFTER_BREAKS = 60.0
_broken_at: float | None = None
_paused_until = 0.0

_pools: dict[int, _Pool] = {}  # by pid: a forked child never uses its parent's
_lock = threading.Lock()
_HEADER = struct.Struct("!i")  # multiprocessing.Connection's framing, which the worker uses
_LONG_HEADER = struct.Struct("!Q")  # after a header of -1: a frame of 2 GiB or more


def enabled() -> bool:
    return settings.MEMORYCHAT_SETUP_PROCESSES > 0 and time.monotonic() >= _paused_until


def _header(size: int) -> bytes:
    if size > 0x7FFFFFFF:
        return _HEADER.pack(-1) + _LONG_HEADER.pack(size)
    return _HEADER.pack(size)


class _Worker:
    """One spawned process and the server's end of its socket pair."""

    def __init__(self, database_names: dict[str, str]):
        context = multiprocessing.get_context("spawn")
        ours, theirs = context.Pipe(duplex=True)  # a socket pair on POSIX
        self.process = context.Process(
            target=setup_process.serve,
            args=(theirs, database_names),
            name="memorychat-setup",
            daemon=True,  # ended by the server's exit; a killed server: exit_with_parent
        )
        self.process.start()
        theirs.close()
        self.sock = socket.socket(fileno=os.dup(ours.fileno()))
        ours.close()
        self.sock.setblocking(False)
        self.buffer = bytearray()

    def close(self, *, wait: float = 0.0) -> None:
        """End the worker: its socket closed, it ends after its job (waiting ``wait``
        seconds for that), else it is killed."""
        self.sock.close()
        self.process.join(timeout=wait)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)

    async def exchange(self, seq: int, payload: bytes):
        """Send one job and read frames until its own reply (a reply left unread by a job
        whose loop went away is skipped)."""
        loop = asyncio.get_running_loop()
        await loop.sock_sendall(self.sock, _header(len(payload)) + payload)
        while True:
            frame = await self._frame(loop)
            reply_seq, ok, value, where = pickle.loads(frame)  # noqa: S301
            if reply_seq == seq:
                if where:
                    value.__cause__ = setup_process.RemoteTraceback(where)
                return ok, value

    async def _frame(self, loop) -> bytes:
        while (end := self._frame_end()) is None or len(self.buffer) < end[1]:
            wanted = 65536 if end is None else max(65536, end[1] - len(self.buffer))
            data = await loop.sock_recv(self.sock, wanted)
            if not data:
                raise ConnectionResetError("the set-up process closed its socket")
            self.buffer += data
        start, stop = end
        frame = bytes(self.buffer[start:stop])
        del self.buffer[:stop]
        return frame

    def _frame_end(self) -> tuple[int, int] | None:
        """Where the buffer's first frame starts and stops, once its header is in."""
        if len(self.buffer) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack_from(self.buffer)
        if size != -1:
            return _HEADER.size, _HEADER.size + size
        if len(self.buffer) < _HEADER.size + _LONG_HEADER.size:
            return None
        (size,) = _LONG_HEADER.unpack_from(self.buffer, _HEADER.size)
        start = _HEADER.size + _LONG_HEADER.size
        return start, start + size


class _Pool:
    """The workers of one server process: a job waits for an idle one, first come first
    served."""

    def __init__(self, size: int):
        names = {alias: str(connections[alias].settings_dict["NAME"]) for alias in connections}
        self.database_names = names
        self.workers = [_Worker(names) for _ in range(size)]
        self.idle = collections.deque(self.workers)
        self.waiting: collections.deque[asyncio.Future] = collections.deque()
        self.seq = itertools.count(1)

    async def acquire(self) -> _Worker:
        if self.idle:
            return self.idle.popleft()
        waiter = asyncio.get_running_loop().create_future()
        self.waiting.append(waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():  # handed over, then cancelled
                self.release(waiter.result())
            raise

    def release(self, worker: _Worker) -> None:
        while self.waiting:
            waiter = self.waiting.popleft()
            if not waiter.done():
                waiter.set_result(worker)
                return
        self.idle.append(worker)

    async def submit(self, job: tuple):
        seq = next(self.seq)
        payload = pickle.dumps((seq, job), pickle.HIGHEST_PROTOCOL)
        worker = await self.acquire()
        try:
            ok, value = await worker.exchange(seq, payload)
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            self._replace(worker)
            raise BrokenProcessPool(f"a set-up process died: {exc}") from exc
        except BaseException:
            # Cancelled mid-exchange (a loop that went away): its reply is skipped by seq.
            self.release(worker)
            raise
        self.release(worker)
        if not ok:
            raise value
        return value

    def _replace(self, worker: _Worker) -> None:
        global _broken_at, _paused_until
        logger.warning("a set-up process died: replaced, this set-up runs in a thread")
        worker.close()
        now = time.monotonic()
        if _broken_at is not None and now - _broken_at < PAUSE_AFTER_BREAKS:
            _paused_until = now + PAUSE_AFTER_BREAKS
        _broken_at = now
        index = self.workers.index(worker)
        self.workers[index] = _Worker(self.database_names)
        self.release(self.workers[index])

    def close(self) -> None:
        for worker in self.workers:
            worker.close(wait=5.0)
        for waiter in self.waiting:
            if not waiter.done():
                waiter.set_exception(BrokenProcessPool("the set-up processes were stopped"))


def _pool() -> _Pool:
    with _lock:
        pool = _pools.get(os.getpid())
        if pool is None:
            pool = _pools[os.getpid()] = _Pool(settings.MEMORYCHAT_SETUP_PROCESSES)
        return pool


def warm() -> None:
    """Start the workers (at the server's start): a first message then does not wait for
    Django to load in them."""
    if enabled():
        _pool()


def shutdown() -> None:
    """Stop this process's workers (tests; the server's exit does it by itself)."""
    with _lock:
        pool = _pools.pop(os.getpid(), None)
    if pool is not None:
        pool.close()


def worker_pids() -> set[int]:
    """The process ids of this server's set-up processes (none started yet: empty)."""
    pool = _pools.get(os.getpid())
    return {worker.process.pid for worker in pool.workers} if pool is not None else set()


async def run(fn: Callable, *, conversation, **kwargs):
    """``fn(conversation=conversation, **kwargs)`` in a set-up process; the conversation's
    title and activity time come back onto ``conversation``. Raises BrokenProcessPool when
    the worker died (it is replaced): the caller sets the turn up in a thread instead."""
    job = (system_prompt_generation(), fn, conversation, kwargs)
    result, title, updated_at = await _pool().submit(job)
    conversation.title, conversation.updated_at = title, updated_at
    return result


# -- in the worker ----------------------------------------------------------------------------


def job(prompt_generation: int, fn: Callable, conversation, kwargs: dict):
    system_prompt_seen(prompt_generation)  # the server's cache may have dropped the prompt
    close_old_connections()
    try:
        result = fn(conversation=conversation, **kwargs)
    finally:
        close_old_connections()
    return result, conversation.title, conversation.updated_at
