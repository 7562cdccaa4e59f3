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
set it."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import cast

from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.exception import convert_exception_to_response
from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.middleware.security import SecurityMiddleware

PREFIX = "/v1/"


class _ApiMiddleware(SecurityMiddleware):
    """The security middleware's checks and headers without a thread trip each way."""

    async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
        request.get_host()  # ALLOWED_HOSTS: DisallowedHost is a 400, as on every page
        redirect = self.process_request(request)  # the HTTPS redirect
        response: HttpResponseBase
        if redirect is not None:
            response = redirect
        else:
            response = await cast(Awaitable[HttpResponseBase], self.get_response(request))
        response = self.process_response(request, cast(HttpResponse, response))  # headers only
        if isinstance(response, HttpResponse) and not response.has_header("Content-Length"):
            response.headers["Content-Length"] = str(len(response.content))
        return response


class ApiHandler(ASGIHandler):
    def load_middleware(self, is_async: bool = False) -> None:
        self._view_middleware: list = []
        self._template_response_middleware: list = []
        self._exception_middleware: list = []
        # What BaseHandler.load_middleware wraps the site's middleware around.
        view = convert_exception_to_response(self._get_response_async)  # type: ignore[attr-defined]
        self._middleware_chain = convert_exception_to_response(_ApiMiddleware(view))


application = ApiHandler()
