"""Typed access to the environment: the only place settings read os.environ.

Built on environs, which rejects malformed values ("DEBUG=maybe") with a message naming the
variable. The helpers below add the project's own rules on top.
"""

from __future__ import annotations

from django.core.exceptions import ImproperlyConfigured
from environs import Env, EnvError

env = Env()

DEV_SECRET_KEY = "django-insecure-memorychat-development-only"  # noqa: S105 (dev default only)


def _wrap(fn, name, *args, **kwargs):
    try:
        return fn(name, *args, **kwargs)
    except EnvError as exc:
        raise ImproperlyConfigured(f"Environment variable {name}: {exc}") from exc


def env_bool(name: str, default: bool) -> bool:
    return _wrap(env.bool, name, default)


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    value = _wrap(env.int, name, default)
    if value < minimum:
        raise ImproperlyConfigured(f"Environment variable {name} must be >= {minimum}, got {value}")
    return value


def env_float(name: str, default: float, *, minimum: float = 0.0) -> float:
    value = _wrap(env.float, name, default)
    if value < minimum:
        raise ImproperlyConfigured(f"Environment variable {name} must be >= {minimum}, got {value}")
    return value


def env_str(name: str, default: str = "") -> str:
    return _wrap(env.str, name, default).strip()


def env_choice(name: str, default: str, *, choices: tuple[str, ...]) -> str:
    value = env_str(name, default)
    if value not in choices:
        raise ImproperlyConfigured(
            f"Environment variable {name} must be one of {', '.join(choices)}, got {value!r}"
        )
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    return [item.strip() for item in _wrap(env.list, name, default) if item.strip()]


def env_url(name: str, default: str = "") -> str:
    """A URL with a scheme and a host, or the empty default."""
    raw = env_str(name, default)
    if raw and "://" not in raw:
        raise ImproperlyConfigured(f"Environment variable {name} must be a URL, got {raw!r}")
    return raw


def secret_key(debug: bool) -> str:
    key = env_str("SECRET_KEY")
    if key:
        return key
    if debug:
        return DEV_SECRET_KEY
    raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
