"""The Django admin lists every memory and chat model for superusers, with history pages."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from memory.models import SummaryRun, SystemPrompt

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client):
    client.force_login(get_user_model().objects.create_superuser("root", "r@example.com", "pw"))
    return client


@pytest.mark.parametrize(
    "model",
    [
        "chat.conversation",
        "chat.message",
        "memory.systemprompt",
        "memory.summary",
        "memory.fact",
        "memory.decision",
        "memory.actionitem",
        "memory.summaryrun",
        "memory.embedding",
    ],
)
def test_every_model_has_a_changelist(admin_client, world, model):
    """The changelist and the add page load."""
    app, name = model.split(".")
    assert admin_client.get(reverse(f"admin:{app}_{name}_changelist")).status_code == 200
    assert (
        admin_client.get(reverse(f"admin:{app}_{name}_changelist"), {"q": "x"}).status_code == 200
    )


@pytest.mark.parametrize("key", ["fact", "decision", "action", "conversation"])
def test_change_pages_load(admin_client, world, key):
    """A memory's change page and its history page (with revert) load."""
    obj = world[key]
    info = (obj._meta.app_label, obj._meta.model_name)
    assert (
        admin_client.get(reverse("admin:{}_{}_change".format(*info), args=[obj.pk])).status_code
        == 200
    )
    assert (
        admin_client.get(reverse("admin:{}_{}_history".format(*info), args=[obj.pk])).status_code
        == 200
    )


def test_system_prompts_and_runs_are_shown(admin_client, world, staff):
    """System prompt versions and summary runs have change pages."""
    prompt = SystemPrompt.objects.create(version=7, text="Be kind.")
    run = SummaryRun.objects.create(conversation=world["conversation"], requested_by=staff)
    assert (
        admin_client.get(reverse("admin:memory_systemprompt_change", args=[prompt.pk])).status_code
        == 200
    )
    assert (
        admin_client.get(reverse("admin:memory_summaryrun_change", args=[run.pk])).status_code
        == 200
    )
    summary = world["summaries"][0]
    assert (
        admin_client.get(reverse("admin:memory_summary_history", args=[summary.pk])).status_code
        == 200
    )
