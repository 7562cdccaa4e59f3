"""Settings for the test suite: the real settings with test defaults for the environment."""

import os

os.environ.setdefault("DEBUG", "true")
os.environ.setdefault("ALLOWED_HOSTS", "localhost,127.0.0.1,testserver")
os.environ.setdefault("CREATE_DEMO_USER", "false")
# Abuse limits are off unless a test turns one on (tests/chat/test_limits.py).
os.environ.setdefault("MESSAGES_PER_MINUTE", "0")
os.environ.setdefault("MAX_CONCURRENT_STREAMS", "0")
os.environ.setdefault("SIGNUPS_PER_HOUR", "0")
os.environ.setdefault("MAX_SOCKETS_PER_USER", "0")
os.environ.setdefault("PASSWORD_RESETS_PER_HOUR", "0")
os.environ.setdefault("PASSWORD_RESETS_PER_ADDRESS", "0")
# Connections in worker threads would outlive a test and keep its database open.
os.environ.setdefault("CONN_MAX_AGE", "0")
# Tests never talk to a real provider unless a test points the client at its own server.
os.environ["OPENAI_API_KEY"] = os.environ.get("TEST_OPENAI_API_KEY", "")
# The local embedding model is off unless a test turns it on (tests/memory/test_embeddings.py).
os.environ["MEMORYCHAT_EMBEDDINGS"] = "off"

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast users in tests

if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":  # noqa: F405
    # One test database per run, so two runs on one server (CI, a developer) never collide.
    DATABASES["default"]["TEST"] = {  # noqa: F405
        "NAME": f"test_{DATABASES['default']['NAME']}_{os.getpid()}"  # noqa: F405
    }
elif DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    # A file, not the in-memory default: the app runs database work in several threads, and
    # in-memory shared-cache SQLite fails on concurrent access ("table is locked") where a
    # WAL file waits its turn, as in production.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")}  # noqa: F405
