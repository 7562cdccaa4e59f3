"""What the page says when the model server fails, from the client's and transport's errors."""

from __future__ import annotations

import json

import httpx2
import openai


class UpstreamError(Exception):
    """The model could not answer (or stopped answering)."""

    def __init__(self, message: str, *, kind: str = "upstream"):
        super().__init__(message)
        self.message = message
        self.kind = kind


def describe_error(exc: BaseException) -> UpstreamError:
    """Map client and transport errors to what the page says."""
    if isinstance(exc, UpstreamError):
        return exc
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
