"""Chat pages: thin views over chat.services and chat.selectors."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib import messages as django_messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth import views as auth_views
from django.contrib.auth.views import PasswordResetView
from django.http import Http404, HttpResponseBadRequest, JsonResponse
from django.shortcuts import redirect, render
from django.urls import resolve, reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect
from django_ratelimit.core import is_ratelimited

from chat import branches, fanout, job_watch, limits, selectors, services
from chat.forms import (
    ConversationSettingsForm,
    ModelForm,
    NewConversationForm,
    RenameForm,
    SignupForm,
    model_picker_choices,
)
from chat.jsonsafe import MAX_ID
from chat.search import message_search
from chat.templatetags.chat_tags import report_view
from llm import OFFLINE_MODEL
from memory.services import conversation_forget, conversation_forget_plan
from profiles.account import email_link_notice
from web.access import login_required
from web.fragments import render_fragments, render_page_or_fragment

TEMPLATE = "chat/chat.html"

logger = logging.getLogger(__name__)


class LoginView(auth_views.LoginView):
    """Django's login page; with DEBUG on, it says how to sign in to the demo account."""

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        if settings.DEBUG:
            from chat.management.commands.first_run import DEMO_PASSWORD, DEMO_USERNAME

            exists = get_user_model().objects.filter(username=DEMO_USERNAME).exists()
            if exists or settings.MEMORYCHAT_CREATE_DEMO_USER:
                context["demo"] = {
                    "username": DEMO_USERNAME,
                    "password": DEMO_PASSWORD,
                    "exists": exists,
                }
        return context


def signup(request):
    if request.user.is_authenticated:
        return redirect("chat:home")
    form = SignupForm(request.POST or None)
    if request.method == "POST":
        verdict = limits.hit(
            f"signup:{limits.client_ip(request)}",
            limit=settings.MEMORYCHAT_SIGNUPS_PER_HOUR,
            window=3600,
        )
        if not verdict.allowed:
            form.add_error(
                None,
                "Too many accounts were created from your network recently. "
                f"Try again in {verdict.retry_after // 60 + 1} minutes.",
            )
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        if address := form.cleaned_data["email"]:
            # Said by the chat page's notice: a new account starts in the chat, not on the
            # profile's empty style table (the profile shows the address waiting too).
            email_link_notice(request, user=user, address=address)
        return redirect("chat:home")
    return render(request, "registration/signup.html", {"form": form})


def _reset_account(group, request) -> str:
    return " ".join(request.POST.get("email", "").split()).casefold()


class ThrottledPasswordReset(PasswordResetView):
    """Django's password reset, throttled per account (the address typed) and per client
    address with django-ratelimit, so the form cannot be used to flood an inbox."""

    def form_valid(self, form):
        per_account = f"{settings.MEMORYCHAT_PASSWORD_RESETS_PER_HOUR}/h"
        per_address = f"{settings.MEMORYCHAT_PASSWORD_RESETS_PER_HOUR_PER_ADDRESS}/h"
        limited = [
            settings.MEMORYCHAT_PASSWORD_RESETS_PER_HOUR
            and is_ratelimited(
                self.request, group="password-reset-account", key=_reset_account,
                rate=per_account, increment=True,
            ),
            settings.MEMORYCHAT_PASSWORD_RESETS_PER_HOUR_PER_ADDRESS
            and is_ratelimited(
                self.request, group="password-reset-address", key="ip",
                rate=per_address, increment=True,
            ),
        ]  # fmt: skip
        if any(limited):
            form.add_error(
                None,
                "Too many password reset requests for this account or from your network. "
                "Try again in an hour.",
            )
            return self.render_to_response(self.get_context_data(form=form), status=429)
        return super().form_valid(form)


password_reset = ThrottledPasswordReset.as_view()


def _current_page(request):
    """The conversation the browser shows, for a fragment asked for by an HTMX request (its
    HX-Current-URL), so the sidebar keeps its highlight and links after an action."""
    path = request.htmx.current_url_abs_path if request.htmx else None
    if not path:
        return None
    try:
        match = resolve(path.split("?", 1)[0])
    except Http404:
        return None
    if match.view_name != "chat:conversation":
        return None
    return selectors.conversation_find_for_user(
        user=request.user, conversation_id=match.kwargs["conversation_id"]
    )


def _sidebar_context(request, current=None, *, archived: bool | None = None, project=None) -> dict:
    """The sidebar: its conversations (each project's grouped under it), the search's hits.
    ``project``: the project a new conversation is being started in (no ``current`` yet)."""
    # No NUL: PostgreSQL text cannot hold one, so a query with one could not even be asked.
    query = services.clean_text(request.GET.get("q", "")).strip()[:200]
    if archived is None:
        archived = request.GET.get("archived") == "1" or request.POST.get("archived_view") == "1"
    page_url = current.get_absolute_url() if current is not None else reverse("chat:home")
    current_project_id = current.project_id if current is not None else getattr(project, "pk", None)
    groups, move_targets = selectors.sidebar_groups(
        user=request.user, query=query, archived=archived, current_project_id=current_project_id
    )
    return {
        "sidebar_page": selectors.sidebar_page(user=request.user, query=query, archived=archived),
        "project_groups": groups,
        "move_targets": move_targets,
        "message_hits": message_search(user=request.user, query=query) if query else [],
        "query": query,
        "show_archived": archived,
        "current": current,
        "page_url": page_url,
    }


@login_required
@require_GET
def sidebar_more(request):
    """The sidebar's next page of conversations (htmx, on scroll or "Show more"): the
    requester's only; ``current`` (the open conversation, marked) another user's is 404."""
    current = _current_of(request)
    query = services.clean_text(request.GET.get("q", "")).strip()[:200]
    archived = request.GET.get("archived") == "1"
    try:
        page = selectors.sidebar_page(
            user=request.user,
            query=query,
            archived=archived,
            after=request.GET.get("after", "")[:60],
            previous_group=request.GET.get("group", "")[:40],
        )
    except ValueError:
        return HttpResponseBadRequest("after must be a cursor from the sidebar's last page")
    context = {
        "sidebar_page": page,
        "move_targets": selectors.move_targets(user=request.user),
        "query": query,
        "show_archived": archived,
        "current": current,
        "page_url": current.get_absolute_url() if current is not None else reverse("chat:home"),
    }
    return render_fragments(request, TEMPLATE, context, "sidebar-page")


def _current_of(request):
    value = request.GET.get("current", "")
    if not value:
        return None
    if not value.isdigit() or not 1 <= int(value) <= MAX_ID:
        raise Http404("No such conversation.")
    return selectors.conversation_get_for_user(user=request.user, conversation_id=int(value))


def _page_context(request, conversation=None) -> dict:
    temporary = (
        conversation.temporary if conversation is not None else request.GET.get("temporary") == "1"
    )
    project = None
    if conversation is None and not temporary:  # a new conversation, maybe in a project
        project = selectors.project_for_new_conversation(
            user=request.user, project_id=request.GET.get("project", "")
        )
    context = _sidebar_context(request, conversation, project=project)
    context["max_message_chars"] = settings.MEMORYCHAT_MAX_MESSAGE_CHARS
    context["temporary"] = temporary
    context["project"] = project if conversation is None else conversation.project
    context["model_picker"] = model_picker_choices(conversation.model if conversation else "")
    # "messages" is the chat's (none on a blank page): the messages framework's notices (a
    # deletion's) go as "page_notices", or the context processor's would show as chat messages.
    context["page_notices"] = django_messages.get_messages(request)
    context["messages"] = []
    if conversation is not None:
        services.replies_interrupt_stale(conversation=conversation)
        highlight = _highlight(request)
        preview = None
        if highlight is not None:  # a link into a hidden branch shows it, for this page alone
            preview = branches.branch_preview_holding(
                conversation=conversation, message_id=highlight
            )
        messages, has_more = selectors.message_page(
            conversation=conversation, highlight=highlight, preview=preview
        )
        context.update(
            branch_preview=preview,
            highlight=highlight,
            found=bool(request.GET.get("found")),
            conversation=conversation,
            messages=messages,
            has_more=has_more,
            last_context=selectors.last_context(conversation),
            settings_form=ConversationSettingsForm(instance=conversation),
        )
    if not context.get("messages"):
        context["suggestions"] = selectors.starter_suggestions(
            user=request.user,
            temporary=context["temporary"],
            project_id=getattr(context["project"], "pk", None),
        )
    return context


def _highlight(request) -> int | None:
    """The message to show highlighted (a memory's source: ``?highlight=<message id>``; a
    search result: ``?found=<message id>``)."""
    value = request.GET.get("highlight", "") or request.GET.get("found", "")
    return int(value) if value.isdigit() and 1 <= int(value) <= MAX_ID else None


@login_required
@require_GET
@vary_on_headers("HX-Request")
def home(request):
    return render_page_or_fragment(
        request, TEMPLATE, _page_context(request), "sidebar-list", target="sidebar-list"
    )


@login_required
@require_GET
@vary_on_headers("HX-Request")
def conversation_detail(request, conversation_id: int):
    conversation = selectors.conversation_get_for_user(
        user=request.user, conversation_id=conversation_id
    )
    context = _page_context(request, conversation)
    if request.htmx and request.htmx.target == "conversation-header":
        # A conversation started from the blank page: its header (title, badges, Settings).
        return render_fragments(request, TEMPLATE, context, "conversation-header")
    return render_page_or_fragment(
        request, TEMPLATE, context, "sidebar-list", target="sidebar-list"
    )


@login_required
@require_POST
def branch_keep(request, conversation_id: int, message_id: int):
    """ "Keep this branch" under a link's preview: the conversation shows the branch holding
    the message from now on, as "1 / 2" would, and its open tabs swap it in too. Refused
    while a reply streams: the preview again, with the reason."""
    conversation = selectors.conversation_get_for_user(
        user=request.user, conversation_id=conversation_id
    )
    parameter = "found" if request.POST.get("found") else "highlight"
    back = f"{conversation.get_absolute_url()}?{parameter}={message_id}#m{message_id}"
    try:
        switched = branches.branch_show_holding(conversation=conversation, message_id=message_id)
    except services.ChatError as error:
        django_messages.error(request, str(error))
        return redirect(back)
    if switched is not None:
        try:
            for frame in branches.switched_frames(conversation=conversation, switched=switched):
                fanout.send_to_conversation(conversation.pk, frame)
        except Exception:  # stored: the other tabs show it on reload
            logger.warning("could not tell conversation %s's tabs of a branch", conversation.pk)
        if switched.title_job is not None:  # the branch's title, made by the job worker
            job_watch.watch_from_view(switched.title_job)
    return redirect(back)


@login_required
@require_GET
def message_history(request, conversation_id: int):
    """Older messages, for "Load earlier"."""
    conversation = selectors.conversation_get_for_user(
        user=request.user, conversation_id=conversation_id
    )
    try:
        before = int(request.GET["before"])
    except (KeyError, ValueError):
        return HttpResponseBadRequest("before must be a message id")
    if not 1 <= before <= MAX_ID:
        return HttpResponseBadRequest("before must be a message id")
    messages, has_more = selectors.message_page(conversation=conversation, before_id=before)
    context = {"conversation": conversation, "messages": messages, "has_more": has_more}
    return render_fragments(request, TEMPLATE, context, "message-list")


@login_required
@require_GET
def reply_version(request, conversation_id: int, message_id: int, number: int):
    """One version of a regenerated reply, as its article ("1 / 3")."""
    conversation = selectors.conversation_get_for_user(
        user=request.user, conversation_id=conversation_id
    )
    message = selectors.reply_version_shown(
        conversation=conversation, reply_id=message_id, number=number
    )
    return render(request, "chat/_message.html", {"message": message})


@login_required
@require_GET
@vary_on_headers("HX-Request")
def context_report(request, conversation_id: int, message_id: int):
    """A reply's "What the model saw": the fragment the chat page's summary fetches when
    opened, or (no JS) a page; ``?version=N`` for an earlier version's report."""
    conversation = selectors.conversation_get_for_user(
        user=request.user, conversation_id=conversation_id
    )
    message = selectors.reply_report_shown(
        conversation=conversation, reply_id=message_id, version=request.GET.get("version")
    )
    if request.htmx:
        context = report_view(message.context_report, conversation)
        # Offline, the model the report was sized for did not answer: it is not named.
        context["offline"] = getattr(message, "model", "") == OFFLINE_MODEL
        return render(request, "chat/_context_report_body.html", context)
    return render(
        request, "chat/context_report.html", {"conversation": conversation, "message": message}
    )


@login_required
@require_POST
def conversation_new(request):
    """Start a conversation. The page's script calls this on the first Send and pushes the new
    URL; a plain form post (no JS) redirects."""
    form = NewConversationForm(request.POST)
    valid = form.is_valid()
    temporary = valid and form.cleaned_data["temporary"]
    project = selectors.project_for_new_conversation(
        user=request.user, project_id=request.POST.get("project", "")
    )
    if temporary and project is not None:
        return HttpResponseBadRequest("A temporary conversation cannot be in a project.")
    conversation = services.conversation_create(
        user=request.user,
        temporary=temporary,
        project=project,
        model=form.cleaned_data["model"] if valid else "",
    )
    url = conversation.get_absolute_url()
    if request.headers.get("Accept") == "application/json":
        return JsonResponse({"id": conversation.pk, "url": url}, status=201)
    return redirect(url)


@login_required
@require_POST
def conversation_rename(request, conversation_id: int):
    conversation = selectors.conversation_get_for_user(
        user=request.user, conversation_id=conversation_id
    )
    form = RenameForm(request.POST)
    if form.is_valid():
        services.conversation_rename(conversation=conversation, title=form.cleaned_data["title"])
    if request.htmx:
        current = _current_page(request)
        context = _sidebar_context(request, current)
        context["rename_error"] = (
            (conversation.pk, form.errors.get("title")) if form.errors else None
        )
        if current is not None and current.pk == conversation.pk and form.is_valid():
            # The open conversation: its heading and the tab's title follow (out of band).
            context["conversation"] = conversation
            return render_fragments(request, TEMPLATE, context, "sidebar-list", "title-oob")
        return render_fragments(request, TEMPLATE, context, "sidebar-list")
    return redirect(conversation)


@login_required
@require_POST
def conversation_archive(request, conversation_id: int):
    conversation = selectors.conversation_get_for_user(
        user=request.user, conversation_id=conversation_id
    )
    archived = request.POST.get("archived", "1") == "1"
    services.conversation_set_archived(conversation=conversation, archived=archived)
    if request.htmx:
        # The list the user was looking at (archived or not), with the page's own links.
        context = _sidebar_context(request, _current_page(request))
        return render_fragments(request, TEMPLATE, context, "sidebar-list")
    return redirect("chat:home")


@login_required
@require_POST
def conversation_pin(request, conversation_id: int):
    conversation = selectors.conversation_get_for_user(
        user=request.user, conversation_id=conversation_id
    )
    services.conversation_set_pinned(
        conversation=conversation, pinned=request.POST.get("pinned", "1") == "1"
    )
    if request.htmx:
        context = _sidebar_context(request, _current_page(request))
        return render_fragments(request, TEMPLATE, context, "sidebar-list")
    return redirect(_current_page(request) or "chat:home")


@login_required
def conversation_delete(request, conversation_id: int):
    """GET: confirm. POST: delete (and, if asked, forget what was learned in it first)."""
    conversation = selectors.conversation_get_for_user(
        user=request.user, conversation_id=conversation_id
    )
    if request.method == "POST":
        if request.POST.get("forget") == "1":
            conversation_forget(conversation=conversation, actor=request.user, keep_place=False)
        title = conversation.display_title
        services.conversation_delete(conversation=conversation)
        django_messages.success(request, f"Deleted “{title}”.")  # the next page says so
        if request.htmx:
            return HttpResponseClientRedirect("/")
        return redirect("chat:home")
    return render(
        request,
        "chat/confirm_delete.html",
        {"conversation": conversation, "plan": conversation_forget_plan(conversation=conversation)},
    )


@login_required
@require_POST
def conversation_settings(request, conversation_id: int):
    conversation = selectors.conversation_get_for_user(
        user=request.user, conversation_id=conversation_id
    )
    form = ConversationSettingsForm(request.POST, instance=conversation)
    if form.is_valid() and form.has_changed():
        form.save()
        fanout.conversation_settings_changed(conversation)  # the open tabs' next turns
    if request.htmx:
        context = {"conversation": conversation, "settings_form": form, "saved": form.is_valid()}
        return render_fragments(request, TEMPLATE, context, "conversation-settings")
    return redirect(conversation)


@login_required
@require_POST
def conversation_model(request, conversation_id: int):
    """The header's model picker: the model for the conversation's next replies."""
    conversation = selectors.conversation_get_for_user(
        user=request.user, conversation_id=conversation_id
    )
    form = ModelForm(request.POST, current=conversation.model)
    if not form.is_valid():
        return HttpResponseBadRequest("That model is not offered by the server.")
    services.conversation_set_model(conversation=conversation, model=form.cleaned_data["model"])
    fanout.conversation_settings_changed(conversation)  # the open tabs' next turns
    if request.htmx:
        context = {
            "conversation": conversation,
            "model_picker": model_picker_choices(conversation.model),
        }
        return render_fragments(request, TEMPLATE, context, "model-picker")
    return redirect(conversation)


@login_required
@require_GET
@vary_on_headers("HX-Request")
def search(request):
    """Titles and words in messages of all the user's conversations (chat.search): the page,
    or its results for the Ctrl+K palette."""
    query = services.clean_text(request.GET.get("q", "")).strip()[:200]
    context = {
        "query": query,
        "titles": list(selectors.conversation_titles_matching(user=request.user, query=query)),
        "message_hits": message_search(user=request.user, query=query),
    }
    if request.htmx:
        return render(request, "chat/_search_results.html", context)
    return render(request, "chat/search.html", context)
