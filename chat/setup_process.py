"""A set-up process's start (chat.setup_workers): importable before Django is set up, since
the process unpickles it first."""

import multiprocessing
import multiprocessing.connection
import os
import threading


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
