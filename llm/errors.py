"""What the page says when the model server fails, from the client's and transport's errors.

Each ``UpstreamError`` has a ``message`` for the page, a ``kind``, and a ``detail``: what the
server itself said (its HTTP status and error body), logged and shown to staff on the failed
reply or run. The page never shows the server's own words (they may name its internals, its
paths, its keys' owners): a plain message, with what the user can do. A 400 means the server
refused this request as it is (a template that rejects the messages, a context overflow, an
unsupported option): a Retry would fail the same way, so none is offered. 429 and 5xx are
retried by the client before the first token, as before.
"""

from __future__ import annotations

import json
import logging
import re

import httpx2
import openai

logger = logging.getLogger(__name__)

DETAIL_MAX_CHARS = 2000
REASON_MAX_CHARS = 300
NOT_RETRYABLE = frozenset({"refused"})


class UpstreamError(Exception):
    """The model could not answer (or stopped answering)."""

    def __init__(self, message: str, *, kind: str = "upstream", detail: str = ""):
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.detail = detail

    @property
    def retryable(self) -> bool:
        """False when asking again the same way cannot succeed (the server refused it)."""
        return self.kind not in NOT_RETRYABLE


def _body_text(exc: openai.APIStatusError) -> str:
    try:
        return exc.response.text
    except Exception:  # a streamed response that was never read
        return json.dumps(exc.body) if exc.body is not None else ""


def upstream_reason(exc: openai.APIStatusError) -> str:
    """The server's own words for an error response: its error message, else its body."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            body = inner.get("message") or inner.get("detail") or json.dumps(inner)
        else:
            body = inner
    text = body if isinstance(body, str) and body.strip() else _body_text(exc)
    text = " ".join(str(text).split())
    return text[:REASON_MAX_CHARS] or f"HTTP {exc.status_code} with no reason given"


def upstream_detail(exc: BaseException) -> str:
    """For logs and staff: the status and the whole error body (cut to a readable size)."""
    if isinstance(exc, UpstreamError):
        return exc.detail
    if isinstance(exc, openai.APIStatusError):
        url = getattr(getattr(exc, "request", None), "url", "")
        return f"HTTP {exc.status_code} from {url}: {_body_text(exc)}"[:DETAIL_MAX_CHARS]
    return f"{type(exc).__name__}: {exc}"[:DETAIL_MAX_CHARS]


def describe_error(exc: BaseException) -> UpstreamError:
    """Map client and transport errors to what the page says (and log the server's words)."""
    if isinstance(exc, UpstreamError):
        return exc
    error = _describe(exc)
    error.detail = upstream_detail(exc)
    if isinstance(exc, openai.APIStatusError):
        logger.warning("model server error (%s): %s", error.kind, error.detail)
    return error


# A refusal whose reason speaks of this is a context overflow, whatever the server's wording.
_TOO_LONG = re.compile(r"context|too long|too many tokens|maximum.{0,20}length|exceed", re.I)


def _describe(exc: BaseException) -> UpstreamError:
    if isinstance(exc, openai.RateLimitError):
        return UpstreamError(
            "The model is rate limited (HTTP 429) and did not answer after retries. "
            "Try again in a moment.",
            kind="rate_limited",
        )
    if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
        return UpstreamError("The model server refused the API key.", kind="auth")
    if isinstance(exc, openai.NotFoundError):
        return UpstreamError("The model server does not know this model.", kind="not_found")
    if isinstance(exc, openai.APIStatusError) and exc.status_code in (400, 413, 422):
        if _TOO_LONG.search(upstream_reason(exc)):
            hint = "the conversation is longer than the model takes: lower its context budget"
        else:
            hint = "asking again the same way will fail too; staff can see the server's reason"
        return UpstreamError(
            f"The model server refused the request (HTTP {exc.status_code}): {hint}.",
            kind="refused",
        )
    if isinstance(exc, openai.APIStatusError):
        return UpstreamError(
            f"The model server failed (HTTP {exc.status_code}). Try again.", kind="server_error"
        )
    if isinstance(exc, openai.APITimeoutError | httpx2.TimeoutException):
        return UpstreamError("The model took too long to answer.", kind="timeout")
    if isinstance(exc, openai.APIConnectionError | httpx2.ConnectError):
        return UpstreamError("Could not reach the model server.", kind="unreachable")
    if isinstance(exc, httpx2.TransportError):
        return UpstreamError("The connection to the model broke mid-reply.", kind="cut")
    if isinstance(exc, json.JSONDecodeError | openai.APIError | ValueError | KeyError):
        return UpstreamError("The model sent a malformed reply.", kind="malformed")
    return UpstreamError("The model failed unexpectedly.", kind="unknown")
