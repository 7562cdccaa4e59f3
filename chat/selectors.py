"""Reads for the chat pages."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from django.db import connection
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery, Window
from django.db.models.functions import RowNumber
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from chat.jsonsafe import MAX_ID
from chat.models import Conversation, Message, ReplyVersion
from memory.report import ContextReport, report_read
from memory.selectors import notices_for_messages

if TYPE_CHECKING:
    from chat.branches import Preview

HISTORY_PAGE_SIZE = 50


def conversation_get_for_user(*, user, conversation_id: int) -> Conversation:
    """The user's conversation, or 404 — another user's id is indistinguishable from none."""
    return get_object_or_404(
        Conversation.objects.select_related("project"), pk=conversation_id, user=user
    )


def conversation_find_for_user(*, user, conversation_id: int) -> Conversation | None:
    return Conversation.objects.filter(pk=conversation_id, user=user).first()


# Pinned first (the most recently pinned on top), then by activity.
LIST_ORDER = (F("pinned_at").desc(nulls_last=True), F("updated_at").desc(), F("id").desc())


def conversation_list(*, user, query: str = "", archived: bool = False) -> QuerySet:
    qs = Conversation.objects.filter(user=user, archived=archived)
    if query:
        qs = qs.filter(title__icontains=query.strip())
    return qs.order_by(*LIST_ORDER).only(
        "id", "title", "updated_at", "archived", "temporary", "pinned_at", "project_id"
    )


def project_for_new_conversation(*, user, project_id: str):
    """The user's active project a new conversation starts in (``?project=``), None for
    none; another user's, an archived or a missing one is 404. Read through the user's
    relation: chat imports nothing of projects, which builds on chat."""
    if not project_id:
        return None
    if not project_id.isdigit() or not 1 <= int(project_id) <= MAX_ID:
        raise Http404("No such project.")
    return get_object_or_404(user.projects.filter(archived_at=None), pk=int(project_id))


# What the sidebar shows of a project. With user_id: the user's reverse manager reads it to
# attach the user to each project, a query per project were it deferred.
_LISTED_PROJECT_FIELDS = ("id", "user_id", "name", "archived_at")

SIDEBAR_PAGE_SIZE = 50  # conversations in the sidebar's first page, and in each "more"
PROJECT_GROUP_SIZE = 5  # a project's conversations listed under it; the rest on its page


@dataclass
class ProjectGroup:
    """A project in the sidebar with its first listed conversations (``total`` in all)."""

    project: object  # projects.models.Project
    conversations: list[Conversation]
    current: bool = False
    total: int = 0

    @property
    def more(self) -> int:
        return self.total - len(self.conversations)


@dataclass
class SidebarPage:
    """A page of the conversations outside projects, cut in runs under their headings
    (``chunks``: heading or None when the previous page's last one goes on, then its
    conversations); ``next_cursor`` for the next page (``sidebar_cursor``), "" at the end."""

    chunks: list[tuple[str | None, list[Conversation]]]
    next_cursor: str
    last_group: str


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _micros(moment: datetime) -> int:
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def sidebar_cursor(conversation: Conversation) -> str:
    """Where the next page starts: the last listed conversation's place in the order (its pin
    time, activity and id, in microseconds), so a conversation bumped to the top meanwhile
    neither shifts nor repeats the rows after it, as an offset would."""
    pinned = _micros(conversation.pinned_at) if conversation.pinned_at else ""
    return f"{pinned}.{_micros(conversation.updated_at)}.{conversation.pk}"


def _after_cursor(qs: QuerySet, cursor: str) -> QuerySet:
    """The rows after ``cursor`` in ``conversation_list``'s order (pinned_at desc, nulls last;
    updated_at desc; id desc); ValueError for a malformed one."""
    parts = cursor.split(".")
    ascii_digits = [p.isascii() and p.isdigit() for p in parts]
    if len(parts) != 3 or not all(ascii_digits[1:]) or (parts[0] and not ascii_digits[0]):
        raise ValueError("not a sidebar cursor")
    try:
        pinned = _EPOCH + timedelta(microseconds=int(parts[0])) if parts[0] else None
        updated = _EPOCH + timedelta(microseconds=int(parts[1]))
    except OverflowError:
        raise ValueError("not a sidebar cursor") from None
    pk = min(int(parts[2]), MAX_ID)
    later = Q(updated_at__lt=updated) | Q(updated_at=updated, id__lt=pk)
    if pinned is None:
        return qs.filter(later, pinned_at__isnull=True)
    return qs.filter(
        Q(pinned_at__lt=pinned) | Q(later, pinned_at=pinned) | Q(pinned_at__isnull=True)
    )


def sidebar_page(
    *, user, query: str, archived: bool, after: str = "", previous_group: str = ""
) -> SidebarPage:
    """Pinned first, then by activity (``conversation_list``), ``SIDEBAR_PAGE_SIZE`` at a
    time after ``after`` (a ``sidebar_cursor``: keyset paging; ValueError for a malformed
    one): a user with thousands of conversations gets a page, not them all."""
    from chat.templatetags.chat_tags import list_group

    qs = conversation_list(user=user, query=query, archived=archived).filter(project=None)
    if after:
        qs = _after_cursor(qs, after)
    rows = list(qs[: SIDEBAR_PAGE_SIZE + 1])
    more = len(rows) > SIDEBAR_PAGE_SIZE
    rows = rows[:SIDEBAR_PAGE_SIZE]
    chunks: list[tuple[str | None, list[Conversation]]] = []
    group = previous_group
    for conversation in rows:
        heading = list_group(conversation)
        if not chunks or heading != group:
            chunks.append((None if heading == group else heading, []))
            group = heading
        chunks[-1][1].append(conversation)
    return SidebarPage(chunks, sidebar_cursor(rows[-1]) if more else "", group)


def sidebar_groups(
    *, user, query: str, archived: bool, current_project_id: int | None
) -> tuple[list[ProjectGroup], list]:
    """Each project with its listed conversations (by name), the first
    ``PROJECT_GROUP_SIZE`` of each, and the projects a conversation may move to (the active
    ones, and those listed). The plain list (not a search nor the archived view) shows the
    active projects that list no conversation too, so that a chat can be started in each."""
    listing = not query and not archived
    listed = conversation_list(user=user, query=query, archived=archived).filter(
        project__isnull=False
    )
    totals = dict(
        listed.order_by()
        .values_list("project_id")
        .annotate(n=Count("id"))
        .values_list("project_id", "n")
    )
    projects = list(
        user.projects.filter(Q(pk__in=list(totals)) | Q(archived_at=None))
        .only(*_LISTED_PROJECT_FIELDS)
        .order_by("name", "id")
    )
    # Each project's first few in one statement: their rank in their project, in list order.
    rank = Window(RowNumber(), partition_by=F("project_id"), order_by=list(LIST_ORDER))
    firsts: dict[int, list[Conversation]] = {}
    for conversation in listed.annotate(rank=rank).filter(rank__lte=PROJECT_GROUP_SIZE):
        firsts.setdefault(conversation.project_id, []).append(conversation)
    groups = [
        ProjectGroup(
            project,
            firsts.get(project.pk, []),
            project.pk == current_project_id,
            totals.get(project.pk, 0),
        )
        for project in projects
        if project.pk in totals or (listing and project.archived_at is None)
    ]
    # An archived project is offered only to the conversations listed in it (kept, not lost).
    return groups, projects


def move_targets(*, user) -> list:
    """The projects a listed conversation may move to: the active ones (a conversation in an
    archived one shows it as its own, selected, from ``sidebar_groups``'s list)."""
    return list(
        user.projects.filter(archived_at=None).only(*_LISTED_PROJECT_FIELDS).order_by("name", "id")
    )


def conversation_titles_matching(*, user, query: str, limit: int = 5) -> QuerySet:
    """The user's conversations whose title holds ``query``, archived ones too (none for an
    empty query)."""
    if not query.strip():
        return Conversation.objects.none()
    rows = Conversation.objects.filter(user=user, title__icontains=query.strip())
    return rows.order_by("archived", "-updated_at", "-id")[:limit]


HIGHLIGHT_CONTEXT = 3  # messages shown before a highlighted one
HIGHLIGHT_MAX = 1000  # messages from a highlighted one to the newest, at most


def message_page(
    *,
    conversation: Conversation,
    before_id: int | None = None,
    highlight: int | None = None,
    preview: Preview | None = None,
):
    """The newest messages (before ``before_id``), oldest first, and whether more exist; each
    with the "Remembered: ..." notices under it (``notices``). With ``highlight`` (a message
    of the conversation, e.g. a memory's source), the page reaches back to a few messages
    before it. With ``preview`` (a hidden branch shown for a link, ``chat.branches``), the
    messages it shows, the page reaching back before its first question: what "Load
    earlier" adds is what both branches share."""
    if preview is not None:
        return _preview_page(preview)
    # annotate() over the class attribute's default: a false report (django-stubs#2818)
    qs = Message.objects.filter(  # type: ignore[no-redef]
        conversation=conversation, hidden_by__isnull=True
    ).annotate(version_count=Count("versions"))
    if before_id is not None:
        qs = qs.filter(id__lt=before_id)
    size = HISTORY_PAGE_SIZE
    if highlight is not None and before_id is None:
        size = max(size, _reaching_back_to(conversation, highlight))
    rows = list(qs.order_by("-created_at", "-id")[: size + 1])
    has_more = len(rows) > size
    rows = list(reversed(rows[:size]))
    with_notices_and_branches(rows)
    return rows, has_more


def _preview_page(preview: Preview) -> tuple[list[Message], bool]:
    ids = preview.message_ids
    from_question = len(ids) - ids.index(preview.question_id)
    size = max(HISTORY_PAGE_SIZE, min(from_question, HIGHLIGHT_MAX) + HIGHLIGHT_CONTEXT)
    page = ids[-size:]
    # annotate() over the class attribute's default: a false report (django-stubs#2818)
    found = Message.objects.filter(pk__in=page).annotate(  # type: ignore[no-redef]
        version_count=Count("versions")
    )
    by_id = {m.pk: m for m in found}
    rows = [by_id[pk] for pk in page if pk in by_id]
    with_notices_and_branches(rows)
    return rows, len(ids) > size


def with_notices_and_branches(rows: list[Message]) -> None:
    """Each message's "Remembered: ..." notices; each question's place among its branches."""
    notices = notices_for_messages(m.pk for m in rows)
    for message in rows:
        message.notices = notices.get(message.pk, [])
    questions = [m for m in rows if m.role == Message.Role.USER]
    roots = {m.branch_of_id or m.pk for m in questions}
    if not roots:
        return
    groups: dict[int, list[int]] = {}
    siblings = Message.objects.filter(branch_of_id__in=roots).order_by("id")
    for pk, root in siblings.values_list("pk", "branch_of_id"):
        groups.setdefault(root, [root]).append(pk)
    for message in questions:
        ids = groups.get(message.branch_of_id or message.pk)
        if ids and message.pk in ids:
            at = ids.index(message.pk)
            message.branch_count, message.branch_number = len(ids), at + 1
            message.branch_previous = ids[at - 1] if at > 0 else None
            message.branch_next = ids[at + 1] if at + 1 < len(ids) else None


def branch_shown_from(*, conversation: Conversation, question: Message) -> list[Message]:
    """The messages shown from ``question`` on (a branch just shown), oldest first, as the
    page renders them; at most HIGHLIGHT_MAX."""
    from chat.branches import shown_from  # it imports the memory services, which need us

    rows = list(
        shown_from(question)
        .annotate(version_count=Count("versions"))
        .order_by("created_at", "id")[:HIGHLIGHT_MAX]
    )
    with_notices_and_branches(rows)
    return rows


def _reaching_back_to(conversation: Conversation, message_id: int) -> int:
    """How many of the newest messages reach back to ``message_id`` and a few before it."""
    newer = Message.objects.filter(
        conversation=conversation, id__gte=message_id, hidden_by__isnull=True
    )
    count = newer[:HIGHLIGHT_MAX].count()
    return min(count, HIGHLIGHT_MAX) + HIGHLIGHT_CONTEXT if count else 0


def last_context(conversation: Conversation) -> ContextReport | None:
    """The context report of the newest reply of the branch shown, for the context meter."""
    return report_read(
        Message.objects.filter(
            conversation=conversation, context_report__isnull=False, hidden_by__isnull=True
        )
        .order_by("-created_at", "-id")
        .values_list("context_report", flat=True)
        .first()
    )


def reply_version_shown(*, conversation: Conversation, reply_id: int, number: int) -> Message:
    """Version ``number`` of a reply, as a Message the message template renders (the last
    number is the reply itself). Not saved: the reply row keeps the newest version."""
    # annotate() over the class attribute's default: a false report (django-stubs#2818)
    reply = (
        Message.objects.filter(  # type: ignore[no-redef]
            conversation=conversation, pk=reply_id, role=Message.Role.ASSISTANT
        )
        .annotate(version_count=Count("versions"))
        .first()
    )
    if reply is None or not 1 <= number <= reply.version_count + 1:
        raise Http404("No such version.")
    if number == reply.version_count + 1:
        return reply
    version = ReplyVersion.objects.get(reply=reply, number=number)
    shown = Message(
        pk=reply.pk,
        conversation=conversation,
        role=Message.Role.ASSISTANT,
        content=version.content,
        status=version.status,
        error=version.error,
        model=version.model,
        context_report=version.context_report,
        reply_to_id=reply.reply_to_id,
        created_at=version.created_at,
    )
    shown.version_count = reply.version_count
    shown.version_number = number
    shown.version_question = version.question
    return shown


def reply_report_shown(
    *, conversation: Conversation, reply_id: int, version: str | None = None
) -> Message:
    """The reply (or its earlier ``version``) whose context report is asked for; 404 if the
    conversation has no such reply or it stored no report."""
    if version is None:
        reply = Message.objects.filter(
            conversation=conversation, pk=reply_id, role=Message.Role.ASSISTANT
        ).first()
    elif version.isdigit() and int(version) <= MAX_ID:
        reply = reply_version_shown(
            conversation=conversation, reply_id=reply_id, number=int(version)
        )
    else:
        raise Http404("No such version.")
    if reply is None or not reply.context_report:
        raise Http404("No report for this message.")
    return reply


@dataclass(frozen=True)
class Suggestion:
    label: str  # what the button says
    text: str  # what it puts in the message box


GENERIC_SUGGESTIONS = (
    Suggestion("Explain something", "Explain how "),
    Suggestion("Draft a message", "Help me write a short, friendly message to "),
    Suggestion("Plan a task", "Help me plan the steps to "),
)


def starter_suggestions(
    *, user, temporary: bool = False, project_id: int | None = None, limit: int = 3
) -> list[Suggestion]:
    """A few things to start with: what the assistant remembers is open (action items,
    recent decisions, recent conversations), then generic ones. None from memory in a
    temporary conversation or with memory off. Only of the scopes the new conversation
    reads (``project_id``: the project it starts in, None for none): a chat outside every
    project is never offered a project's task, nor one project another's."""
    from memory.models import OPEN_STATUSES, ActionItem, Decision, MemoryState
    from memory.search import scope
    from profiles.selectors import memory_enabled

    found: list[Suggestion] = []
    if not temporary and memory_enabled(user):
        in_scope = scope.memories_in(scope.readable(project_id))
        open_items = (
            ActionItem.objects.filter(
                in_scope,
                user=user,
                status__in=OPEN_STATUSES,
            )
            .exclude(state=MemoryState.SUGGESTED)
            .order_by("-updated_at")[:2]
        )
        for item in open_items:
            what = _short(item.what)
            found.append(Suggestion(f"Help with: {what}", f"Help me with this: {item.what}"))
        decision = (
            Decision.objects.filter(in_scope, user=user)
            .exclude(state=MemoryState.SUGGESTED)
            .order_by("-updated_at")
            .first()
        )
        if decision is not None:
            found.append(
                Suggestion(
                    f"Revisit: {_short(decision.what)}",
                    f"Let's revisit a decision: {decision.what}",
                )
            )
        # Only a conversation whose latest reply came whole: one that failed is not picked up.
        latest_reply = Message.objects.filter(
            conversation=OuterRef("pk"), role=Message.Role.ASSISTANT
        ).order_by("-created_at", "-id")
        recent = (
            Conversation.objects.filter(in_scope, user=user, archived=False, temporary=False)
            .exclude(title="")
            .annotate(latest_status=Subquery(latest_reply.values("status")[:1]))
            .filter(latest_status=Message.Status.COMPLETE)
            .order_by("-updated_at")
            .values_list("title", flat=True)
            .first()
        )
        if recent:
            found.append(
                Suggestion(
                    f"Pick up “{_short(recent)}”",
                    f"Let's pick up where we left off on “{recent}”.",
                )
            )
    for generic in GENERIC_SUGGESTIONS:
        if len(found) >= limit:
            break
        found.append(generic)
    return found[:limit]


def _short(text: str, limit: int = 48) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def gaps_after_replies(messages: list[Message]) -> dict[int, float | None]:
    """Per user message id: the seconds between the end of the assistant's previous reply in
    its conversation (its start plus its duration; its start when it has none) and the
    message, None when no reply came before it: the learned pace (``profiles.style``).
    After every batch of turns: one plain statement (the same read built with the ORM, two
    correlated subqueries, cost 1.2 ms of CPU in process), each reply found by the
    (conversation, -created_at, -id) index."""
    if not messages:
        return {}
    table = Message._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT m.id, r.created_at, r.duration FROM {table} m JOIN {table} r ON r.id = ("  # noqa: S608 (own table)
            f"SELECT a.id FROM {table} a WHERE a.conversation_id = m.conversation_id "
            "AND a.role = %s AND a.created_at < m.created_at "
            "ORDER BY a.created_at DESC, a.id DESC LIMIT 1) "
            f"WHERE m.id IN ({', '.join(['%s'] * len(messages))})",
            [Message.Role.ASSISTANT, *(m.pk for m in messages)],
        )
        replies = {pk: (_aware(at), took) for pk, at, took in cursor.fetchall()}
    gaps: dict[int, float | None] = {}
    for message in messages:
        if message.pk not in replies:
            gaps[message.pk] = None
            continue
        started, took = replies[message.pk]
        ended = started + timedelta(seconds=took or 0.0)
        gaps[message.pk] = max(0.0, (message.created_at - ended).total_seconds())
    return gaps


def _aware(value) -> datetime:
    """A datetime column as a plain cursor gives it: SQLite's text, PostgreSQL's datetime."""
    if isinstance(value, str):
        value = parse_datetime(value)
    return value if timezone.is_aware(value) else timezone.make_aware(value, UTC)
