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

from collections.abc import Awaitable, Callable

from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.exception import convert_exception_to_response
from django.http import HttpRequest, HttpResponseBase
from django.middleware.security import SecurityMiddleware

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


application = ApiHandler()
