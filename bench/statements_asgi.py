"""The app served with its SQL statements timed (``bench/statements.py``): bench-only."""

from bench.statements import install

install()

from config.asgi import application  # noqa: E402, F401 (served as this module's application)
