"""Re-summarise from the conversation page: a background run whose state the page polls; the
new version becomes current only when complete; a failure says why and keeps the old one."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.urls import reverse

from chat.services import conversation_create, message_create
from memory import services, summariser
from memory.models import Summary, SummaryRun

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
POLL = 'hx-trigger="every 1s"'


def _start(client, conversation, capture):
    with capture(execute=False):
        response = client.post(reverse("staff:resummarise", args=[conversation.pk]), **HTMX)
    return response, SummaryRun.objects.latest("created_at")


def _poll(client, run):
    return client.get(reverse("staff:summary_run", args=[run.pk]), **HTMX).content.decode()


def test_a_run_is_queued_and_the_fragment_polls(
    staff_client, staff, world, django_capture_on_commit_callbacks
):
    """The response is the run's fragment, polling every second while queued."""
    conversation = world["conversation"]
    response, run = _start(staff_client, conversation, django_capture_on_commit_callbacks)
    html = response.content.decode()
    assert POLL in html and "queued" in html and "disabled" in html
    assert (run.mode, run.source, run.requested_by) == ("full", "staff", staff)
    assert Summary.objects.get(conversation=conversation, is_current=True).version == 2


def test_the_job_is_enqueued_after_commit(staff_client, world, django_capture_on_commit_callbacks):
    """The task is queued for the worker once the run row is committed."""
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        staff_client.post(reverse("staff:resummarise", args=[world["conversation"].pk]), **HTMX)
    assert len(callbacks) == 1
    assert SummaryRun.objects.get().task_id


def test_a_second_click_does_not_start_a_second_run(
    staff_client, world, django_capture_on_commit_callbacks
):
    """While a run is queued or running, Re-summarise returns that run."""
    _start(staff_client, world["conversation"], django_capture_on_commit_callbacks)
    _start(staff_client, world["conversation"], django_capture_on_commit_callbacks)
    assert SummaryRun.objects.count() == 1


def test_the_lifecycle_from_queued_to_done(staff_client, world, django_capture_on_commit_callbacks):
    """Queued and running poll; done stops polling and swaps in the new current version."""
    conversation = world["conversation"]
    _response, run = _start(staff_client, conversation, django_capture_on_commit_callbacks)
    SummaryRun.objects.filter(pk=run.pk).update(
        status="running", progress=45, stage="summarising 1 of 2"
    )
    html = _poll(staff_client, run)
    assert POLL in html and "45%" in html and "summarising 1 of 2" in html
    assert Summary.objects.get(conversation=conversation, is_current=True).version == 2

    SummaryRun.objects.filter(pk=run.pk).update(status="queued")
    with django_capture_on_commit_callbacks(execute=False):
        services.summary_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == "done"
    current = Summary.objects.get(conversation=conversation, is_current=True)
    assert current.version == 3 and current.source == "staff" and run.summary == current

    html = _poll(staff_client, run)
    assert POLL not in html
    assert "made version 3" in html
    assert 'id="summary-versions" hx-swap-oob="true"' in html
    assert "v3" in html and "current" in html


def test_a_failure_says_why_and_keeps_the_old_version(
    staff_client, world, monkeypatch, django_capture_on_commit_callbacks
):
    """The summariser raises: each attempt is retried; after the last the run is failed, the
    page shows the reason, and version 2 stays current throughout."""
    conversation = world["conversation"]

    def broken(**kwargs):
        raise RuntimeError("model unavailable")

    monkeypatch.setattr(summariser, "summarise", broken)
    _response, run = _start(staff_client, conversation, django_capture_on_commit_callbacks)
    for attempt in range(1, services.MAX_ATTEMPTS + 1):
        with django_capture_on_commit_callbacks(execute=False):
            services.summary_run_execute(run_id=run.pk)
        html = _poll(staff_client, run)
        assert "model unavailable" in html
        assert Summary.objects.get(conversation=conversation, is_current=True).version == 2
        if attempt < services.MAX_ATTEMPTS:
            assert POLL in html and "retrying" in html
    run.refresh_from_db()
    assert run.status == "failed"
    assert POLL not in html
    assert "The last run failed after 3 attempts:" in html
    for attempt in (1, 2, 3):  # every attempt's error is kept
        assert f"attempt {attempt}: RuntimeError: model unavailable" in html
    assert "The current summary was kept." in html
    page = staff_client.get(reverse("staff:conversation", args=[conversation.pk])).content.decode()
    assert "model unavailable" in page and 'class="badge current"' in page


@pytest.mark.django_db(transaction=True)
def test_the_db_worker_completes_a_staff_run(client, staff, alice):
    """The real worker picks the staff run from the queue; the page then shows it done."""
    client.force_login(staff)
    conversation = conversation_create(user=alice, title="Gardening")
    for i in range(4):
        message_create(conversation=conversation, role="user", content=f"I plant tomato {i}.")
    client.post(reverse("staff:resummarise", args=[conversation.pk]), **HTMX)
    run = SummaryRun.objects.get()
    call_command("db_worker", "--batch", "--no-reload", "--no-startup-delay", verbosity=0)
    run.refresh_from_db()
    assert run.status == "done"
    assert Summary.objects.get(conversation=conversation, is_current=True).source == "staff"
    assert POLL not in _poll(client, run)


def test_an_older_version_can_be_made_current(staff_client, staff, world):
    """Make current swaps the current version; the change is in the summary's history."""
    old = world["summaries"][0]
    html = staff_client.post(
        reverse("staff:summary_make_current", args=[old.pk]), **HTMX
    ).content.decode()
    assert "Version 1 is now current." in html
    assert 'id="summary-diff" class="diff" hx-swap-oob="true"' in html
    old.refresh_from_db()
    assert old.is_current
    assert Summary.objects.filter(conversation=old.conversation, is_current=True).count() == 1
    record = old.history.latest("history_date")
    assert record.history_user == staff and "made current by staff" in record.history_change_reason


def test_without_javascript_re_summarise_redirects_back(
    staff_client, world, django_capture_on_commit_callbacks
):
    """A plain post queues the run and returns to the conversation page."""
    conversation = world["conversation"]
    with django_capture_on_commit_callbacks(execute=False):
        response = staff_client.post(reverse("staff:resummarise", args=[conversation.pk]))
    assert response.url == reverse("staff:conversation", args=[conversation.pk])
    page = staff_client.get(response.url).content.decode()
    assert POLL in page and "Re-summarising in the background." in page
