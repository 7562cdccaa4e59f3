"""A queue nobody drains shows on the staff home and in /healthz (issue 40, medium 2)."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from chat.jobs import Heartbeat
from chat.models import WorkerHeartbeat
from tests.jobs.tasks import rename

pytestmark = pytest.mark.django_db


def queue_an_hour_old_job(user):
    rename.enqueue(user.pk, "x")
    DBTaskResult.objects.update(enqueued_at=timezone.now() - timedelta(hours=1))


def test_healthz_says_degraded_when_no_worker_drains_the_queue(client, alice):
    queue_an_hour_old_job(alice)
    response = client.get("/healthz")
    assert response.status_code == 200 and response["Cache-Control"].startswith("max-age=0")
    body = response.json()
    assert body["status"] == "degraded" and body["database"] == "ok"
    assert body["worker"] == {"alive": False, "seen_seconds_ago": None}
    assert body["queue"]["waiting"] == 1 and 3590 <= body["queue"]["oldest_seconds"] <= 3700


def test_healthz_is_ok_with_a_live_worker_and_names_nothing(client, settings):
    Heartbeat("host-7-secret-id").beat()
    response = client.get("/healthz")
    body = response.json()
    assert body["status"] == "ok" and body["worker"]["alive"] is True
    assert body["worker"]["seen_seconds_ago"] <= 1
    assert "host-7" not in response.content.decode() and "pid" not in response.content.decode()


def test_a_worker_not_seen_for_three_beats_is_not_alive(client, settings):
    settings.MEMORYCHAT_WORKER_HEARTBEAT_SECONDS = 10
    Heartbeat("w").beat()
    WorkerHeartbeat.objects.update(seen_at=timezone.now() - timedelta(seconds=31))
    assert client.get("/healthz").json()["worker"]["alive"] is False


def test_the_staff_home_shows_the_queue_and_the_missing_worker(client, staff, alice):
    queue_an_hour_old_job(alice)
    client.force_login(staff)
    page = client.get("/staff/").content.decode()
    assert "No job worker has been seen yet" in page
    assert "<strong>1</strong> waiting" in page
    assert "<strong>3600 s</strong>" in page or "<strong>3601 s</strong>" in page
    Heartbeat("w").beat()
    page = client.get("/staff/").content.decode()
    assert "No job worker has been seen" not in page and "s ago" in page
