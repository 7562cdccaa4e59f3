"""OpenAI's wire format for ``/v1``, with no Django request in it: the request body checked
and handed on as typed values, and the response, stream chunks and errors built here.

What a request may carry beyond OpenAI's fields: ``temporary`` (true: a conversation that
reads and writes no memory; or the header ``X-Memorychat-Temporary: true``) and ``project``
(one of the user's projects by id or name, any case; or the header ``X-Memorychat-Project``;
the body's field wins). A temporary chat stays outside every project, so both is a 400.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from chat import protocol

ROLES = {"system", "developer", "user", "assistant"}
MAX_MESSAGES = 500


class ApiError(Exception):
    """A refusal in OpenAI's error shape: ``{"error": {message, type, param, code}}``."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        retry_after: int | None = None,
    ):
        super().__init__(message)
        self.status, self.message, self.type = status, message, type
        self.code, self.param, self.retry_after = code, param, retry_after

    def body(self) -> dict:
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }


@dataclass(frozen=True)
class Turn:
    role: str  # "user" or "assistant"
    text: str


@dataclass(frozen=True)
class ChatRequest:
    model: str
    text: str  # the new user message
    history: list[Turn] = field(default_factory=list)  # the turns before it
    stream: bool = False
    include_usage: bool = False
    temporary: bool = False
    project: str = ""  # the project the client names (id or name), "" for none


def _bad(message: str, param: str | None = None, code: str | None = None) -> ApiError:
    return ApiError(400, message, param=param, code=code)


def _content(value: object, index: int) -> str:
    """A message's text: a string, or a list of text parts (other parts are refused)."""
    param = f"messages[{index}].content"
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for part in value:
            if not isinstance(part, dict) or part.get("type") != "text":
                raise _bad("Only text content is supported.", param)
            if not isinstance(part.get("text"), str):
                raise _bad("A text part needs its text.", param)
            parts.append(part["text"])
        return "".join(parts)
    if value is None:
        return ""
    raise _bad("A message's content must be text.", param)


def _project(body: dict, header: str) -> str:
    """The project the request names: the body's ``project`` (a string or an id), else the
    header's; "" for none."""
    value = body.get("project")
    if value is None:
        return header.strip()
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise _bad("project must be a project's id or name.", "project")
    return str(value).strip()


def parse_chat(
    raw: bytes, *, temporary_header: bool = False, project_header: str = ""
) -> ChatRequest:
    """The body of ``POST /v1/chat/completions``, or ApiError 400 saying what is wrong. The
    last message is the new one (a user's, checked as the web chat checks a message); the
    earlier user and assistant messages are the history; system and developer messages are
    left out (the app writes its own instructions, with the user's memory and preferences)."""
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise _bad("The body must be a JSON object.") from None
    if not isinstance(body, dict):
        raise _bad("The body must be a JSON object.")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("model is required.", "model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _bad("messages must be a non-empty list.", "messages")
    if len(messages) > MAX_MESSAGES:
        raise _bad(f"At most {MAX_MESSAGES} messages.", "messages")
    turns = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise _bad(
                "Each message needs a role: system, developer, user or assistant.",
                f"messages[{index}].role",
            )
        text = _content(message.get("content"), index)
        if message["role"] in ("user", "assistant"):
            turns.append(Turn(message["role"], text))
    if messages[-1].get("role") != "user":
        raise _bad("The last message must be the user's.", "messages")
    try:
        text = protocol.Send.parse({"text": turns[-1].text}).text
    except protocol.FrameError as error:
        raise _bad(error.message, f"messages[{len(messages) - 1}].content", error.code) from None
    flags = {}
    for name in ("stream", "temporary"):
        value = body.get(name, False)
        if value is None:
            value = False
        if not isinstance(value, bool):
            raise _bad(f"{name} must be true or false.", name)
        flags[name] = value
    temporary = flags["temporary"] or temporary_header
    project = _project(body, project_header)
    if temporary and project:
        raise _bad("A temporary chat stays outside every project.", "project", "temporary_project")
    if body.get("n", 1) not in (None, 1):  # a client asking for more would get one silently
        raise _bad("Only one choice a request is supported (n = 1).", "n")
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise _bad("stream_options must be an object.", "stream_options")
    return ChatRequest(
        model=model,
        text=text,
        history=turns[:-1],
        stream=flags["stream"],
        include_usage=options.get("include_usage") is True,
        temporary=temporary,
        project=project,
    )


# -- responses ----------------------------------------------------------------------------


def models_list(names: list[str], *, created: int) -> dict:
    return {
        "object": "list",
        "data": [
            {"id": name, "object": "model", "created": created, "owned_by": "memorychat"}
            for name in names
        ],
    }


def usage(prompt: int | None, completion: int | None) -> dict:
    prompt, completion = prompt or 0, completion or 0
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def completion(*, id: str, model: str, created: int, text: str, finish: str, usage: dict) -> dict:
    return {
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish,
            }
        ],
        "usage": usage,
    }


def chunk(*, id: str, model: str, created: int, delta: dict, finish: str | None = None) -> dict:
    return {
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def usage_chunk(*, id: str, model: str, created: int, usage: dict) -> dict:
    return {
        "id": id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [],
        "usage": usage,
    }


def event(data: dict | str) -> bytes:
    """One server-sent event."""
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    return f"data: {payload}\n\n".encode()


DONE = event("[DONE]")
