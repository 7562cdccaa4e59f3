"""What the site's middleware costs a ``/v1`` request, in one process (issue 38, the first
token): the same request (``GET /v1/models`` with a key: one key lookup, no turn) through
Django's ASGI handler with the pages' middleware, and through ``api.asgi`` (the API's own,
in the event loop), alternating, on a scratch SQLite database. Reports each path's wall time
and CPU time (every thread of the process) per request; the difference is what the pages'
middleware and its thread trips add to every /v1 request, a streamed reply's first token
included. A third path, ``api.asgi`` with Django's own ``handle``, shows what the request
signals' thread (``request_started`` / ``request_finished`` through ``sync_to_async``) costs.

    .venv/bin/python bench/api_middleware.py [--requests 300]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def setup(tmp: str) -> None:
    os.environ.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="true",
        ALLOWED_HOSTS="testserver,localhost",
        CREATE_DEMO_USER="false",
        OPENAI_API_KEY="",
        LOG_LEVEL="WARNING",
        DATABASE_URL=f"sqlite:///{tmp}/db.sqlite3",
    )
    os.environ.pop("REDIS_URL", None)
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.DEBUG = False
    call_command("migrate", verbosity=0)


async def timed(app, secret: str, n: int) -> tuple[list[float], float]:
    import httpx

    transport = httpx.ASGITransport(app=app)
    headers = {"Authorization": f"Bearer {secret}"}
    walls = []
    async with httpx.AsyncClient(
        transport=transport, base_url="http://localhost", headers=headers
    ) as http:
        cpu = time.process_time()
        for _ in range(n):
            began = time.perf_counter()
            response = await http.get("/v1/models")
            walls.append((time.perf_counter() - began) * 1000)
            assert response.status_code == 200, response.text
        cpu = (time.process_time() - cpu) * 1000 / n
    return walls, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="api-middleware-") as tmp:
        setup(tmp)
        from asgiref.sync import sync_to_async
        from django.contrib.auth import get_user_model
        from django.core.asgi import get_asgi_application
        from django.core.handlers.asgi import ASGIHandler

        from api.asgi import ApiHandler
        from profiles.keys import key_create

        user = get_user_model().objects.create_user("bench-api")
        secret = key_create(user=user, name="bench").secret

        class SignalsThreaded(ApiHandler):
            handle = ASGIHandler.handle  # type: ignore[assignment]

        paths = {
            "pages' middleware": get_asgi_application(),
            "api.asgi, Django's signal trips": SignalsThreaded(),
            "api.asgi": ApiHandler(),
        }
        results: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in paths}

        async def run() -> None:
            await sync_to_async(lambda: None)()
            for app in paths.values():  # warm-up
                await timed(app, secret, 20)
            for n in range(args.rounds):
                order = list(paths) if n % 2 == 0 else list(reversed(paths))
                for name in order:
                    walls, cpu = await timed(paths[name], secret, args.requests)
                    results[name][0].extend(walls)
                    results[name][1].append(cpu)

        asyncio.run(run())
    print(f"{args.rounds} rounds x {args.requests} requests, GET /v1/models with a key\n")
    print("| path | wall p50 ms | wall p90 ms | CPU ms a request (each round) |")
    print("|---|---:|---:|---|")
    for name, (walls, cpus) in results.items():
        walls.sort()
        p90 = walls[int(len(walls) * 0.9)]
        each = ", ".join(f"{c:.2f}" for c in cpus)
        print(f"| {name} | {statistics.median(walls):.2f} | {p90:.2f} | {each} |")


if __name__ == "__main__":
    main()
