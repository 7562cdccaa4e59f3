"""Writes of projects (`project_<verb>`), and what becomes of a project's conversations and
memories when it is deleted or a conversation changes project.

Each runs in one transaction. ``delete_project`` and ``conversation_move`` are where the
scope of memory follows (what a project's conversations taught moves or goes with them)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from chat.models import Conversation
from chat.services import conversation_delete
from memory.models import ActionItem, Decision, Fact
from memory.services import conversation_forget, memories_delete
from memory.services.edits import BULK_MAX
from projects.models import Project

PROJECT_MEMORY_MODELS = (Fact, Decision, ActionItem)


def project_create(*, user, name: str, description: str = "", instructions: str = "") -> Project:
    project = Project(user=user, name=name, description=description, instructions=instructions)
    project.full_clean()
    project.save()
    return project


def project_update(*, project: Project, name: str, description: str, instructions: str) -> Project:
    project.name = name
    project.description = description
    project.instructions = instructions
    project.updated_at = timezone.now()
    project.full_clean()
    project.save(update_fields=["name", "description", "instructions", "updated_at"])
    return project


def project_set_archived(*, project: Project, archived: bool) -> Project:
    """An archived project leaves the sidebar; its conversations stay in it (and keep its
    instructions), listed on its page and under "Show archived"."""
    if archived != project.archived:
        project.archived_at = timezone.now() if archived else None
        project.save(update_fields=["archived_at"])
    return project


def conversation_move(*, conversation: Conversation, project: Project | None) -> Conversation:
    """Put ``conversation`` in ``project`` (one of its user's), or outside any (None).
    A temporary conversation stays outside every project."""
    if project is not None:
        if project.user_id != conversation.user_id:
            raise ValidationError("That project is not yours.")
        if conversation.temporary:
            raise ValidationError("A temporary conversation cannot be in a project.")
    conversation.project = project
    conversation.save(update_fields=["project"])
    return conversation


def delete_project(project: Project, keep: bool, *, actor=None) -> None:
    """Delete ``project``. ``keep``: its conversations and memories move to everywhere (no
    project). Else its conversations are deleted as the user deletes one (what was learned
    only there forgotten first), then the project's remaining memories."""
    actor = actor or project.user
    with transaction.atomic():
        conversations = Conversation.objects.filter(project=project)
        if keep:
            conversations.update(project=None)
            for model in PROJECT_MEMORY_MODELS:
                model.objects.filter(project=project).update(project=None)
        else:
            for conversation in conversations.order_by("pk"):
                conversation_forget(conversation=conversation, actor=actor, keep_place=False)
                conversation_delete(conversation=conversation)
            for model in PROJECT_MEMORY_MODELS:
                ids = list(model.objects.filter(project=project).values_list("pk", flat=True))
                for start in range(0, len(ids), BULK_MAX):
                    memories_delete(
                        model=model,
                        ids=ids[start : start + BULK_MAX],
                        actor=actor,
                        by="with its project",
                    )
        project.delete()
