"""A user's projects as the staff user page lists them: conversations and memories counted."""

from __future__ import annotations

from django.db.models import Count, QuerySet
from django.shortcuts import get_object_or_404

from memory.models import ActionItem, Decision, Fact
from projects.models import Project
from projects.selectors import count_in_project


def user_projects(*, user) -> QuerySet:
    return Project.objects.filter(user=user).annotate(
        conversation_count=Count("conversations"),
        fact_count=count_in_project(Fact.objects.all()),
        decision_count=count_in_project(Decision.objects.all()),
        action_item_count=count_in_project(ActionItem.objects.all()),
    )


def project_get(*, project_id: int) -> Project:
    return get_object_or_404(Project.objects.select_related("user"), pk=project_id)
