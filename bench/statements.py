"""The app's SQL statements timed inside a benchmark's server: wall time against CPU time.

``bench/stream.py --statements`` serves ``bench.statements_asgi:application`` (the app's
own ``config.asgi:application``, after ``install()`` here has every database connection's
statements timed through Django's ``execute_wrapper``) for its largest level. Each
statement's shape (whitespace collapsed, ``IN`` lists shortened) gets its count, its wall
time and the CPU time of the thread that ran it, written as JSON to
``$BENCH_STATEMENTS_PATH.<pid>`` every second. Wall time beyond CPU time is waiting: for
SQLite's write lock, for the server, and, since the sqlite3 module lets go of the GIL
around every statement, for the GIL to come back from the event loop. Bench-only: nothing
of this is part of the app.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections import defaultdict
from pathlib import Path

PATH_VARIABLE = "BENCH_STATEMENTS_PATH"
_IN_LIST = re.compile(r"\((?:%s, )+%s\)")
_lock = threading.Lock()
_stats: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])


def shape(sql: str) -> str:
    return _IN_LIST.sub("(%s, …)", " ".join(sql.split()))[:160]


def _timed(execute, sql, params, many, context):
    wall, cpu = time.perf_counter(), time.thread_time()
    try:
        return execute(sql, params, many, context)
    finally:
        spent_cpu, spent_wall = time.thread_time() - cpu, time.perf_counter() - wall
        with _lock:
            entry = _stats[shape(sql)]
            entry[0] += 1
            entry[1] += spent_wall
            entry[2] += spent_cpu


def _on_connection(sender, connection, **kwargs):
    connection.execute_wrappers.append(_timed)


def _dump_every_second(path: Path) -> None:
    while True:
        time.sleep(1.0)
        with _lock:
            data = {k: list(v) for k, v in _stats.items()}
        path.write_text(json.dumps(data))


def install() -> None:
    """In the server process, before the app is imported: time every connection's statements
    and write them out every second (when ``$BENCH_STATEMENTS_PATH`` is set)."""
    if not os.environ.get(PATH_VARIABLE):
        return
    from django.db.backends.signals import connection_created

    connection_created.connect(_on_connection, weak=False, dispatch_uid="bench-statements")
    target = Path(f"{os.environ[PATH_VARIABLE]}.{os.getpid()}")
    threading.Thread(target=_dump_every_second, args=(target,), daemon=True).start()


def read(prefix: str) -> dict[str, list[float]]:
    """Every server process's figures under ``prefix``, summed by statement shape."""
    total: dict[str, list[float]] = defaultdict(lambda: [0, 0.0, 0.0])
    for path in Path(prefix).parent.glob(Path(prefix).name + ".*"):
        for key, (count, wall, cpu) in json.loads(path.read_text()).items():
            entry = total[key]
            entry[0] += count
            entry[1] += wall
            entry[2] += cpu
    return dict(total)


def table(stats: dict[str, list[float]], turns: int, top: int = 15) -> list[str]:
    """Markdown: the statements by wall time per turn, with their CPU time and count."""
    wall = sum(v[1] for v in stats.values())
    cpu = sum(v[2] for v in stats.values())
    lines = [
        f"All statements: {1e3 * wall / turns:.2f} ms of wall time a turn, of which "
        f"{1e3 * cpu / turns:.2f} ms the thread's CPU ({turns} turns, warm-up included).",
        "",
        "| statement | per turn | wall ms a turn | CPU ms a turn | wall µs each | CPU µs each |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key, (count, w, c) in sorted(stats.items(), key=lambda kv: -kv[1][1])[:top]:
        lines.append(
            f"| `{key.replace('|', '/')}` | {count / turns:.2f} | {1e3 * w / turns:.2f} "
            f"| {1e3 * c / turns:.2f} | {1e6 * w / count:.0f} | {1e6 * c / count:.0f} |"
        )
    return lines
