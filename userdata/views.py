"""The user's own data: thin views over ``userdata.services`` and ``memory.services``. No user
id is in any URL; a conversation id is looked up among the signed-in user's (404 otherwise)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import logout
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from chat.branches import branch_messages, branch_question_for_user
from chat.selectors import conversation_get_for_user
from memory.services import conversation_forget, conversation_forget_plan
from memory.services.forget import branch_forget, branch_forget_plan
from userdata import chat_import, services
from userdata.forms import CONFIRMATION, AccountDeleteForm, ChatImportForm, ForgetEverythingForm
from userdata.transfer.external import BadFile
from web.access import login_required
from web.downloads import attachment


@login_required
@require_http_methods(["GET", "POST"])
def conversation_forget_view(request, conversation_id: int):
    """GET: what would be forgotten. POST: forget it, then show the page again (said done)."""
    conversation = conversation_get_for_user(user=request.user, conversation_id=conversation_id)
    if request.method == "POST":
        result = conversation_forget(conversation=conversation, actor=request.user)
        messages.success(request, f"Forgotten: {result.describe()}.")
        return redirect("userdata:forget_conversation", conversation_id=conversation.pk)
    plan = conversation_forget_plan(conversation=conversation)
    return render(
        request, "userdata/forget_conversation.html", {"conversation": conversation, "plan": plan}
    )


@login_required
@require_http_methods(["GET", "POST"])
def branch_forget_view(request, conversation_id: int, message_id: int):
    """What only the branch question ``message_id`` starts taught: GET says what would be
    forgotten, POST forgets it and goes back to the conversation."""
    question = branch_question_for_user(
        user=request.user, conversation_id=conversation_id, message_id=message_id
    )
    conversation = question.conversation
    branch = branch_messages(question)
    if request.method == "POST":
        result = branch_forget(conversation=conversation, messages=branch, actor=request.user)
        messages.success(request, f"Forgotten: {result.describe()}.")
        return redirect(conversation)
    plan = branch_forget_plan(messages=branch)
    context = {"conversation": conversation, "question": question, "plan": plan}
    return render(request, "userdata/forget_branch.html", context)


@login_required(default_next="profiles:profile")
@require_http_methods(["GET", "POST"])
def forget_everything(request):
    form = ForgetEverythingForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        result = services.forget_everything(
            user=request.user,
            reset_style=form.cleaned_data["reset_style"],
            clear_preferences=form.cleaned_data["clear_preferences"],
        )
        messages.success(request, f"Everything was forgotten: {result.describe()}.")
        return redirect("profiles:profile")
    return render(
        request, "userdata/forget_everything.html", {"form": form, "confirmation": CONFIRMATION}
    )


@login_required(default_next="profiles:profile")
@require_GET
def data_export(request):
    download = services.data_export(user=request.user)
    return attachment(
        download.body, content_type="application/json; charset=utf-8", filename=download.filename
    )


@login_required(default_next="profiles:profile")
@require_http_methods(["GET", "POST"])
def account_delete(request):
    form = AccountDeleteForm(request.POST if request.method == "POST" else None, user=request.user)
    if request.method == "POST" and form.is_valid():
        services.account_delete(user=request.user)
        logout(request)
        return redirect("userdata:goodbye")
    return render(request, "userdata/account_delete.html", {"form": form})


@require_GET
def goodbye(request):
    # It says the account is gone and the visitor logged out: not for someone signed in.
    if request.user.is_authenticated:
        return redirect("chat:home")
    return render(request, "userdata/goodbye.html")


@login_required(default_next="userdata:chat_import")
@require_http_methods(["GET", "POST"])
def chat_import_view(request):
    """GET: the upload form and the user's recent imports. POST: check the file whole (read
    as a stream) and queue its import (a refused file stores nothing), then show its progress."""
    max_bytes = chat_import.max_upload_bytes()
    bound = request.method == "POST"
    form = ChatImportForm(
        request.POST if bound else None, request.FILES if bound else None, max_bytes=max_bytes
    )
    if bound and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            started = chat_import.chat_import_start(
                user=request.user, filename=upload.name, file=upload
            )
        except BadFile as error:
            form.add_error("file", str(error))
        else:
            messages.success(
                request,
                f"{started.get_source_display()} export received: {started.total:,} "
                f"conversation{'s' if started.total != 1 else ''} to import.",
            )
            return redirect("userdata:chat_import")
    imports = chat_import.chat_imports_recent(user=request.user)
    return render(
        request,
        "userdata/import.html",
        {"form": form, "imports": imports, "max_mb": max_bytes // 1_000_000},
        status=400 if bound else 200,
    )


@login_required(default_next="userdata:chat_import")
@require_GET
def chat_import_progress(request, import_id: int):
    """One import's progress (the page polls it while the import runs); the user's own only."""
    item = chat_import.chat_import_get_for_user(user=request.user, import_id=import_id)
    return render(request, "userdata/import.html#progress", {"item": item})
