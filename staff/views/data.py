"""Data rights: export a user's data as JSON, import an export, delete a user's data."""

from __future__ import annotations

import json

from django.contrib import messages
from django.core.serializers.json import DjangoJSONEncoder
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from staff.forms import ImportForm, UserDataDeleteForm
from staff.selectors.users import user_get
from staff.services.user_data import user_data_counts, user_data_delete
from staff.views.common import attachment, download_filename
from userdata.transfer.export import user_data_export
from userdata.transfer.importer import BadExport, user_data_import
from web.access import staff_required


@staff_required
@require_GET
def user_export(request, user_id: int):
    """Everything held about the user, as a JSON download."""
    target = user_get(user_id=user_id)
    document = user_data_export(user=target)
    body = json.dumps(document, cls=DjangoJSONEncoder, ensure_ascii=False, indent=1)
    filename = download_filename(
        "memorychat", target.get_username(), timezone.localdate().isoformat(), extension="json"
    )
    return attachment(body, content_type="application/json; charset=utf-8", filename=filename)


@staff_required
@require_http_methods(["GET", "POST"])
def data_import(request):
    bound = request.method == "POST"
    form = ImportForm(request.POST if bound else None, request.FILES if bound else None)
    if request.method == "POST" and form.is_valid():
        try:
            result = user_data_import(
                document=form.cleaned_data["file"],
                actor=request.user,
                username=form.cleaned_data["username"] or None,
            )
        except BadExport as error:
            form.add_error("file", error)
        else:
            created = " (new user, no password set)" if result.user_created else ""
            messages.success(
                request, f"Imported for {result.user.get_username()}{created}: {result.describe()}."
            )
            return redirect("staff:user", user_id=result.user.pk)
    return render(request, "staff/import.html", {"form": form})


@staff_required
@require_http_methods(["GET", "POST"])
def user_data_delete_view(request, user_id: int):
    """GET: what will be deleted, and a confirmation. POST with the box ticked: delete."""
    target = user_get(user_id=user_id)
    form = UserDataDeleteForm(request.POST if request.method == "POST" else None)
    if request.method == "POST" and form.is_valid():
        counts = user_data_delete(
            user=target, actor=request.user, erase_history=form.cleaned_data["erase_history"]
        )
        messages.success(request, f"Deleted {target.get_username()}'s data: {counts.describe()}.")
        return redirect("staff:user", user_id=target.pk)
    return render(
        request,
        "staff/user_data_delete.html",
        {"target": target, "form": form, "counts": user_data_counts(user=target)},
    )
