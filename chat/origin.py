"""The websocket's Origin check: the page that opens the socket must be this site, by scheme,
host and port, as Django's CSRF check compares them (Channels' AllowedHostsOriginValidator
compares the host alone, so http://site:8001 or https://site could open a socket to
http://site:8000)."""

from __future__ import annotations

from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

DEFAULT_PORTS = {"http": "80", "https": "443"}


def _origin(scheme: str, netloc: str) -> str | None:
    """``scheme://host[:port]`` lower-cased, without the scheme's default port."""
    scheme = scheme.lower()
    if scheme not in DEFAULT_PORTS or not netloc or "@" in netloc:
        return None
    host, port = split_domain_port(netloc.lower())
    if not host:
        return None
    port = port or DEFAULT_PORTS[scheme]
    return f"{scheme}://{host}" + ("" if port == DEFAULT_PORTS[scheme] else f":{port}")


def expected_origins(scope) -> set[str]:
    """The origins allowed to open a socket on this request: its own, and
    CSRF_TRUSTED_ORIGINS (a site behind a proxy that rewrites Host lists its public origin
    there, as for Django's CSRF check)."""
    headers = dict(scope.get("headers") or [])
    host = headers.get(b"host", b"").decode("latin-1")
    allowed = set()
    domain, _port = split_domain_port(host)
    if domain and validate_host(domain, settings.ALLOWED_HOSTS):
        scheme = "https" if scope.get("scheme") in ("wss", "https") else "http"
        own = _origin(scheme, host)
        if own:
            allowed.add(own)
    for trusted in settings.CSRF_TRUSTED_ORIGINS:
        parts = urlsplit(trusted)
        if "*" not in parts.netloc and (origin := _origin(parts.scheme, parts.netloc)):
            allowed.add(origin)
    return allowed


def origin_allowed(scope) -> bool:
    headers = dict(scope.get("headers") or [])
    raw = headers.get(b"origin")
    if not raw:
        return False
    parts = urlsplit(raw.decode("latin-1"))
    origin = _origin(parts.scheme, parts.netloc)
    return origin is not None and origin in expected_origins(scope)


class SameOriginValidator:
    """ASGI middleware: a websocket whose Origin is not this site is refused (403)."""

    def __init__(self, application):
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket" and not origin_allowed(scope):
            denier = WebsocketDenier()
            return await denier(scope, receive, send)
        return await self.application(scope, receive, send)
