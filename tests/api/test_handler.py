"""/v1's own ASGI handler (api.asgi) sends Django's request signals without a thread of its
own per request, and still calls a receiver it does not know as Django would."""

import threading

import pytest
from django.core.signals import request_finished, request_started

from tests.api.conftest import http

pytestmark = pytest.mark.django_db(transaction=True)


async def test_a_v1_request_starts_no_thread_for_the_request_signals(alice_key, monkeypatch):
    """Django's handler sends request_started and request_finished through sync_to_async: a
    thread made for each request (asgiref's ThreadSensitiveContext) and a trip to it before
    the view; /v1's calls Django's own receivers in the event loop."""
    async with http(alice_key) as api:
        for _ in range(3):  # the database threads' pool (in_db_thread) has its thread
            assert (await api.get("/models")).status_code == 200
        started: list[str] = []
        start = threading.Thread.start

        def recorded(thread: threading.Thread) -> None:
            started.append(thread.name)
            start(thread)

        monkeypatch.setattr(threading.Thread, "start", recorded)
        for _ in range(5):
            assert (await api.get("/models")).status_code == 200
            assert (await api.get("/models", headers={"Host": "evil.example"})).status_code == 400
    # The event loop's default executor ("asyncio_N": in_db_thread's queries, the log of a
    # 400) may grow its pool of reused threads here; no thread is made for a request.
    assert [name for name in started if not name.startswith("asyncio")] == []


async def test_a_receiver_the_handler_does_not_know_is_called_off_the_event_loop(alice_key):
    """Any other receiver of the request signals runs as under Django's handler: called once
    a request each, in a thread, never blocking the event loop."""
    calls: list[tuple[str, int]] = []

    def receiver(signal, sender, **kwargs):
        calls.append(
            ("started" if signal is request_started else "finished", threading.get_ident())
        )

    request_started.connect(receiver)
    request_finished.connect(receiver)
    try:
        async with http(alice_key) as api:
            assert (await api.get("/models")).status_code == 200
    finally:
        request_started.disconnect(receiver)
        request_finished.disconnect(receiver)
    assert [name for name, _ in calls] == ["started", "finished"]
    assert threading.get_ident() not in {ident for _, ident in calls}
