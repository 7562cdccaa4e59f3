"""memory.selectors.summary_run_active: the run a conversation is waiting for, if any."""

import pytest

from memory.models import SummaryRun
from memory.selectors import summary_run_active
from memory.services import summary_run_start

pytestmark = pytest.mark.django_db


def test_the_active_run_is_the_queued_or_running_one(conversation):
    """Finished runs are not active; a queued or running one is, and is returned."""
    assert summary_run_active(conversation=conversation) is None
    run = summary_run_start(conversation=conversation)
    assert summary_run_active(conversation=conversation) == run
    SummaryRun.objects.filter(pk=run.pk).update(status=SummaryRun.Status.RUNNING)
    assert summary_run_active(conversation=conversation) == run
    SummaryRun.objects.filter(pk=run.pk).update(status=SummaryRun.Status.DONE)
    assert summary_run_active(conversation=conversation) is None
