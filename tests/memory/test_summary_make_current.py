"""memory.services.summary_make_current: restoring a summary version, audited."""

import pytest

from memory.models import Summary
from memory.services import summary_make_current

pytestmark = pytest.mark.django_db


def version(conversation, number, *, current=False):
    return Summary.objects.create(
        conversation=conversation,
        version=number,
        text=f"version {number}",
        is_current=current,
        covered_through=0,
        message_count=0,
    )


def test_an_older_version_becomes_the_only_current_one(conversation):
    """The chosen version is current; the one that was is not."""
    first, second = version(conversation, 1), version(conversation, 2, current=True)
    summary_make_current(summary=first)
    assert list(
        Summary.objects.filter(conversation=conversation, is_current=True).values_list(
            "pk", flat=True
        )
    ) == [first.pk]
    second.refresh_from_db()
    assert not second.is_current


def test_the_history_names_the_actor_and_the_reason(conversation, staff):
    """With ``actor`` and ``reason``, the summary's audit record says who and why."""
    first = version(conversation, 1)
    version(conversation, 2, current=True)
    summary_make_current(summary=first, actor=staff, reason="the newer one was wrong")
    record = first.history.latest("history_date")
    assert record.history_user == staff
    assert record.history_change_reason == "the newer one was wrong"
