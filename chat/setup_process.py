"""A set-up process's start (chat.setup_workers): importable before Django is set up, since
the process unpickles it first."""

import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import threading
import traceback


def exit_with_parent() -> None:
    """End this process when the server that started it ends, however it ends (a killed
    server closes no pipe here: a worker would wait for jobs for ever)."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def start(database_names: dict[str, str]) -> None:
    """Set Django up (the settings module comes with the server's environment) on the
    databases the server's connections name."""
    exit_with_parent()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.db import connections

    for alias, name in database_names.items():
        connections[alias].settings_dict["NAME"] = name
    # What every turn needs, loaded before the first one: the turn's code, the encoding.
    import chat.turn  # noqa: F401
    from contextwindow.tokens import encoding_for_model

    encoding_for_model(settings.OPENAI_MODEL)


def ping(*, conversation) -> int:
    """A job that only says which process ran it (tests)."""
    return os.getpid()


class RemoteTraceback(Exception):
    """Where a set-up process's exception came from (its traceback does not pickle)."""

    def __str__(self) -> str:
        return self.args[0]


def serve(conn: multiprocessing.connection.Connection, database_names: dict[str, str]) -> None:
    """A set-up process's life: start, then one job at a time from the server until its end
    of the socket closes. A job is ``(seq, (prompt generation, fn, conversation, kwargs))``;
    the reply ``(seq, True, result, "")`` or ``(seq, False, exception, its traceback)``."""
    # Ctrl-C in `make run` reaches the whole process group: the server ends this process.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    start(database_names)
    from chat.setup_workers import job

    while True:
        try:
            data = conn.recv_bytes()
            seq, arguments = pickle.loads(data)  # noqa: S301 (our server's bytes)
        except EOFError:
            return
        try:
            reply = (seq, True, job(*arguments), "")
        except Exception as exc:  # the server raises it in the turn
            reply = (seq, False, exc, "".join(traceback.format_exception(exc)))
        try:
            payload = pickle.dumps(reply, pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # a result or an exception that does not pickle
            failed = RuntimeError(f"a set-up's reply did not pickle: {exc!r}")
            payload = pickle.dumps((seq, False, failed, reply[3]), pickle.HIGHEST_PROTOCOL)
        conn.send_bytes(payload)
