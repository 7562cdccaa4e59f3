"""Jobs the set-up process tests send to a worker (importable there: the worker unpickles
them by name)."""

import os
import time


def echo(*, conversation, size: int = 0, delay: float = 0.0) -> tuple[int, bytes]:
    time.sleep(delay)
    return os.getpid(), b"x" * size


def fail(*, conversation) -> None:
    raise ValueError("the set-up failed on purpose")
