"""Where a turn's work runs, besides the event loop: database threads (``in_db_thread``;
``run_setup`` for a turn's set-up), and the after-turn work batched behind the set-ups
(``after_turn``). More cores are used by more server processes (uvicorn workers on Redis,
``make serve``), not by processes of the server's own (bench/README.md, "Pool or workers")."""

from __future__ import annotations

import asyncio
import contextlib
import weakref

from chat import job_watch
from chat.dbthread import in_db_thread
from chat.models import Message
from chat.turn.after import after_turns

__all__ = ["after_turn", "in_db_thread", "run_setup"]


# A turn's set-up (the database work before the model is called) comes first. The work after
# a reply (style, memory scheduling) is collected for AFTER_TURN_BATCH seconds and done for all
# the replies that ended meanwhile in one thread trip (the summary checks in three queries for
# all of them), once no set-up is running (waiting at most AFTER_TURN_MAX_WAIT, so it is never
# starved): one chat's first token does not wait for a thread, nor for the GIL, behind other
# chats' after-turn work.
AFTER_TURN_BATCH = 0.2  # seconds
AFTER_TURN_MAX_WAIT = 1.0  # seconds


class _Gate:
    """Per event loop: how many set-ups run, and the after-turn work waiting."""

    def __init__(self):
        self.setups = 0
        self.idle = asyncio.Event()
        self.idle.set()
        self.pending: list[tuple[object, Message | None, asyncio.Future]] = []
        self.worker: asyncio.Task | None = None

    async def after_turn(self, conversation, user_message: Message | None) -> None:
        done = asyncio.get_running_loop().create_future()
        self.pending.append((conversation, user_message, done))
        if self.worker is None or self.worker.done():
            self.worker = asyncio.create_task(self._work(), name="after-turns")
        await asyncio.shield(done)

    async def _work(self) -> None:
        while self.pending:
            await asyncio.sleep(AFTER_TURN_BATCH)
            if not self.idle.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.idle.wait(), AFTER_TURN_MAX_WAIT)
            batch, self.pending = self.pending, []
            try:
                watches = await in_db_thread(after_turns)([(c, m) for c, m, _ in batch])
                for job in watches:
                    job_watch.watch(job)
            finally:
                for _, _, done in batch:
                    if not done.done():
                        done.set_result(None)


_gates: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _gate() -> _Gate:
    loop = asyncio.get_running_loop()
    gate = _gates.get(loop)
    if gate is None:
        gate = _gates[loop] = _Gate()
    return gate


async def run_setup(fn, **kwargs):
    """A turn's set-up step, ``fn(**kwargs)``, in a database thread. After-turn work waits
    while any runs."""
    gate = _gate()
    gate.setups += 1
    gate.idle.clear()
    try:
        return await in_db_thread(fn)(**kwargs)
    finally:
        gate.setups -= 1
        if gate.setups == 0:
            gate.idle.set()


async def after_turn(conversation, user_message: Message | None) -> None:
    """The work after a reply (``chat.turn.after``), batched with the replies that end meanwhile."""
    await _gate().after_turn(conversation, user_message)
