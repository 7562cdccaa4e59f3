"""The page never shows the model server's own words; staff and logs keep them (issue 40,
informational)."""

import httpx
import openai

from llm.errors import describe_error


def refusal(message: str) -> openai.BadRequestError:
    request = httpx.Request("POST", "http://model.internal:8080/v1/chat/completions")
    body = {"error": {"message": message, "type": "invalid_request_error"}}
    response = httpx.Response(400, json=body, request=request)
    return openai.BadRequestError(message, response=response, body=body)


def test_a_refusal_is_said_plainly_and_its_reason_kept_for_staff():
    error = describe_error(refusal("template /srv/models/secret.jinja: roles must alternate"))
    assert error.kind == "refused" and "HTTP 400" in error.message
    assert "secret" not in error.message and "alternate" not in error.message
    assert "roles must alternate" in error.detail and "model.internal" in error.detail


def test_a_context_overflow_says_what_to_do():
    error = describe_error(refusal("This model's maximum context length is 8192 tokens"))
    assert "context budget" in error.message and "8192" not in error.message
