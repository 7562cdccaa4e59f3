"""Settings for memorychat, read from the environment (see README "Settings")."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import (
    env_bool,
    env_choice,
    env_float,
    env_int,
    env_list,
    env_str,
    env_url,
    secret_key,
)

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = secret_key(DEBUG)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
if not DEBUG and not ALLOWED_HOSTS:
    raise ImproperlyConfigured("ALLOWED_HOSTS must be set when DEBUG is off.")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",  # first: makes `runserver` serve ASGI (websockets)
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "channels",
    "csp",
    "django_htmx",
    "template_partials",
    "simple_history",
    "django_tasks",
    "django_tasks_db",
    "axes",
    "django_ratelimit",
    "chat",
    "memory",
    "profiles",
    "userdata",
    "projects",
    "staff",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "csp.middleware.CSPMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    # Last, as django-axes asks: answers a locked-out sign-in with the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "chat.context_processors.llm_mode",
            ],
        },
    },
]

# Database: SQLite in the project by default, anything dj-database-url understands otherwise.
DATABASE_URL = env_str("DATABASE_URL")
if not DATABASE_URL:
    VAR_DIR.mkdir(exist_ok=True)
    DATABASE_URL = f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
# Persistent connections (checked before reuse): opening one per query costs milliseconds on
# every turn, and closing the last SQLite connection checkpoints its WAL.
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL,
        conn_max_age=env_int("CONN_MAX_AGE", 600),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL lets the server read while the db worker writes; IMMEDIATE avoids upgrade deadlocks.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 20,
    }
    DATABASES["default"]["TEST"] = {"NAME": env_str("SQLITE_TEST_NAME", "") or None}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Channel layer: in-memory for one process; Redis when REDIS_URL is set (many processes).
REDIS_URL = env_url("REDIS_URL")
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            # Pub/sub, not the list-based layer: that one reads a process's shared inbox one
            # message per few Redis round trips and drops, silently, past 100 waiting
            # messages; under load other tabs lost most of a reply. Pub/sub delivers in bulk,
            # keeps groups in the process (so they survive a Redis restart) and its receive
            # waits instead of failing while Redis is away. Our subclass publishes concurrently
            # (config/channel_layer.py).
            "BACKEND": "config.channel_layer.RedisPubSubChannelLayer",
            "CONFIG": {"hosts": [REDIS_URL], "prefix": env_str("REDIS_PREFIX", "memorychat")},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# Caches, shared on Redis when REDIS_URL is set. "default" holds abuse-limit counters and
# websocket leases, which must never be evicted to make room; "search" holds what the memory
# search can recompute (term counts), apart so that it cannot push them out. Local memory
# culls a third of its keys when full: hence the room.
if REDIS_URL:
    _REDIS_CACHE = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
    }
    _PREFIX = env_str("REDIS_PREFIX", "memorychat")
    CACHES: dict[str, dict[str, object]] = {
        "default": {**_REDIS_CACHE, "KEY_PREFIX": _PREFIX},
        "search": {**_REDIS_CACHE, "KEY_PREFIX": f"{_PREFIX}:search"},
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "default",
            "OPTIONS": {"MAX_ENTRIES": 100_000},
        },
        "search": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "search",
            "OPTIONS": {"MAX_ENTRIES": 20_000},
        },
    }

# Background jobs: durable, in the database, run by `manage.py job_worker` (db_worker's loop).
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
# The worker (`manage.py job_worker`, chat/jobs.py) records that it is alive this often; the
# staff home and /healthz call it gone after three missed beats.
MEMORYCHAT_WORKER_HEARTBEAT_SECONDS = env_int("WORKER_HEARTBEAT_SECONDS", 15, minimum=1)

# The LLM: any OpenAI-compatible server. No key means the offline provider.
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
OPENAI_BASE_URL = env_url("OPENAI_BASE_URL")
OPENAI_MODEL = env_str("OPENAI_MODEL", "gpt-4o")
OPENAI_EMBEDDING_MODEL = env_str("OPENAI_EMBEDDING_MODEL")
# Embeddings for semantic search (memory.search.embeddings): "local" (the default) computes them
# with all-MiniLM-L6-v2 int8 ONNX, installed with the project; "off" leaves search lexical.
# OPENAI_EMBEDDING_MODEL, when set, takes over.
MEMORYCHAT_EMBEDDINGS = env_str("MEMORYCHAT_EMBEDDINGS", "local")
if MEMORYCHAT_EMBEDDINGS not in ("local", "off"):
    raise ImproperlyConfigured("MEMORYCHAT_EMBEDDINGS must be local or off")
# Stored vectors each process holds in memory to find a query's nearest rows (memory.search.
# vectors): 384 floats (1.5 kB) a row with the local model, so 30,000 rows are about 46 MB at
# most. A user with more vectors than this is searched through the lexical candidates only.
MEMORYCHAT_VECTOR_CACHE_ROWS = env_int("VECTOR_CACHE_ROWS", 30_000)
OPENAI_TIMEOUT = env_float("OPENAI_TIMEOUT", 60.0, minimum=1.0)
OPENAI_MAX_RETRIES = env_int("OPENAI_MAX_RETRIES", 2)
# How the request's blocks are shaped (llm/messages.py): "single" (one system message, then
# strictly alternating user/assistant turns: what strict chat templates such as Gemma's or
# Mistral's accept) or "separate" (a system message per block, as OpenAI's API accepts).
MEMORYCHAT_MESSAGE_SHAPE = env_choice("MESSAGE_SHAPE", "single", choices=("single", "separate"))
# The request field that caps a reply's length: "max_tokens" (llama.cpp, vLLM, Ollama, older
# OpenAI models) or "max_completion_tokens" (OpenAI's reasoning models refuse max_tokens).
OPENAI_MAX_TOKENS_FIELD = env_choice(
    "OPENAI_MAX_TOKENS_FIELD", "max_tokens", choices=("max_tokens", "max_completion_tokens")
)
# Summaries and embeddings may use other servers; each setting, left blank, means the chat's
# (resolved in llm/clients.py). Background calls (summary runs, embedding jobs) hold at most
# BACKGROUND_MODEL_CONCURRENCY requests at a time (across processes when the cache is shared),
# so they never take every slot of a chat server (llm/slots.py).
SUMMARY_BASE_URL = env_url("SUMMARY_BASE_URL")
SUMMARY_API_KEY = env_str("SUMMARY_API_KEY")
SUMMARY_MODEL = env_str("SUMMARY_MODEL")  # blank: the conversation's model
SUMMARY_MAX_TOKENS = env_int("SUMMARY_MAX_TOKENS", 4096, minimum=256)
EMBEDDING_BASE_URL = env_url("EMBEDDING_BASE_URL")
EMBEDDING_API_KEY = env_str("EMBEDDING_API_KEY")
BACKGROUND_MODEL_CONCURRENCY = env_int("BACKGROUND_MODEL_CONCURRENCY", 1, minimum=1)
# Seconds a summary/extraction request may take (the chat's OPENAI_TIMEOUT is for replies):
# a slow local server takes minutes for a structured answer. A summary run waits up to
# SUMMARY_YIELD_SECONDS before each request while a reply of the same user streams, and a
# conversation's runs start at least SUMMARY_MIN_INTERVAL_SECONDS apart (later ones deferred),
# so that on a one-slot server summaries do not take the slot from the chat.
BACKGROUND_TIMEOUT = env_float("BACKGROUND_TIMEOUT", 600.0, minimum=1.0)
SUMMARY_YIELD_SECONDS = env_int("SUMMARY_YIELD_SECONDS", 120)
SUMMARY_MIN_INTERVAL_SECONDS = env_int("SUMMARY_MIN_INTERVAL_SECONDS", 60)
# The model server's context in its tokens, for a server that does not say it (llm/limits.py
# asks llama.cpp, vLLM and Ollama); 0: not known, the conversation's budget alone applies.
MODEL_CONTEXT_TOKENS = env_int("MODEL_CONTEXT_TOKENS", 0, minimum=0)
# The models the server lists (GET /v1/models) are cached this long for the settings form.
MODEL_LIST_CACHE_SECONDS = env_int("MODEL_LIST_CACHE_SECONDS", 300)
# Context budget used when a conversation sets none, and tokens kept free for the reply.
MEMORYCHAT_CONTEXT_BUDGET = env_int("CONTEXT_BUDGET", 16000, minimum=512)
MEMORYCHAT_REPLY_RESERVE = env_int("REPLY_RESERVE", 1024, minimum=0)
MEMORYCHAT_MAX_MESSAGE_CHARS = env_int("MAX_MESSAGE_CHARS", 16000, minimum=1)
# Earlier versions kept per reply (regenerate, edit): the newest this many, besides the reply.
MEMORYCHAT_REPLY_VERSIONS_KEPT = env_int("REPLY_VERSIONS_KEPT", 10, minimum=1)
# Rows (messages, memories, history records) one staff import may store; it stores them in
# short transactions (userdata/transfer/importer.py), so a reply never waits long for it.
MEMORYCHAT_IMPORT_MAX_ROWS = env_int("IMPORT_MAX_ROWS", 500_000, minimum=1)
# A user's upload of a ChatGPT or Claude export (userdata.chat_import): the file, and the
# conversations.json inside a zip, at most this many megabytes.
MEMORYCHAT_CHAT_IMPORT_MAX_MB = env_int("CHAT_IMPORT_MAX_MB", 100, minimum=1)
# Abuse limits (0 turns a limit off).
MEMORYCHAT_MESSAGES_PER_MINUTE = env_int("MESSAGES_PER_MINUTE", 20)
# Requests to /mcp per user per minute (its tools call no model; this bounds a runaway client).
MEMORYCHAT_MCP_REQUESTS_PER_MINUTE = env_int("MCP_REQUESTS_PER_MINUTE", 120)
MEMORYCHAT_MAX_CONCURRENT_STREAMS = env_int("MAX_CONCURRENT_STREAMS", 3)
MEMORYCHAT_SIGNUPS_PER_HOUR = env_int("SIGNUPS_PER_HOUR", 10)
MEMORYCHAT_MAX_SOCKETS_PER_USER = env_int("MAX_SOCKETS_PER_USER", 20)  # open chat tabs
# The websocket servers' own frame limit (daphne here; `make serve` gives uvicorn the same):
# a frame above it is closed with 1009 by the server. Below it, a frame longer than a
# message at the length limit could be (JSON escapes: up to 12 characters a character) is
# answered with a `too_long` error without being parsed.
WEBSOCKET_MAX_BYTES = env_int("WEBSOCKET_MAX_BYTES", 1024 * 1024, minimum=64 * 1024)
DAPHNE_WEBSOCKET_MAX_MESSAGE_SIZE = DAPHNE_WEBSOCKET_MAX_FRAME_SIZE = WEBSOCKET_MAX_BYTES
MEMORYCHAT_MAX_FRAME_CHARS = 12 * MEMORYCHAT_MAX_MESSAGE_CHARS + 4096
# A streaming reply not renewed for this long belongs to a server that died: interrupted.
MEMORYCHAT_STREAM_LEASE_SECONDS = env_int("STREAM_LEASE_SECONDS", 30, minimum=1)
# A summary run whose heartbeat is older than this lost its worker and is queued again.
MEMORYCHAT_STALE_RUN_SECONDS = env_int("SUMMARY_RUN_STALE_SECONDS", 600, minimum=1)
MEMORYCHAT_CREATE_DEMO_USER = env_bool("CREATE_DEMO_USER", DEBUG)

# Production hardening: on by default whenever DEBUG is off (see docs/deploy.md).
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # probes often speak plain HTTP to the app
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", not DEBUG)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# Behind a proxy that terminates TLS and sets X-Forwarded-Proto (only then: it is trusted).
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
# A policy htmx works under: scripts only from this origin (htmx is configured not to eval),
# websockets to this origin, no framing, no plugins.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],  # table alignment in rendered Markdown
        "img-src": ["'self'", "data:"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Sign-in throttling (django-axes): after LOGIN_FAILURE_LIMIT failed sign-ins for one account
# from one client address, or LOGIN_ADDRESS_FAILURE_LIMIT from one address whatever the
# accounts, further attempts from there are refused for LOGIN_COOLOFF_MINUTES (the page says
# so and for how long). A good sign-in clears that account's failures at that address only
# (web/signin_lock.py). Attempts are stored in the database, so every process sees them.
# Axes' backend goes first: it refuses a locked-out attempt before the password check.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_ENABLED = env_bool("LOGIN_THROTTLE", True)
AXES_HANDLER = "web.signin_lock.PairAndAddressHandler"
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_ADDRESS_FAILURE_LIMIT = env_int("LOGIN_ADDRESS_FAILURE_LIMIT", 20, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]  # the order matters
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
AXES_CLIENT_IP_CALLABLE = "chat.limits.client_ip"
AXES_VERBOSE = False
# Password-reset requests (django-ratelimit, on the cache above): per account and per address.
RATELIMIT_IP_META_KEY = "chat.limits.client_ip"
MEMORYCHAT_PASSWORD_RESETS_PER_HOUR = env_int("PASSWORD_RESETS_PER_HOUR", 3)  # per account
MEMORYCHAT_PASSWORD_RESETS_PER_HOUR_PER_ADDRESS = env_int("PASSWORD_RESETS_PER_ADDRESS", 10)
# Its check knows neither Django's own Redis cache (atomic INCR: fine) nor why local memory is
# used here (one process, counting per process as the chat's own limits do without Redis).
SILENCED_SYSTEM_CHECKS = ["django_ratelimit.W001"]
if not REDIS_URL:
    SILENCED_SYSTEM_CHECKS.append("django_ratelimit.E003")

# Mail (account recovery, profiles/account.py): SMTP when EMAIL_HOST is set, otherwise the
# console (the mail, with its link, is printed in the server's log: development).
EMAIL_HOST = env_str("EMAIL_HOST")
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_PORT = env_int("EMAIL_PORT", 587)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)  # implicit TLS (port 465)
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", not EMAIL_USE_SSL)  # STARTTLS
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10, minimum=1)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "memorychat <noreply@localhost>")

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "chat:home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
WHITENOISE_USE_FINDERS = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # Django's own console handlers would print every line twice beside the root handler.
    "loggers": {
        "django": {"handlers": [], "propagate": True},
        "django.server": {"handlers": [], "propagate": True},
        # One line per sign-in otherwise; lockouts are logged at WARNING.
        "axes": {"level": "WARNING"},
    },
}
