"""GET /healthz: whether this web process reaches its database and whether a job worker is
draining the queue, for a load balancer or a monitor. Counts and ages only: no worker ids,
hosts, versions or error text, and no sign-in needed."""

from django.db import DatabaseError
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from chat.jobs import queue_state


@never_cache
@require_GET
def healthz(request):
    try:
        state = queue_state()
    except DatabaseError:
        return JsonResponse({"status": "unavailable", "database": "unavailable"}, status=503)
    seen = state["worker_seen_seconds"]
    oldest = state["oldest_seconds"]
    return JsonResponse(
        {
            # "degraded": pages are served, but background work (summaries, embeddings) waits.
            "status": "ok" if state["worker_alive"] else "degraded",
            "database": "ok",
            "worker": {
                "alive": state["worker_alive"],
                "seen_seconds_ago": None if seen is None else round(seen),
            },
            "queue": {
                "waiting": state["waiting"],
                "oldest_seconds": None if oldest is None else round(oldest),
            },
        }
    )
