"""A set-up process's start (chat.setup_workers): importable before Django is set up, since
the process unpickles it first."""

import os


def start(database_names: dict[str, str]) -> None:
    """Set Django up (the settings module comes with the server's environment) on the
    databases the server's connections name."""
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
