"""ASGI entry point: HTTP through Django (``/v1/`` through Django with the API's own short
middleware, ``api.asgi``; ``/mcp`` through the MCP server), websockets through Channels."""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()  # before importing anything that touches models

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from api import asgi as api  # noqa: E402
from chat.origin import SameOriginValidator  # noqa: E402
from chat.routing import websocket_urlpatterns  # noqa: E402
from mcp_server import endpoint as mcp  # noqa: E402

# Paths served beside Django, by path without its trailing slash (each classified in
# tests/test_security.py): the MCP server, opened by personal keys only, no session.
BESIDE_DJANGO = {mcp.PATH: mcp.endpoint}


async def http(scope, receive, send):
    path = scope["path"]
    if path.startswith(api.PREFIX):
        return await api.application(scope, receive, send)
    app = BESIDE_DJANGO.get(path.rstrip("/"), django_asgi_app)
    return await app(scope, receive, send)


application = ProtocolTypeRouter(
    {
        "http": http,
        # Origin by scheme, host and port (not the host alone: chat.origin).
        "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
        "lifespan": mcp.lifespan,  # uvicorn's; daphne sends none
    }
)
