"""Settings for ``bench/memory.py``: the project's settings, set up for timing.

The database comes from ``DATABASE_URL`` as usual (the benchmark points it at a scratch
database). Differences from a development run:

* ``DEBUG`` is off once the settings are read: with it on, Django's debug cursor formats and
  keeps every query, which would be timed with the code under test. (It is read as on, so the
  development defaults for ``SECRET_KEY`` and ``ALLOWED_HOSTS`` apply.)
* No LLM provider and no embeddings: retrieval is the full-text path, the same on every
  machine.
* Logging at WARNING, so progress lines and tables are not interleaved with INFO records.
"""

import os

os.environ.setdefault("DEBUG", "true")
os.environ["CREATE_DEMO_USER"] = "false"
os.environ["OPENAI_API_KEY"] = ""
os.environ["OPENAI_EMBEDDING_MODEL"] = ""
os.environ["LOG_LEVEL"] = "WARNING"

from config.settings import *  # noqa: F403

DEBUG = False
