"""``/v1/`` served by Django's own ASGI handler with only the middleware a key's request needs.

The site's middleware is for pages: sessions, CSRF, messages, the signed-in user, sign-in
lockouts, static files, frame and content policies. ``/v1`` reads none of them (a key opens
it, a session cookie never does: ``api.views``), yet each runs its ``process_request`` and
``process_response`` through a thread of asgiref's (``MiddlewareMixin``; WhiteNoise is sync
only), some twenty trips off the event loop and back before a streamed reply's first token,
which the websocket's turn never makes. So ``config.asgi`` sends ``/v1/`` here: the same
request, URLs, views, signals and error pages, with ``SecurityMiddleware``'s redirect and
headers and the host check ``CommonMiddleware`` made (``ALLOWED_HOSTS``), run in the event
loop (they read no database), and ``Content-Length`` on a whole answer as ``CommonMiddleware``
set it.

Django's handler also sends ``request_started`` before the view and ``request_finished`` after
the response through ``sync_to_async``: a thread made for each request (asgiref's
``ThreadSensitiveContext``) and a trip to it before the first token, to run receivers that have
nothing to do there (``_LOOP_SAFE``). ``ApiHandler.handle`` calls those in the event loop; a
receiver it does not know is still called Django's way."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from asgiref.sync import sync_to_async
from django.core import signals
from django.core.cache import close_caches
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.base import reset_urlconf
from django.core.handlers.exception import convert_exception_to_response
from django.db import close_old_connections, reset_queries
from django.dispatch import Signal
from django.http import HttpRequest, HttpResponseBase
from django.middleware.security import SecurityMiddleware
from django.urls import set_script_prefix

PREFIX = "/v1/"


class _ApiMiddleware(SecurityMiddleware):
    """The security middleware's checks and headers without a thread trip each way."""

    get_response: Callable[[HttpRequest], Awaitable[HttpResponseBase]]  # ApiHandler's: async

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        request.get_host()  # ALLOWED_HOSTS: DisallowedHost is a 400, as on every page
        response: HttpResponseBase | None = self.process_request(request)  # the HTTPS redirect
        if response is None:
            response = await self.get_response(request)
        # django-stubs say HttpResponse; Django's sets headers, which a streamed reply has too
        response = self.process_response(request, response)  # type: ignore[arg-type]
        if not response.streaming and not response.has_header("Content-Length"):
            response.headers["Content-Length"] = str(len(response.content))
        return response


# Django's own receivers of request_started / request_finished, and why each may run in the
# event loop: the database ones act on the connections the calling thread opened, and the
# loop's thread opens none (the ORM refuses to run there; /v1's queries run in
# ``in_db_thread``, which closes stale connections in its own thread around each call), as
# the fresh thread Django would make for the request had none; caches and the URLconf are
# per request context (asgiref's Local), the same in the loop as in that thread, and the
# caches' close is a no-op for Django's locmem and Redis backends.
_LOOP_SAFE = frozenset({reset_queries, close_old_connections, close_caches, reset_urlconf})


def _in_loop(signal: Signal, sender: object) -> bool:
    """Whether every receiver ``signal`` has for ``sender`` may be called in the event loop."""
    sync_receivers, async_receivers = signal._live_receivers(sender)
    return not async_receivers and all(receiver in _LOOP_SAFE for receiver in sync_receivers)


async def _send(signal: Signal, sender: object, **named: object) -> None:
    if _in_loop(signal, sender):
        signal.send(sender=sender, **named)
    else:
        await signal.asend(sender=sender, **named)


async def _close(response: HttpResponseBase) -> None:
    """``response.close()`` (its resources, then ``request_finished``), in the loop when
    Django's own receivers are all that signal has."""
    if _in_loop(signals.request_finished, response._handler_class):  # type: ignore[attr-defined]
        response.close()
    else:
        await sync_to_async(response.close)()


class ApiHandler(ASGIHandler):
    # BaseHandler's own (private, so not in django-stubs): the view step, async here, and
    # the lists of middleware hooks it runs around the view, empty here.
    _get_response_async: Callable[[HttpRequest], Awaitable[HttpResponseBase]]
    _view_middleware: list[Callable[..., Awaitable[HttpResponseBase | None]]]
    _template_response_middleware: list[Callable[..., Awaitable[HttpResponseBase]]]
    _exception_middleware: list[Callable[[HttpRequest, Exception], HttpResponseBase | None]]

    def load_middleware(self, is_async: bool = False) -> None:
        self._view_middleware = []
        self._template_response_middleware = []
        self._exception_middleware = []
        # What BaseHandler.load_middleware wraps the site's middleware around.
        view = convert_exception_to_response(self._get_response_async)
        self._middleware_chain = convert_exception_to_response(_ApiMiddleware(view))

    async def handle(self, scope, receive, send):
        """Django 5.2's ``ASGIHandler.handle`` with the signals sent by ``_send`` and the
        response closed by ``_close``, not each through ``sync_to_async``."""
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        await _send(signals.request_started, self.__class__, scope=scope)
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            assert error_response is not None  # create_request gives one or the other
            body_file.close()
            await self.send_response(error_response, send)
            await _close(error_response)
            return

        async def process_request(request, send):
            response = await self.run_get_response(request)
            with contextlib.suppress(asyncio.CancelledError):  # the client left meanwhile
                await self.send_response(response, send)
            return response

        # A disconnect while the response is made cancels it (as Django's own handle does).
        tasks = [
            asyncio.create_task(self.listen_for_disconnect(receive)),
            asyncio.create_task(process_request(request, send)),
        ]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            if task.done():
                try:
                    task.result()
                except RequestAborted:
                    pass
                except AssertionError:
                    body_file.close()
                    raise
            else:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        try:
            response = tasks[1].result()
        except asyncio.CancelledError:
            await _send(signals.request_finished, self.__class__)
        else:
            await _close(response)
        body_file.close()


application = ApiHandler()
