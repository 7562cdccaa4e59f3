"""Django's SQLite backend with its statements' placeholders converted once per text
(``base.py``): ``ENGINE`` for every SQLite database (``config/settings.py``)."""
