"""Settings from the environment: each case imports config.settings in a fresh interpreter.

Settings are read once, at import, so every test runs ``python -c`` in a subprocess with a
controlled environment (none of the project's variables inherited from the caller) and reads
back either the settings it needs as JSON or the error that stopped the import.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent

# Every variable config/settings.py reads, plus the settings module pytest-django sets.
PROJECT_VARIABLES = (
    "DJANGO_SETTINGS_MODULE",
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "DATABASE_URL",
    "SQLITE_TEST_NAME",
    "REDIS_URL",
    "REDIS_PREFIX",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_MODEL",
    "OPENAI_EMBEDDING_MODEL",
    "OPENAI_TIMEOUT",
    "OPENAI_MAX_RETRIES",
    "MESSAGE_SHAPE",
    "OPENAI_MAX_TOKENS_FIELD",
    "SUMMARY_BASE_URL",
    "SUMMARY_API_KEY",
    "SUMMARY_MODEL",
    "SUMMARY_MAX_TOKENS",
    "EMBEDDING_BASE_URL",
    "EMBEDDING_API_KEY",
    "BACKGROUND_MODEL_CONCURRENCY",
    "MODEL_CONTEXT_TOKENS",
    "BACKGROUND_TIMEOUT",
    "SUMMARY_YIELD_SECONDS",
    "SUMMARY_MIN_INTERVAL_SECONDS",
    "MODEL_LIST_CACHE_SECONDS",
    "CONTEXT_BUDGET",
    "REPLY_RESERVE",
    "MAX_MESSAGE_CHARS",
    "CREATE_DEMO_USER",
    "LOG_LEVEL",
)

# Load the settings and print the values the tests look at.
PROBE = """
import json
from django.conf import settings

print(json.dumps({
    "DEBUG": settings.DEBUG,
    "SECRET_KEY": settings.SECRET_KEY,
    "ALLOWED_HOSTS": settings.ALLOWED_HOSTS,
    "ENGINE": settings.DATABASES["default"]["ENGINE"],
    "DB_NAME": str(settings.DATABASES["default"]["NAME"]),
    "CHANNEL_BACKEND": settings.CHANNEL_LAYERS["default"]["BACKEND"],
    "CHANNEL_CONFIG": settings.CHANNEL_LAYERS["default"].get("CONFIG"),
    "OPENAI_MODEL": settings.OPENAI_MODEL,
    "OPENAI_BASE_URL": settings.OPENAI_BASE_URL,
    "OPENAI_MAX_RETRIES": settings.OPENAI_MAX_RETRIES,
    "CONTEXT_BUDGET": settings.MEMORYCHAT_CONTEXT_BUDGET,
    "MESSAGE_SHAPE": settings.MEMORYCHAT_MESSAGE_SHAPE,
    "SUMMARY_BASE_URL": settings.SUMMARY_BASE_URL,
    "BACKGROUND_MODEL_CONCURRENCY": settings.BACKGROUND_MODEL_CONCURRENCY,
}))
"""

PRODUCTION = {"DEBUG": "false", "SECRET_KEY": "s3cret-for-tests", "ALLOWED_HOSTS": "example.org"}
DEVELOPMENT = {"DEBUG": "true"}


def load_settings(**variables: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in PROJECT_VARIABLES}
    env.update(variables)
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    return subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=PROJECT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def settings_with(**variables: str) -> dict:
    result = load_settings(**variables)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def error_with(**variables: str) -> str:
    result = load_settings(**variables)
    assert result.returncode != 0, f"settings loaded: {result.stdout}"
    assert "ImproperlyConfigured" in result.stderr, result.stderr
    return result.stderr.strip().splitlines()[-1]


# -- booleans and DEBUG --------------------------------------------------------------------


def test_a_malformed_boolean_fails_naming_the_variable():
    """DEBUG=maybe stops the import with an error that names DEBUG."""
    message = error_with(DEBUG="maybe")
    assert "DEBUG" in message


def test_a_malformed_boolean_in_another_variable_names_that_variable():
    """CREATE_DEMO_USER=perhaps is reported as CREATE_DEMO_USER, not as DEBUG."""
    message = error_with(**DEVELOPMENT, CREATE_DEMO_USER="perhaps")
    assert "CREATE_DEMO_USER" in message


def test_debug_defaults_to_off():
    """With DEBUG unset the settings are production ones (so a key and hosts are needed)."""
    values = settings_with(SECRET_KEY="k", ALLOWED_HOSTS="example.org")
    assert values["DEBUG"] is False


# -- SECRET_KEY and ALLOWED_HOSTS ----------------------------------------------------------


def test_debug_off_without_secret_key_fails_clearly():
    """DEBUG off and no SECRET_KEY stops the import with a message naming SECRET_KEY."""
    message = error_with(DEBUG="false", ALLOWED_HOSTS="example.org")
    assert "SECRET_KEY must be set when DEBUG is off" in message


def test_a_blank_secret_key_counts_as_missing():
    """SECRET_KEY made of spaces is as good as unset when DEBUG is off."""
    message = error_with(DEBUG="false", SECRET_KEY="   ", ALLOWED_HOSTS="example.org")
    assert "SECRET_KEY" in message


def test_debug_off_without_allowed_hosts_fails():
    """DEBUG off with a key but no ALLOWED_HOSTS stops the import naming ALLOWED_HOSTS."""
    message = error_with(DEBUG="false", SECRET_KEY="k")
    assert "ALLOWED_HOSTS must be set when DEBUG is off" in message


def test_debug_on_gives_the_development_key_and_local_hosts():
    """DEBUG on with no SECRET_KEY uses the insecure development key and localhost hosts."""
    from config.env import DEV_SECRET_KEY

    values = settings_with(**DEVELOPMENT)
    assert values["SECRET_KEY"] == DEV_SECRET_KEY
    assert values["ALLOWED_HOSTS"] == ["localhost", "127.0.0.1", "[::1]"]


def test_a_given_secret_key_and_hosts_are_used_as_set():
    """Production settings take SECRET_KEY verbatim and split ALLOWED_HOSTS on commas."""
    values = settings_with(**{**PRODUCTION, "ALLOWED_HOSTS": "example.org, chat.example.org"})
    assert values["SECRET_KEY"] == "s3cret-for-tests"
    assert values["ALLOWED_HOSTS"] == ["example.org", "chat.example.org"]


# -- DATABASE_URL --------------------------------------------------------------------------


def test_without_database_url_the_database_is_sqlite_in_var():
    """No DATABASE_URL means SQLite in the project's var/ directory."""
    values = settings_with(**DEVELOPMENT)
    assert values["ENGINE"] == "django.db.backends.sqlite3"
    assert Path(values["DB_NAME"]) == PROJECT / "var" / "db.sqlite3"


def test_a_postgres_database_url_selects_the_postgresql_engine():
    """DATABASE_URL=postgres://... selects Django's postgresql backend."""
    values = settings_with(**DEVELOPMENT, DATABASE_URL="postgres://user@127.0.0.1:5432/test")
    assert values["ENGINE"] == "django.db.backends.postgresql"
    assert values["DB_NAME"] == "test"


# -- REDIS_URL -----------------------------------------------------------------------------


def test_without_redis_url_the_channel_layer_is_in_memory():
    """No REDIS_URL means the in-memory channel layer (one process)."""
    values = settings_with(**DEVELOPMENT)
    assert values["CHANNEL_BACKEND"] == "channels.layers.InMemoryChannelLayer"


def test_a_redis_url_selects_channels_redis():
    """REDIS_URL set selects channels_redis with that URL as its host."""
    values = settings_with(**DEVELOPMENT, REDIS_URL="redis://127.0.0.1:6379/0")
    assert values["CHANNEL_BACKEND"] == "config.channel_layer.RedisPubSubChannelLayer"
    assert values["CHANNEL_CONFIG"]["hosts"] == ["redis://127.0.0.1:6379/0"]


def test_a_redis_url_without_a_scheme_is_rejected():
    """REDIS_URL=localhost:6379 is not a URL and is reported as REDIS_URL."""
    message = error_with(**DEVELOPMENT, REDIS_URL="localhost:6379")
    assert "REDIS_URL must be a URL" in message


# -- OpenAI --------------------------------------------------------------------------------


def test_the_model_defaults_to_gpt_4o():
    """With OPENAI_MODEL unset the chat model is gpt-4o."""
    assert settings_with(**DEVELOPMENT)["OPENAI_MODEL"] == "gpt-4o"


def test_the_model_can_be_chosen():
    """OPENAI_MODEL is taken as set."""
    assert settings_with(**DEVELOPMENT, OPENAI_MODEL="llama3.1")["OPENAI_MODEL"] == "llama3.1"


def test_a_base_url_is_accepted():
    """OPENAI_BASE_URL with a scheme and host is used as set."""
    url = "http://127.0.0.1:11434/v1"
    assert settings_with(**DEVELOPMENT, OPENAI_BASE_URL=url)["OPENAI_BASE_URL"] == url


def test_a_non_url_base_url_is_rejected():
    """OPENAI_BASE_URL without a scheme stops the import naming OPENAI_BASE_URL."""
    message = error_with(**DEVELOPMENT, OPENAI_BASE_URL="localhost:11434/v1")
    assert "OPENAI_BASE_URL must be a URL" in message


# -- numbers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("OPENAI_MAX_RETRIES", "lots"),
        ("CONTEXT_BUDGET", "16k"),
        ("REPLY_RESERVE", "1.5"),
        ("MAX_MESSAGE_CHARS", ""),
        ("OPENAI_TIMEOUT", "soon"),
    ],
)
def test_a_malformed_number_fails_naming_the_variable(name, value):
    """A value that is not a number stops the import with an error naming its variable."""
    message = error_with(**DEVELOPMENT, **{name: value})
    assert f"Environment variable {name}" in message


@pytest.mark.parametrize(
    ("name", "value", "minimum"),
    [
        ("CONTEXT_BUDGET", "100", "512"),
        ("OPENAI_MAX_RETRIES", "-1", "0"),
        ("MAX_MESSAGE_CHARS", "0", "1"),
        ("OPENAI_TIMEOUT", "0.5", "1.0"),
    ],
)
def test_a_number_below_its_minimum_is_rejected(name, value, minimum):
    """A number under the variable's minimum is reported with the variable and the minimum."""
    message = error_with(**DEVELOPMENT, **{name: value})
    assert f"Environment variable {name} must be >= {minimum}" in message


def test_numbers_default_when_unset_and_parse_when_set():
    """CONTEXT_BUDGET defaults to 16000, and OPENAI_MAX_RETRIES=5 reads as the integer 5."""
    assert settings_with(**DEVELOPMENT)["CONTEXT_BUDGET"] == 16000
    assert settings_with(**DEVELOPMENT, OPENAI_MAX_RETRIES="5")["OPENAI_MAX_RETRIES"] == 5


# -- model servers ---------------------------------------------------------------------------


def test_model_server_settings_default_to_strict_templates_and_one_background_slot():
    """One system message and alternation by default; summaries use the chat's server."""
    values = settings_with(**DEVELOPMENT)
    assert values["MESSAGE_SHAPE"] == "single"
    assert values["SUMMARY_BASE_URL"] == ""  # blank: the chat's (llm.clients)
    assert values["BACKGROUND_MODEL_CONCURRENCY"] == 1


def test_a_message_shape_outside_its_choices_fails_naming_them():
    message = error_with(**DEVELOPMENT, MESSAGE_SHAPE="mixed")
    assert "MESSAGE_SHAPE" in message and "single, separate" in message


def test_a_summary_server_must_be_a_url():
    message = error_with(**DEVELOPMENT, SUMMARY_BASE_URL="localhost:8081")
    assert "SUMMARY_BASE_URL" in message


def test_background_concurrency_must_be_at_least_one():
    message = error_with(**DEVELOPMENT, BACKGROUND_MODEL_CONCURRENCY="0")
    assert "BACKGROUND_MODEL_CONCURRENCY" in message
