"""``/v1/models`` and ``/v1/chat/completions``: authenticated by a personal key only (a
session cookie opens nothing here, so there is no CSRF surface), each request a turn of the
key's user through the web chat's turn (``chat.turn.set_up_turn`` in the same thread trip as
the key and the conversation, then ``run_set_up_turn``), answered as one JSON object or as
server-sent events. The wire format is ``api.wire``; which conversation, ``api.conversations``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.views.decorators.csrf import csrf_exempt

from api import wire
from api.conversations import (
    conversation_discard,
    conversation_for_request,
    conversation_remember,
    project_for_request,
)
from api.wire import ApiError
from chat.models import Message
from chat.services import ChatError
from chat.turn import TurnSetUp, in_db_thread, run_set_up_turn, run_setup, set_up_turn
from llm.catalogue import server_models
from profiles.keys import key_mark_used, key_owner, key_use_claim, key_user

logger = logging.getLogger(__name__)

TEMPORARY_HEADER = "X-Memorychat-Temporary"
PROJECT_HEADER = "X-Memorychat-Project"
CONVERSATION_HEADER = "X-Memorychat-Conversation"
STREAMS_RETRY_AFTER = 5  # seconds: another reply of the user's ends in about that time


def _error(error: ApiError) -> JsonResponse:
    response = JsonResponse(error.body(), status=error.status)
    if error.status == 401:
        response["WWW-Authenticate"] = "Bearer"
    if error.retry_after is not None:
        response["Retry-After"] = str(error.retry_after)
    if error.status == 502:
        # The failed turn is stored (Retry is the web page's); the openai client would
        # otherwise send it again by itself, as a new turn each time.
        response["X-Should-Retry"] = "false"
    return response


def _secret(request: HttpRequest) -> str:
    scheme, _, secret = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not secret.strip():
        raise ApiError(
            401, "Send your API key as 'Authorization: Bearer <key>'.", code="invalid_api_key"
        )
    return secret.strip()


def _user(secret: str):
    user = key_user(secret)
    if user is None:
        raise ApiError(401, "Incorrect or revoked API key.", code="invalid_api_key")
    return user


def _owner(secret: str):
    """The user whose key ``secret`` is, or a 401. The key is not marked used here: that
    write waits until the turn has started (``_mark_used_later``)."""
    user = key_owner(secret)
    if user is None:
        raise ApiError(401, "Incorrect or revoked API key.", code="invalid_api_key")
    return user


_marking: set[asyncio.Task] = set()  # the writes of last_used_at in flight (kept referenced)


def _mark_used_later(secret: str) -> None:
    """The key's last use written in a thread of its own, off the first token's path."""
    if key_use_claim(secret):
        task = asyncio.create_task(in_db_thread(key_mark_used)(secret))
        _marking.add(task)
        task.add_done_callback(_marking.discard)


def _model_known(model: str) -> bool:
    """The configured model needs no look at the server's list (a cache read a request)."""
    return model == settings.OPENAI_MODEL or model in _model_names()


def _model_names() -> list[str]:
    default = settings.OPENAI_MODEL
    return [default, *(name for name in server_models() if name != default)]


def _turn_for(secret: str, chat: wire.ChatRequest):
    """The key, the model and the project checked, and the conversation the request
    continues or starts."""
    user = _owner(secret)
    if not _model_known(chat.model):
        raise ApiError(
            404, f"The model {chat.model!r} does not exist.", param="model", code="model_not_found"
        )
    project = project_for_request(user=user, value=chat.project)
    conversation, created = conversation_for_request(
        user=user,
        history=chat.history,
        model=chat.model,
        temporary=chat.temporary,
        project=project,
    )
    return user, conversation, created


def _set_up(*, secret: str, chat: wire.ChatRequest) -> TurnSetUp:
    """``_turn_for`` and the turn's own set-up (admitted, stored, its context built) in one
    database thread trip, as a tab's turn makes one: each trip is a wait for a thread before
    the first token. A refused turn leaves no conversation it made behind."""
    user, conversation, created = _turn_for(secret, chat)
    try:
        set_up = set_up_turn(user=user, conversation=conversation, text=chat.text)
    except ChatError:
        if created:
            conversation_discard(conversation=conversation)
        raise
    return set_up


def _refusal(error: ChatError) -> ApiError:
    """A turn the chat refused, as the web page would have said it, with OpenAI's status."""
    if error.code == "rate_limited":
        retry = error.retry_after or 60
        return ApiError(
            429, error.message, type="rate_limit_error", code=error.code, retry_after=retry
        )
    if error.code == "too_many_streams":
        return ApiError(
            429,
            error.message,
            type="rate_limit_error",
            code=error.code,
            retry_after=STREAMS_RETRY_AFTER,
        )
    if error.code == "busy":
        return ApiError(409, error.message, type="conflict_error", code=error.code)
    return ApiError(400, error.message, code=error.code)


def _upstream(reply: Message | None) -> ApiError:
    return ApiError(
        502,
        (reply and reply.error) or "The model did not answer.",
        type="upstream_error",
        code=(reply and reply.error_kind) or "upstream_error",
    )


def _failed(reply: Message) -> bool:
    return reply.status == Message.Status.FAILED or (
        reply.status != Message.Status.COMPLETE and not reply.content
    )


def _finish(status: str) -> str:
    return "length" if status == Message.Status.TRUNCATED else "stop"


@csrf_exempt
async def models(request: HttpRequest) -> HttpResponse:
    try:
        secret = _secret(request)
        names = await in_db_thread(lambda: _user(secret) and _model_names())()
        if request.method != "GET":  # after the key: without one, nothing else is said
            raise ApiError(405, "Use GET.")
    except ApiError as error:
        return _error(error)
    return JsonResponse(wire.models_list(names, created=int(time.time())))


@csrf_exempt
async def chat_completions(request: HttpRequest) -> HttpResponseBase:
    try:
        secret = _secret(request)
        if request.method != "POST":
            await in_db_thread(_user)(secret)  # without a key, nothing else is said
            raise ApiError(405, "Use POST.")
        try:
            raw = request.body
        except RequestDataTooBig:
            raise ApiError(413, "The request is too large.") from None
        temporary = request.headers.get(TEMPORARY_HEADER, "").lower() in ("1", "true", "yes")
        try:
            chat = wire.parse_chat(
                raw,
                temporary_header=temporary,
                project_header=request.headers.get(PROJECT_HEADER, ""),
            )
        except ApiError:
            await in_db_thread(_user)(secret)  # a 401 before any word on the body
            raise
        started = time.monotonic()  # the request read: TTFT as the client sees it
        set_up = await run_setup(_set_up, secret=secret, chat=chat)
    except ApiError as error:
        return _error(error)
    except ChatError as refused:
        return _error(_refusal(refused))

    def drive(sink):
        return run_set_up_turn(set_up, sink=sink, started=started)

    async def remember(reply: Message) -> None:
        await in_db_thread(conversation_remember)(
            conversation=set_up.conversation,
            history=chat.history,
            question=set_up.prepared.start.user_message.content,
            reply=reply,
        )

    if chat.stream:
        response = await _streamed(drive, chat, remember)
    else:
        response = await _answered(drive, chat, remember)
    _mark_used_later(secret)
    response[CONVERSATION_HEADER] = str(set_up.conversation.pk)
    return response


async def _answered(drive, chat: wire.ChatRequest, remember) -> HttpResponseBase:
    async def ignore(frame):
        pass

    reply = await drive(ignore)
    if reply is None or _failed(reply):  # None: no reply stored (never for a new message)
        return _error(_upstream(reply))
    await remember(reply)  # before the client has the reply, so its next request finds it
    body = wire.completion(
        id=f"chatcmpl-{reply.pk}",
        model=chat.model,
        created=int(reply.created_at.timestamp()),
        text=reply.content,
        finish=_finish(reply.status),
        usage=wire.usage(reply.prompt_tokens, reply.completion_tokens),
    )
    return JsonResponse(body)


class _Frames:
    """The frames of one driven turn, as they come; ``next`` is None once the turn ended
    and every frame was taken (run_turn returns only after its sink had them all)."""

    def __init__(self, start):
        self.queue: asyncio.Queue = asyncio.Queue()
        self.task = asyncio.create_task(start(self.queue.put))
        self.task.add_done_callback(_retrieve)

    async def next(self) -> dict | None:
        while self.queue.empty():
            if self.task.done():
                return None
            getter = asyncio.ensure_future(self.queue.get())
            await asyncio.wait({getter, self.task}, return_when=asyncio.FIRST_COMPLETED)
            if getter.done():
                return getter.result()
            getter.cancel()
        return self.queue.get_nowait()


def _retrieve(task: asyncio.Task) -> None:
    """The turn's outcome is read by the view, or nobody (a client gone): never left unread."""
    error = None if task.cancelled() else task.exception()
    if error is not None and not isinstance(error, ChatError):
        logger.error("a /v1 turn failed", exc_info=error)


async def _streamed(drive, chat: wire.ChatRequest, remember) -> HttpResponseBase:
    frames = _Frames(drive)
    # Until the reply starts, the turn may still be refused: then an error, not a stream.
    reply_id = None
    while reply_id is None:
        frame = await frames.next()
        if frame is None:
            break
        if frame["type"] == "reply_start":
            reply_id = frame["id"]
    if reply_id is None:  # failed before its reply started
        error = frames.task.exception()
        if error is not None:
            raise error
        return _error(ApiError(500, "The turn gave no reply.", type="server_error"))
    response = StreamingHttpResponse(
        _events(frames, reply_id, chat, remember), content_type="text/event-stream"
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a proxy must pass each event on at once
    return response


async def _events(frames: _Frames, reply_id: int, chat: wire.ChatRequest, remember):
    """The reply as OpenAI's chunks: its text as it streams, then how it ended."""
    chunk_id, created = f"chatcmpl-{reply_id}", int(time.time())

    def chunk(delta: dict, finish: str | None = None) -> bytes:
        return wire.event(
            wire.chunk(id=chunk_id, model=chat.model, created=created, delta=delta, finish=finish)
        )

    yield chunk({"role": "assistant", "content": ""})
    sent = ""
    end = None
    while (frame := await frames.next()) is not None:
        if frame.get("id") != reply_id:
            continue  # the user's message, memory notices: the web page's
        kind, text = frame["type"], ""
        if kind == "chunk":
            text = frame["text"]
        elif kind in ("resume", "snapshot") and frame["text"].startswith(sent):
            text = frame["text"][len(sent) :]
        elif kind == "reply_end":
            end = frame
            break
        if text:
            sent += text
            yield chunk({"content": text})
    reply = None
    with contextlib.suppress(Exception):
        reply = await asyncio.shield(frames.task)
    if end is None or end["status"] == Message.Status.FAILED or reply is None:
        message = (end or {}).get("error") or "The model did not answer."
        error = ApiError(502, message, type="upstream_error", code="upstream_error")
        yield wire.event(error.body())
        yield wire.DONE
        return
    await remember(reply)  # before the stream ends, so the client's next request finds it
    yield chunk({}, finish=_finish(end["status"]))
    if chat.include_usage:
        usage = wire.usage(reply.prompt_tokens, reply.completion_tokens)
        last = wire.usage_chunk(id=chunk_id, model=chat.model, created=created, usage=usage)
        yield wire.event(last)
    yield wire.DONE
