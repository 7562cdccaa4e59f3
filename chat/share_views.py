"""Share and export pages: thin views over ``chat.sharing``. Every page but the shared copy
is its owner's (404 otherwise); the copy is anyone's with the link."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from chat import sharing
from chat.selectors import conversation_get_for_user
from web.access import login_required
from web.downloads import attachment, download_filename

FORMATS = {
    "markdown": ("md", "text/markdown; charset=utf-8", sharing.conversation_markdown),
    "json": ("json", "application/json; charset=utf-8", sharing.conversation_json),
}


@login_required
@require_GET
def export(request, conversation_id: int, fmt: str):
    conversation = conversation_get_for_user(user=request.user, conversation_id=conversation_id)
    if fmt not in FORMATS:
        raise Http404("No such format.")
    extension, content_type, build = FORMATS[fmt]
    name = download_filename("memorychat", conversation.display_title, extension=extension)
    return attachment(build(conversation), content_type=content_type, filename=name)


@login_required
@require_http_methods(["GET", "POST"])
def share(request, conversation_id: int):
    """GET: the link if shared, what sharing shows otherwise. POST: share (or update)."""
    conversation = conversation_get_for_user(user=request.user, conversation_id=conversation_id)
    if request.method == "POST":
        sharing.share_create(conversation=conversation)
        messages.success(request, "Anyone with the link can now read this conversation.")
        return redirect("chat:share", conversation_id=conversation.pk)
    current = sharing.share_of(conversation)
    link = request.build_absolute_uri(current.get_absolute_url()) if current else ""
    return render(
        request,
        "chat/share.html",
        {
            "conversation": conversation,
            "share": current,
            "link": link,
            "shared_count": len(sharing.shared_messages(current)) if current else 0,
        },
    )


@login_required
@require_POST
def share_revoke(request, conversation_id: int):
    conversation = conversation_get_for_user(user=request.user, conversation_id=conversation_id)
    if sharing.share_revoke(conversation=conversation):
        messages.success(request, f"“{conversation.display_title}” is no longer shared.")
    if request.POST.get("back") == "profile":
        return redirect("/profile/#your-data")
    return redirect("chat:share", conversation_id=conversation.pk)


@never_cache  # a revoked link must stop working at once, for caches too
@require_GET
def shared(request, token: str):
    share = sharing.shared_get(token=token)
    response = render(
        request,
        "chat/shared.html",
        {"share": share, "shared_messages": sharing.shared_messages(share)},
    )
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response
