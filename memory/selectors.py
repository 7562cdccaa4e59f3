"""Reads of long-term memory."""

from __future__ import annotations

from memory.models import Summary, SummaryRun, SystemPrompt
from memory.prompts import DEFAULT_SYSTEM_PROMPT


def system_prompt_current() -> SystemPrompt:
    """The newest system prompt version (version 1, the default text, when there is none)."""
    prompt = SystemPrompt.objects.order_by("-version").first()
    if prompt is None:
        prompt, _ = SystemPrompt.objects.get_or_create(
            version=1, defaults={"text": DEFAULT_SYSTEM_PROMPT}
        )
    return prompt


def summary_current(conversation) -> Summary | None:
    return Summary.objects.filter(conversation=conversation, is_current=True).first()


def summary_run_active(*, conversation) -> SummaryRun | None:
    """The conversation's queued or running summary run, if any (the newest, should there be
    more: a new run is only started when none is active)."""
    return (
        SummaryRun.objects.filter(
            conversation=conversation,
            status__in=[SummaryRun.Status.QUEUED, SummaryRun.Status.RUNNING],
        )
        .order_by("-created_at")
        .first()
    )
