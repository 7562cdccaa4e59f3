"""A user's projects as the staff user page lists them: conversations and memories counted."""

from __future__ import annotations

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.shortcuts import get_object_or_404

from memory.models import ActionItem, Decision, Fact
from projects.models import Project


def _memories(model) -> Coalesce:
    counted = (
        model.objects.filter(project=OuterRef("pk"))
        .order_by()
        .values("project")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return Coalesce(Subquery(counted, output_field=IntegerField()), Value(0))


def user_projects(*, user) -> QuerySet:
    return Project.objects.filter(user=user).annotate(
        conversation_count=Count("conversations"),
        fact_count=_memories(Fact),
        decision_count=_memories(Decision),
        action_item_count=_memories(ActionItem),
    )


def project_get(*, project_id: int) -> Project:
    return get_object_or_404(Project.objects.select_related("user"), pk=project_id)
