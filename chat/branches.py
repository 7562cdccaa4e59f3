"""Branches of a conversation: an earlier question edited starts a new branch from there.

A question written in place of another points at the first question of their group
(``Message.branch_of``): the group's questions, in the order written, are its branches
("1 / 2"). The conversation shows one branch: every message of the others points at the
question that starts its branch (``Message.hidden_by``), null while shown. Hiding a branch
marks only the messages shown from its question on; those of branches already hidden inside it
keep their own mark, so switching back shows the branch as it was left, its own inner choices
included. Every read of the conversation as it goes on (the page, the context, the summary's
tail, the memory index's triggers) takes the rows whose ``hidden_by`` is null.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import F, Q, QuerySet, Subquery
from django.http import Http404

from chat.models import Conversation, Message
from memory.services.summaries import summary_follow_branch

if TYPE_CHECKING:
    from chat.job_watch import Watch
    from chat.protocol import ServerFrame


def shown_from(question: Message) -> QuerySet:
    """The messages shown from ``question`` on, itself included (the page's order)."""
    after = Q(created_at__gt=question.created_at) | Q(
        created_at=question.created_at, pk__gte=question.pk
    )
    return Message.objects.filter(
        conversation_id=question.conversation_id, hidden_by__isnull=True
    ).filter(after)


def hide_from(question: Message) -> int:
    """Hide ``question`` and every message shown after it (its branch); how many."""
    return shown_from(question).update(hidden_by=question)


def follow(*, conversation: Conversation, hidden: Message, shown: Message) -> str:
    """After the branch shown changed from ``hidden``'s to ``shown``'s: the title follows the
    first question, unless the user chose it: the title made for ``shown``'s branch
    (``Message.branch_title``), else its stand-in until its first exchange is titled
    (``chat.titles``); and the rolling summary gives way to one of what the branches share.
    The new title, or ""."""
    from chat.services import title_from_text  # services stores through this module

    summary_follow_branch(conversation=conversation, branch_point=shown.branch_of_id or shown.pk)
    # As stored: a tab's object is as it was when it connected, before any rename since.
    conversation.refresh_from_db(fields=["title", "title_source"])
    first = not Message.objects.filter(
        conversation=conversation,
        role=Message.Role.USER,
        hidden_by__isnull=True,
        created_at__lt=shown.created_at,
    ).exists()
    source = Conversation.TitleSource
    generated = conversation.title_source == source.GENERATED
    stand_in = conversation.title_source != source.USER and conversation.title == title_from_text(
        hidden.content
    )
    if not first or not (generated or stand_in):
        return ""
    if generated and not hidden.branch_title:  # titled before titles were kept per branch
        Message.objects.filter(pk=hidden.pk).update(branch_title=conversation.title)
    if shown.branch_title:
        title, made = shown.branch_title, source.GENERATED
    else:
        title, made = title_from_text(shown.content), source.MESSAGE
    if not title or (title, made) == (conversation.title, conversation.title_source):
        return ""
    before = conversation.title
    conversation.title, conversation.title_source = title, made
    conversation.save(update_fields=["title", "title_source"])
    return title if title != before else ""


def _title_branch(conversation: Conversation, question: Message) -> tuple[str, Watch | None]:
    """A first question shown again whose answered branch has no title of its own yet: its
    title is made now (offline) or by a job (a model; the job to watch, ``chat.job_watch``)."""
    from chat import titles  # titles store through chat.services, which stores through here

    answered = Message.objects.filter(reply_to=question, role=Message.Role.ASSISTANT).exists()
    if conversation.title_source != Conversation.TitleSource.MESSAGE or not answered:
        return "", None
    watch = titles.title_make(conversation)
    return conversation.title, watch


@dataclass(frozen=True)
class Switched:
    question: Message  # the question shown now
    hidden_id: int  # the question whose branch was shown before
    new_title: str = ""
    title_job: Watch | None = None  # the job making the title, when the tabs must be told


def branch_switch(*, conversation: Conversation, message_id: int) -> Switched:
    """Show the branch that question ``message_id`` starts, in place of its sibling shown now.
    Refused while a reply streams (busy); a question of another conversation, or of a branch
    not reachable from the one shown, is not found."""
    from chat.services import ChatError, lock_and_check_idle, thread_changes

    with transaction.atomic():
        target = Message.objects.filter(
            conversation=conversation, pk=message_id, role=Message.Role.USER
        ).first()
        if target is None:
            raise ChatError("That message is not in this conversation.", code="not_found")
        lock_and_check_idle(conversation)
        root_id = target.branch_of_id or target.pk
        shown = (
            Message.objects.filter(
                conversation=conversation, role=Message.Role.USER, hidden_by__isnull=True
            )
            .filter(Q(pk=root_id) | Q(branch_of_id=root_id))
            .first()
        )
        if shown is None:
            raise ChatError("That branch is not reachable from the one shown.", code="not_found")
        if shown.pk == target.pk:
            return Switched(question=target, hidden_id=shown.pk)
        thread_changes(conversation)
        hide_from(shown)
        Message.objects.filter(conversation=conversation, hidden_by=target).update(hidden_by=None)
        target.hidden_by = None
        new_title = follow(conversation=conversation, hidden=shown, shown=target)
        job = None
        if new_title:
            made, job = _title_branch(conversation, target)
            new_title = made or new_title
    return Switched(question=target, hidden_id=shown.pk, new_title=new_title, title_job=job)


def branch_path_to(message: Message) -> list[Message]:
    """The questions whose branches must be shown, outermost first, for the hidden ``message``
    to be shown; [] for a message shown. A branch hidden inside another is reached through it:
    its group's question that is not hidden as its own branch carries the enclosing
    branch's mark."""
    path: list[Message] = []
    question_id = message.hidden_by_id
    while question_id is not None and all(q.pk != question_id for q in path):
        question = Message.objects.filter(pk=question_id).first()
        if question is None:
            break
        path.append(question)
        root_id = question.branch_of_id or question.pk
        # By its keys (the group is the question's conversation's): not through its rows.
        group = Message.objects.filter(Q(pk=root_id) | Q(branch_of_id=root_id)).filter(
            role=Message.Role.USER
        )
        holder = group.exclude(hidden_by=F("pk")).first()
        question_id = holder.hidden_by_id if holder is not None else None
    return path[::-1]


def branch_show_holding(*, conversation: Conversation, message_id: int) -> Switched | None:
    """Show the branch that holds message ``message_id`` (a memory's source, a search result)
    in place of the one shown, as "1 / 2" would, branch by branch from the outermost; None for
    a message shown or not of this conversation. Refused while a reply streams (busy). What
    changed, as one switch: the outermost one, whose articles from its question on hold the
    inner ones."""
    message = Message.objects.filter(
        conversation=conversation, pk=message_id, hidden_by__isnull=False
    ).first()
    if message is None:
        return None
    switches = [
        branch_switch(conversation=conversation, message_id=question.pk)
        for question in branch_path_to(message)
    ]
    if not switches:
        return None
    titles = [s.new_title for s in switches if s.new_title]
    jobs = [s.title_job for s in switches if s.title_job]
    return Switched(
        switches[0].question,
        switches[0].hidden_id,
        titles[-1] if titles else "",
        jobs[-1] if jobs else None,
    )


@dataclass(frozen=True)
class Preview:
    """The conversation as it would show were a hidden branch shown, not stored."""

    # What it would show, in the page's order: every message from the earliest question of
    # the branches switched on, and before them the last HISTORY_PAGE_SIZE + 1 shared ones:
    # more than the preview's page takes before its question, so that page and whether
    # earlier messages exist come out as from every row (chat.selectors._preview_page).
    message_ids: list[int]
    question_id: int  # the outermost question it would show in place of its sibling


def branch_preview_holding(*, conversation: Conversation, message_id: int) -> Preview | None:
    """What ``branch_show_holding`` would show for message ``message_id``, worked out without
    writing: a link (a memory's source, a search result) shows the branch holding it for that
    page alone, and the user keeps it (a POST) or not. None for a message shown, or not of
    this conversation. Each switch is ``branch_switch``'s, on the rows' marks in memory.

    A switch changes only rows from its group's questions on (it hides from the question
    shown, and shows what its own question's branch hid: that question and after), so the
    rows read are those from the earliest question of the path's groups, and before it the
    shown ones a page needs: not every row of a long conversation (one statement)."""
    from chat.selectors import HISTORY_PAGE_SIZE  # the page it is for; it reads through here

    message = Message.objects.filter(
        conversation=conversation, pk=message_id, hidden_by__isnull=False
    ).first()
    path = branch_path_to(message) if message is not None else []
    if not path:
        return None
    roots = {question.branch_of_id or question.pk for question in path}
    # The groups' questions found by their keys (the path's questions are this conversation's):
    # no walk through the conversation's rows.
    start = Subquery(
        Message.objects.filter(Q(pk__in=roots) | Q(branch_of_id__in=roots))
        .filter(role=Message.Role.USER)
        .order_by("created_at")
        .values("created_at")[:1]
    )
    # Before them, the page's share of the shown rows: more than the page takes before its
    # question (chat.selectors._preview_page), so whether earlier ones exist shows too.
    earlier = (
        Message.objects.filter(
            conversation=conversation, hidden_by__isnull=True, created_at__lt=start
        )
        .order_by("-created_at", "-id")
        .values("pk")[: HISTORY_PAGE_SIZE + 1]
    )
    # The conversation named in each side of the "or": each is an index's (SQLite's
    # multi-index or), and PostgreSQL takes it out as one condition: never the whole table.
    rows = list(
        Message.objects.filter(
            Q(conversation=conversation, created_at__gte=start)
            | Q(conversation=conversation, pk__in=earlier)
        )
        .order_by()  # put in order below
        .values_list("pk", "created_at", "hidden_by_id", "branch_of_id", "role")
    )
    place = {pk: (created_at, pk) for pk, created_at, *_ in rows}
    hidden_by: dict[int, int | None] = {pk: hidden for pk, _, hidden, *_ in rows}
    group_of = {
        pk: branch_of or pk for pk, _, _, branch_of, role in rows if role == Message.Role.USER
    }
    for question in path:
        root = question.branch_of_id or question.pk
        shown = next((q for q, r in group_of.items() if r == root and hidden_by[q] is None), None)
        if shown is None:
            return None
        if shown == question.pk:
            continue
        for pk in place:  # hide_from(shown), then show what the question's branch hid
            if hidden_by[pk] is None and place[pk] >= place[shown]:
                hidden_by[pk] = shown
        for pk in place:
            if hidden_by[pk] == question.pk:
                hidden_by[pk] = None
    shown_ids = sorted((pk for pk in place if hidden_by[pk] is None), key=place.__getitem__)
    return Preview(message_ids=shown_ids, question_id=path[0].pk)


def switched_frames(*, conversation: Conversation, switched: Switched) -> list[ServerFrame]:
    """What the tabs on the conversation are told of a switch: the branch's articles from its
    question on, the context meter's figures, and the title when it followed."""
    from chat import protocol, selectors  # both read through this module

    shown = selectors.branch_shown_from(conversation=conversation, question=switched.question)
    report = selectors.last_context(conversation)
    frames: list[ServerFrame] = [
        protocol.branch_shown(replaces=switched.hidden_id, messages=shown, context=report)
    ]
    if switched.new_title:
        frames.append(protocol.title(switched.new_title))
    return frames


def branch_question_for_user(*, user, conversation_id: int, message_id: int) -> Message:
    """A question of the user's conversation that has branches (edited, or edited from), or
    404: another user's id is indistinguishable from none."""
    question = (
        Message.objects.filter(
            pk=message_id,
            conversation_id=conversation_id,
            conversation__user=user,
            role=Message.Role.USER,
        )
        .select_related("conversation")
        .first()
    )
    if question is None:
        raise Http404("No such question.")
    root_id = question.branch_of_id or question.pk
    if not Message.objects.filter(branch_of_id=root_id).exists():
        raise Http404("That question has no other branch.")
    return question


def branch_messages(question: Message) -> QuerySet:
    """The messages of the branch ``question`` starts: hidden with it, or shown from it on.
    Branches hidden inside it are their own."""
    if question.hidden_by_id is not None:
        return Message.objects.filter(conversation_id=question.conversation_id, hidden_by=question)
    return shown_from(question)
