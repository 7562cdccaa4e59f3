"""Project pages: thin views over projects.services and projects.selectors. Every project and
conversation looked up is the user's own (404 otherwise)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from chat.jsonsafe import MAX_ID
from chat.selectors import conversation_get_for_user
from memory.selectors import projects_of
from projects import selectors, services
from projects.briefing import BriefingData, project_briefing
from projects.forms import DeleteProjectForm, ForgetLearningForm, ProjectForm
from web.access import login_required
from web.downloads import attachment, download_filename

LIST = "projects:list"


def _project(request: HttpRequest, project_id: int):
    return selectors.project_get_for_user(user=request.user, project_id=project_id)


def _back(request: HttpRequest, default: str) -> HttpResponse:
    """After a form post: to ``next`` when it is a page of this site, else ``default``."""
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = default
    return redirect(target)


@login_required(default_next=LIST)
@require_GET
def project_list(request: HttpRequest) -> HttpResponse:
    context = {
        "projects": selectors.project_list(user=request.user),
        "archived": selectors.project_list(user=request.user, archived=True),
        "form": ProjectForm(user=request.user),
    }
    return render(request, "projects/list.html", context)


@login_required(default_next=LIST)
@require_http_methods(["GET", "POST"])
def project_new(request: HttpRequest) -> HttpResponse:
    form = ProjectForm(request.POST or None, user=request.user)
    if request.method == "POST" and form.is_valid():
        project = services.project_create(user=request.user, **form.cleaned_data)
        return redirect(project)
    status = 400 if request.method == "POST" else 200
    return render(request, "projects/form.html", {"form": form}, status=status)


@login_required(default_next=LIST)
@require_GET
def project_detail(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _project(request, project_id)
    context = {
        "project": project,
        "conversations": selectors.project_conversations(project=project),
        "counts": selectors.project_memory_counts(project=project),
    }
    return render(request, "projects/detail.html", context)


@login_required(default_next=LIST)
@require_http_methods(["GET", "POST"])
def project_edit(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _project(request, project_id)
    form = ProjectForm(request.POST or None, user=request.user, project=project)
    if request.method == "POST" and form.is_valid():
        services.project_update(project=project, **form.cleaned_data)
        return redirect(project)
    status = 400 if request.method == "POST" else 200
    return render(request, "projects/form.html", {"form": form, "project": project}, status=status)


@login_required(default_next=LIST)
@require_POST
def project_archive(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _project(request, project_id)
    services.project_set_archived(project=project, archived=request.POST.get("archived") != "0")
    return _back(request, project.get_absolute_url())


@login_required(default_next=LIST)
@require_http_methods(["GET", "POST"])
def project_delete(request: HttpRequest, project_id: int) -> HttpResponse:
    """GET: ask what becomes of its conversations and memories. POST: delete."""
    project = _project(request, project_id)
    form = DeleteProjectForm(request.POST or None, project=project)
    if request.method == "POST" and form.is_valid():
        name = project.name
        services.delete_project(project, keep=form.keep, actor=request.user)
        if form.keep:
            done = "its conversations and memories now reach every conversation"
        else:
            done = "its conversations and what was learned only in them were deleted"
        messages.success(request, f"The project “{name}” was deleted: {done}.")
        return redirect(LIST)
    context = {
        "project": project,
        "form": form,
        "conversation_count": project.conversations.count(),
        "counts": selectors.project_memory_counts(project=project),
    }
    return render(
        request, "projects/confirm_delete.html", context, status=400 if form.errors else 200
    )


@login_required(default_next=LIST)
@require_http_methods(["GET", "POST"])
def project_forget(request: HttpRequest, project_id: int) -> HttpResponse:
    """GET: ask what becomes of what the project learned. POST: move it or forget it."""
    project = _project(request, project_id)
    form = ForgetLearningForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        everywhere = form.cleaned_data["fate"] == form.EVERYWHERE
        services.project_learning_forget(project=project, everywhere=everywhere, actor=request.user)
        done = "moved to everywhere" if everywhere else "forgotten"
        messages.success(request, f"What “{project.name}” learned was {done}.")
        return redirect("projects:knowledge", project_id=project.pk)
    context = {
        "project": project,
        "form": form,
        "counts": selectors.project_memory_counts(project=project),
    }
    return render(
        request, "projects/confirm_forget.html", context, status=400 if form.errors else 200
    )


@login_required(default_next=LIST)
@require_GET
def project_knowledge(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _project(request, project_id)
    context = {
        "project": project,
        "knowledge": selectors.project_knowledge(project=project),
        "here": request.get_full_path(),  # where a row's forms come back without JavaScript
        # The rows' "Only in …" select, as on the Memory page (memory/memory.html#memory-row).
        "projects": projects_of(user=request.user),
    }
    return render(request, "projects/knowledge.html", context)


@login_required(default_next=LIST)
@require_GET
def project_briefing_download(request: HttpRequest, project_id: int) -> HttpResponse:
    project = _project(request, project_id)
    count, first, last = selectors.project_message_span(project=project)
    data = BriefingData(
        project=project,
        knowledge=selectors.project_knowledge(project=project),
        conversation_count=project.conversations.count(),
        message_count=count,
        first_message_at=first,
        last_message_at=last,
        today=timezone.localdate(),
    )
    return attachment(
        project_briefing(data),
        content_type="text/markdown; charset=utf-8",
        filename=download_filename("briefing", project.name, extension="md"),
    )


@login_required(default_next=LIST)
@require_POST
def conversation_move(request: HttpRequest, conversation_id: int) -> HttpResponse:
    """Move a conversation into one of the user's projects, or out of any (``project`` empty)."""
    conversation = conversation_get_for_user(user=request.user, conversation_id=conversation_id)
    value = request.POST.get("project", "")
    project = None
    if value:
        if not value.isdigit() or not 1 <= int(value) <= MAX_ID:
            return HttpResponseBadRequest("project must be a project id")
        project = _project(request, int(value))
    try:
        services.conversation_move(conversation=conversation, project=project)
    except ValidationError as error:
        return HttpResponseBadRequest(" ".join(error.messages))
    return _back(request, conversation.get_absolute_url())
