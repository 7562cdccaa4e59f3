"""A user's projects, for staff: re-summarise a project's conversations. (The projects are
listed on the user's page, their memories and conversations through its filters.)"""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from chat.publisher import summary_runs_watch_from_view
from staff.selectors import projects as selectors
from staff.services.projects import project_resummarise as resummarise
from web.access import staff_required


@staff_required
@require_POST
def project_resummarise(request, project_id: int):
    project = selectors.project_get(project_id=project_id)
    runs = resummarise(project=project, actor=request.user)
    summary_runs_watch_from_view(runs)  # their notices reach the user's open tabs
    messages.info(
        request,
        f"Re-summarising {len(runs)} conversation{'s' if len(runs) != 1 else ''} of "
        f"“{project.name}” in the background.",
    )
    return redirect(reverse("staff:user", args=[project.user_id]) + f"#project-{project.pk}")
