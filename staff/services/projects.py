"""Staff actions on a user's project."""

from __future__ import annotations

from memory import services as memory_services
from memory.models import SummaryRun
from projects.models import Project


def project_resummarise(*, project: Project, actor) -> list[SummaryRun]:
    """Queue a full re-summarisation of every conversation of the project (a conversation
    with a run already queued or running keeps that one)."""
    conversations = project.conversations.filter(temporary=False).order_by("id")
    return [
        memory_services.conversation_resummarise(conversation=conversation, actor=actor)
        for conversation in conversations
    ]
