"""Writes of projects (`project_<verb>`), and what becomes of a project's conversations and
memories when it is deleted or a conversation changes project.

Each runs in one transaction. ``delete_project`` and ``conversation_move`` are where the
scope of memory follows (what a project's conversations taught moves or goes with them)."""

from __future__ import annotations

from functools import partial

from django.db import transaction
from django.utils import timezone

from chat import fanout
from chat.models import Conversation
from memory.services import moves
from projects.models import Project


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


def conversation_move(
    *, conversation: Conversation, project: Project | None, actor=None
) -> Conversation:
    """Put ``conversation`` in ``project`` (one of its user's), or outside any (None), with
    what came only from it (``memory.services.moves``); its open tabs take the new scope for
    their next turn. A temporary conversation stays outside every project."""
    moves.conversation_move(conversation=conversation, project=project, actor=actor)
    transaction.on_commit(lambda: fanout.conversation_settings_changed(conversation))
    return conversation


def delete_project(project: Project, keep: bool, *, actor=None) -> None:
    """Delete ``project``. ``keep``: its conversations (with what came only from them) and
    its memories move to everywhere; else its conversations are forgotten and deleted as the
    user deletes one, then its remaining memories."""
    with transaction.atomic():
        kept = list(project.conversations.all()) if keep else []
        moves.project_empty(
            project=project,
            keep=moves.EVERYWHERE if keep else moves.DELETE,
            actor=actor or project.user,
        )
        project.delete()
        for conversation in kept:
            conversation.project_id = None
            transaction.on_commit(partial(fanout.conversation_settings_changed, conversation))


def project_learning_forget(*, project: Project, everywhere: bool, actor) -> None:
    """What ``project`` learned (its memories, its conversations' summaries): moved to
    everywhere, or forgotten (``memory.services.moves.project_learning_forget``). Its
    conversations stay in it."""
    moves.project_learning_forget(
        project=project, keep=moves.EVERYWHERE if everywhere else moves.DELETE, actor=actor
    )
