"""Writes for conversations and messages. Every message is stored through message_create."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, IntegrityError, OperationalError, connection, transaction
from django.db.models import Count
from django.utils import timezone

from chat.models import Conversation, Message, ReplyVersion
from contextwindow.tokens import count_tokens
from memory.report import ContextReport
from memory.search.index import as_datetime
from web.compiled import plain_insert, plain_update

TITLE_MAX_CHARS = 60


def stream_lease() -> timedelta:
    """A streaming reply whose lease is not renewed within this time belongs to a dead server
    (the streaming server renews it three times per lease)."""
    return timedelta(seconds=settings.MEMORYCHAT_STREAM_LEASE_SECONDS)


class ChatError(Exception):
    """A request the chat cannot carry out, with a message fit for the page."""

    def __init__(self, message: str, *, code: str = "invalid", retry_after: int | None = None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.retry_after = retry_after  # seconds, for a limit's HTTP Retry-After (api.views)


def conversation_create(
    *,
    user,
    title: str = "",
    temporary: bool = False,
    strategy: str | None = None,
    context_budget: int | None = None,
    model: str = "",
    project=None,
) -> Conversation:
    """``project``: one of the user's projects (the caller checked whose), or None."""
    title = title.strip()[:200]
    conversation = Conversation(
        user=user,
        title=title,
        title_source=Conversation.TitleSource.USER if title else Conversation.TitleSource.NONE,
        temporary=temporary,
        model=model,
        context_budget=context_budget,
        project=project,
    )
    if strategy:
        conversation.strategy = strategy
    # Every field checked but the user's existence: a query on each new conversation (a
    # /v1 request's, before its first token) for a row the caller just read (its session's,
    # its key's), which the foreign key holds anyway. Nor the constraint by a query of its
    # own: ``Conversation.clean`` checks the same rule, and the database holds it too.
    conversation.full_clean(exclude=["user"], validate_constraints=False)
    conversation.save()
    return conversation


def conversation_rename(*, conversation: Conversation, title: str) -> Conversation:
    title = " ".join(title.split())
    if not title:
        raise ChatError("A title cannot be empty.")
    conversation.title = title[:200]
    conversation.title_source = Conversation.TitleSource.USER  # never replaced by a generated one
    conversation.save(update_fields=["title", "title_source"])
    return conversation


def conversation_set_model(*, conversation: Conversation, model: str) -> Conversation:
    """The model for the conversation's next replies ("": the configured default)."""
    conversation.model = model[:100]
    conversation.save(update_fields=["model"])
    return conversation


def conversation_set_archived(*, conversation: Conversation, archived: bool) -> Conversation:
    conversation.archived = archived
    conversation.save(update_fields=["archived"])
    return conversation


def conversation_set_pinned(*, conversation: Conversation, pinned: bool) -> Conversation:
    conversation.pinned_at = timezone.now() if pinned else None
    conversation.save(update_fields=["pinned_at"])
    return conversation


def conversation_delete(*, conversation: Conversation) -> None:
    conversation.delete()


def title_from_text(text: str) -> str:
    """A short title from the first message: its first line, cut at a word boundary."""
    line = " ".join(text.strip().splitlines()[0].split()) if text.strip() else ""
    if len(line) <= TITLE_MAX_CHARS:
        return line
    cut = line[:TITLE_MAX_CHARS].rsplit(" ", 1)[0] or line[:TITLE_MAX_CHARS]
    return cut + "…"


def clean_text(text: str) -> str:
    """Text as stored: NUL characters removed (PostgreSQL text cannot hold them, and they
    mean nothing to a reader). Everything else is kept as typed."""
    return text.replace("\x00", "") if "\x00" in text else text


@dataclass(frozen=True)
class NewMessage:
    role: str
    content: str
    created_at: datetime | None = None


def _validate_role(role: str) -> None:
    if role not in Message.Role.values:
        raise ChatError(f"Unknown role {role!r}.", code="bad_role")


def message_create(
    *,
    conversation: Conversation,
    role: str,
    content: str,
    created_at: datetime | None = None,
    status: str = Message.Status.COMPLETE,
    client_id: str = "",
    reply_to: Message | None = None,
    model: str = "",
    context_report: dict | None = None,
    system_prompt_version: int | None = None,
    branch_of_id: int | None = None,
    touch: bool = True,
) -> Message:
    """Store one message with its token count; the first user message titles the conversation.

    The one public way to store a message: every path (websocket, import, tests) uses it.
    ``touch=False`` skips bumping the conversation's activity time (a caller that stores two
    messages at once bumps it once).
    """
    _validate_role(role)
    content = clean_text(content)
    now = timezone.now()
    message = Message(
        conversation=conversation,
        role=role,
        content=content,
        created_at=created_at or now,
        token_count=count_tokens(content, conversation.effective_model),
        status=status,
        client_id=client_id,
        reply_to=reply_to,
        model=model,
        context_report=context_report,
        system_prompt_version=system_prompt_version,
        branch_of_id=branch_of_id,
        lease_expires_at=now + stream_lease() if status == Message.Status.STREAMING else None,
    )
    with transaction.atomic(savepoint=False):  # inside a turn, no savepoint round trips
        plain_insert(message)  # the ORM's save compiled its insert every time; no signals
        if touch:
            _touch(conversation, message, now)
    return message


def message_create_many(
    *, conversation: Conversation, messages: Iterable[NewMessage]
) -> list[Message]:
    """Store many messages in one insert (imports); same counting and titling as message_create."""
    now = timezone.now()
    model = conversation.effective_model
    rows = []
    for item in messages:
        _validate_role(item.role)
        content = clean_text(item.content)
        rows.append(
            Message(
                conversation=conversation,
                role=item.role,
                content=content,
                created_at=item.created_at or now,
                token_count=count_tokens(content, model),
            )
        )
    with transaction.atomic():
        created = Message.objects.bulk_create(rows, batch_size=500)
        if created:
            _touch(conversation, next((m for m in created if m.role == "user"), None), now)
    return created


@dataclass(frozen=True)
class NewConversation:
    title: str
    created_at: datetime
    updated_at: datetime
    messages: tuple[NewMessage, ...]


def conversations_create_many(
    *, user, conversations: Iterable[NewConversation]
) -> list[Conversation]:
    """Store many conversations with their messages in a few inserts (a user's import of
    another assistant's history): their dates as given, a blank title taken from the first
    user message, each message counted as ``message_create`` counts it."""
    items = list(conversations)
    rows = []
    for item in items:
        first = next((m for m in item.messages if m.role == Message.Role.USER), None)
        title = " ".join(item.title.split())[:200]
        rows.append(
            Conversation(
                user=user,
                title=title or (title_from_text(first.content) if first else ""),
                created_at=item.created_at,
                updated_at=item.updated_at,
            )
        )
    with transaction.atomic():
        created = Conversation.objects.bulk_create(rows)
        messages = []
        for conversation, item in zip(created, items, strict=True):
            model = conversation.effective_model
            for new in item.messages:
                _validate_role(new.role)
                content = clean_text(new.content)
                messages.append(
                    Message(
                        conversation_id=conversation.pk,
                        role=new.role,
                        content=content,
                        created_at=new.created_at or item.created_at,
                        token_count=count_tokens(content, model),
                    )
                )
        Message.objects.bulk_create(messages, batch_size=500)
    return created


def _touch(conversation: Conversation, message: Message | None, now: datetime) -> None:
    # The thread changed: /v1's digest of it no longer holds (api.conversations).
    fields: dict[str, object] = {"updated_at": now, "api_digest": None}
    if message is not None and message.role == Message.Role.USER and not conversation.title:
        title = title_from_text(message.content)
        if title:  # a stand-in until the first exchange gives a better one (chat.titles)
            conversation.title = title
            conversation.title_source = Conversation.TitleSource.MESSAGE
            fields["title"] = title
            fields["title_source"] = conversation.title_source
    plain_update(Conversation, fields, where={"pk": conversation.pk})  # on every stored message
    conversation.updated_at = now


_FINISHED_FIELDS = (
    "content",
    "status",
    "error",
    "error_kind",
    "upstream_detail",
    "token_count",
    "prompt_tokens",
    "completion_tokens",
    "time_to_first_token",
    "duration",
    "lease_expires_at",
    "model",
    "context_report",
    "system_prompt_version",
)


def reply_finish(
    *,
    reply: Message,
    content: str,
    status: str,
    error: str = "",
    error_kind: str = "",
    upstream_detail: str = "",
    prompt_tokens: int | None = None,
    completion_tokens: int | None = None,
    time_to_first_token: float | None = None,
    duration: float | None = None,
    model: str = "",
    context_report: ContextReport | None = None,
    system_prompt_version: int | None = None,
    touch: bool = True,
) -> Message:
    """Store a streamed reply once, at its end (complete, interrupted or failed). ``touch``
    False: the conversation's activity is left to the caller (``conversations_touch`` for the
    replies that ended together, after the turn)."""
    reply.content = content = clean_text(content)
    reply.model = model or reply.model
    reply.context_report = context_report
    reply.system_prompt_version = system_prompt_version
    reply.status = status
    reply.error = error[:500]
    reply.error_kind = error_kind[:20]
    reply.upstream_detail = upstream_detail
    reply.token_count = count_tokens(content, reply.conversation.effective_model)
    reply.prompt_tokens = prompt_tokens
    reply.completion_tokens = completion_tokens
    reply.time_to_first_token = time_to_first_token
    reply.duration = duration
    reply.lease_expires_at = None
    # One plain statement (the ORM compiled this update on every reply); a reply whose row
    # is gone fails as the ORM's save(update_fields=...) does.
    values = {name: getattr(reply, name) for name in _FINISHED_FIELDS}
    if not plain_update(Message, values, where={"pk": reply.pk}):
        raise DatabaseError("Save with update_fields did not affect any rows.")
    if touch:
        _touch(reply.conversation, None, timezone.now())
    return reply


def thread_changes(conversation: Conversation) -> None:
    """A message stored earlier is about to change in place (edited, answered again, its
    reply continued) or the branch shown to switch: /v1's digest of the thread no longer
    holds (``api.conversations``). Appends clear it as they touch the conversation."""
    plain_update(Conversation, {"api_digest": None}, where={"pk": conversation.pk})


def conversations_touch(*, conversation_ids: Iterable[int]) -> None:
    """The conversations' latest activity is now: one plain statement for them all."""
    fields = {"updated_at": timezone.now(), "api_digest": None}  # as _touch: the thread changed
    plain_update(Conversation, fields, ids=sorted(set(conversation_ids)))


def reply_renew_lease(*, reply: Message, content: str) -> None:
    """Keep a streaming reply alive and checkpoint its text (a few times a minute, not per
    token), so a crashed server leaves a partial reply that a sweep marks interrupted."""
    Message.objects.filter(pk=reply.pk, status=Message.Status.STREAMING).update(
        content=clean_text(content), lease_expires_at=timezone.now() + stream_lease()
    )


def replies_interrupt_stale(*, conversation: Conversation | None = None) -> int:
    """Mark replies whose streaming server stopped (lease expired) as interrupted."""
    qs = Message.objects.filter(
        status=Message.Status.STREAMING, lease_expires_at__lt=timezone.now()
    )
    if conversation is not None:
        qs = qs.filter(conversation=conversation)
        # Asked on every page load and every socket, nearly always with nothing to do: read
        # first. An UPDATE takes SQLite's one write lock even when it matches no row, and
        # waits for it behind the replies' writes (a tab joining a reply in flight did).
        if not qs.exists():
            return 0
    return qs.update(
        status=Message.Status.INTERRUPTED,
        error="The server restarted before this reply finished.",
    )


# -- a turn -----------------------------------------------------------------------------------


@dataclass
class TurnStart:
    user_message: Message
    reply: Message | None
    replayed: bool = False  # the client_id was seen before: nothing new was stored
    # A retry of an interrupted reply: its text, kept if the retry writes nothing new.
    previous_content: str = ""
    # An earlier question edited: the question whose branch is hidden now (the page removes
    # it and what follows it), and the title when the edit changed it.
    branched_from: int | None = None
    new_title: str = ""


def lock_and_check_idle(conversation: Conversation) -> None:
    """Call inside a transaction: serialise the user's turns, refuse a second one on this
    conversation while a reply streams, and refuse more concurrent replies per user than
    MAX_CONCURRENT_STREAMS. A reply whose lease expired belongs to a dead server: it is marked
    interrupted here. One read of the user's streaming replies answers all three.

    The check and the claim (the streaming row the caller inserts before committing) are one
    step per user: the lock is on the user's row, not the conversation's, so two sends to two
    of the user's conversations at the same moment queue here instead of both counting the
    same streams (PostgreSQL's READ COMMITTED re-reads after the wait). SQLite's BEGIN
    IMMEDIATE already serialises every writer. FOR NO KEY UPDATE: creating a conversation
    (a foreign key to the user) does not wait for it."""
    if connection.features.has_select_for_update:  # on SQLite both would be plain reads
        User = get_user_model()
        User.objects.select_for_update(no_key=True).filter(pk=conversation.user_id).values(
            "pk"
        ).first()
        # The project as it is now: another tab may have moved the conversation since this
        # one opened it (the settings event reaches this tab's consumer later over Redis).
        conversation.project_id = (
            Conversation.objects.select_for_update()
            .filter(pk=conversation.pk)
            .values_list("project_id", flat=True)
            .first()
        )
    _refuse_while_streaming(conversation, interrupt_stale=True)


# The user's streaming replies, read on every turn: through the partial index of messages
# not complete, whose condition the statement repeats word for word (without it SQLite
# cannot tell the index applies, and it read every message of every conversation the user
# has). The models' own tables, no input in the text: S608 does not apply.
_USER_STREAMING = (
    f"SELECT m.conversation_id, m.lease_expires_at FROM {Message._meta.db_table} m "  # noqa: S608
    f"JOIN {Conversation._meta.db_table} c ON c.id = m.conversation_id "
    "WHERE c.user_id = %s AND m.status = %s AND NOT (m.status = 'complete')"
)


def _refuse_while_streaming(conversation: Conversation, *, interrupt_stale: bool) -> None:
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(_USER_STREAMING, [conversation.user_id, Message.Status.STREAMING])
        streaming = cursor.fetchall()
    live, stale_here = [], False
    for conversation_id, lease in streaming:
        lease = as_datetime(lease)
        if lease is not None and lease >= now:
            live.append(conversation_id)
        elif conversation_id == conversation.pk:
            stale_here = True
    if stale_here and interrupt_stale:
        replies_interrupt_stale(conversation=conversation)
    if conversation.pk in live:
        raise ChatError(
            "A reply is still being written. Stop it or wait for it to finish.", code="busy"
        )
    limit = settings.MEMORYCHAT_MAX_CONCURRENT_STREAMS
    if limit and len(live) >= limit:
        raise ChatError(
            f"You already have {limit} replies being written in other conversations. "
            "Wait for one to finish.",
            code="too_many_streams",
        )


def _client_id_stored(conversation_id: int, client_id: str) -> bool:
    """Asked before every turn and nearly always "no": one lookup on the (conversation,
    client_id) unique index, without the ORM's compiling of a statement or building a row.
    The index is partial (non-blank ids): the statement repeats its condition word for word,
    or SQLite cannot tell it applies and reads the conversation's every message instead."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT 1 FROM {Message._meta.db_table} "  # noqa: S608 (the model's own table)
            "WHERE conversation_id = %s AND client_id = %s AND NOT (client_id = '')",
            [conversation_id, client_id],
        )
        return cursor.fetchone() is not None


def turn_replayed(conversation: Conversation, client_id: str) -> TurnStart | None:
    """What exists for a client_id already stored in this conversation (a resend)."""
    if not client_id or not _client_id_stored(conversation.pk, client_id):
        return None
    existing = (
        Message.objects.filter(conversation=conversation, client_id=client_id)
        .select_related("conversation")
        .first()
    )
    if existing is None:
        return None
    # annotate() over the class attribute's default: a false report (django-stubs#2818)
    reply = (
        existing.replies.annotate(version_count=Count("versions"))  # type: ignore[no-redef]
        .order_by("-id")
        .first()
    )
    return TurnStart(user_message=existing, reply=reply, replayed=True)


DEADLOCK_RETRIES = 2
DEADLOCK_SQLSTATE = "40P01"


def _is_deadlock(exc: OperationalError) -> bool:
    return getattr(exc.__cause__, "sqlstate", None) == DEADLOCK_SQLSTATE


def _question_and_placeholder(
    conversation: Conversation, text: str, **fields
) -> tuple[Message, Message]:
    """Store the user's message (``fields``: its client_id, or the question it branches
    from) and its reply's placeholder, streaming; the message alone touches the conversation."""
    question = message_create(
        conversation=conversation, role=Message.Role.USER, content=text, **fields
    )
    reply = message_create(
        conversation=conversation,
        role=Message.Role.ASSISTANT,
        content="",
        status=Message.Status.STREAMING,
        reply_to=question,
        touch=False,
    )
    return question, reply


def turn_begin(*, conversation: Conversation, text: str, client_id: str = "") -> TurnStart:
    """Store the user's message and the reply's placeholder, atomically; or, for a client_id
    already stored, return what exists without storing anything.

    A resend is not looked for up front: the unique (conversation, client_id) constraint
    refuses the insert of one stored before, and a turn refused as busy (the resend of a
    message whose reply still streams) looks too, before it says so. Either way the
    transaction is rolled back and what exists is returned, as a lookup first would have.
    """
    title, title_source = conversation.title, conversation.title_source
    try:
        for attempt in range(DEADLOCK_RETRIES + 1):
            try:
                with transaction.atomic():
                    lock_and_check_idle(conversation)
                    user_message, reply = _question_and_placeholder(
                        conversation, text, client_id=client_id
                    )
                break
            except OperationalError as exc:
                # PostgreSQL broke a deadlock with the previous turn's memory work (both
                # write the user's search statistics): nothing was stored, so try again.
                if attempt == DEADLOCK_RETRIES or not _is_deadlock(exc):
                    raise
                conversation.title, conversation.title_source = title, title_source
    except ChatError:
        replayed = turn_replayed(conversation, client_id)
        if replayed is None:
            raise
        return replayed
    except IntegrityError:
        # _touch may have set it before the insert was refused
        conversation.title, conversation.title_source = title, title_source
        replayed = turn_replayed(conversation, client_id)
        if replayed is None:
            raise
        return replayed
    return TurnStart(user_message=user_message, reply=reply)


def turn_retry(*, conversation: Conversation, user_message_id: int) -> TurnStart:
    """Answer a stored user message again after its reply failed or was interrupted, reusing
    the reply's row (its partial text is kept until the retry writes text of its own)."""
    return _turn_again(conversation=conversation, user_message_id=user_message_id)


def turn_regenerate(*, conversation: Conversation, user_message_id: int) -> TurnStart:
    """A new answer to the conversation's last user message; the reply it had is kept as an
    earlier version ("1 / 2"), with its own context report."""
    return _turn_again(conversation=conversation, user_message_id=user_message_id, again=True)


def turn_edit(*, conversation: Conversation, user_message_id: int, text: str) -> TurnStart:
    """Change a question and answer it again. The last one is changed in place, the reply to
    the earlier wording kept as an earlier version; an earlier one starts a new branch from
    there (``chat.branches``): the question and everything after it are hidden, kept for
    "1 / 2", and the new wording is stored as a new question."""
    return _turn_again(
        conversation=conversation, user_message_id=user_message_id, again=True, text=text
    )


def _last_user_message_id(conversation: Conversation) -> int | None:
    return (
        Message.objects.filter(
            conversation=conversation, role=Message.Role.USER, hidden_by__isnull=True
        )
        .order_by("-created_at", "-id")
        .values_list("pk", flat=True)
        .first()
    )


def _keep_version(reply: Message, question: str) -> ReplyVersion | None:
    """Keep the reply about to be replaced as an earlier version: never one stopped before
    any text (nothing to show), and only the newest REPLY_VERSIONS_KEPT, numbered 1..N."""
    if not reply.content:
        return None
    number = reply.versions.count() + 1
    version = ReplyVersion.objects.create(
        reply=reply,
        number=number,
        question=question,
        content=reply.content,
        status=reply.status,
        error=reply.error,
        model=reply.model,
        context_report=reply.context_report,
        system_prompt_version=reply.system_prompt_version,
        created_at=reply.created_at,
    )
    excess = number - settings.MEMORYCHAT_REPLY_VERSIONS_KEPT
    if excess > 0:
        reply.versions.filter(number__lte=excess).delete()
        # Renumbered one row at a time, lowest first: each new number is free by then (a
        # single UPDATE could meet the unique (reply, number) pair half-way on PostgreSQL).
        for pk, old in reply.versions.order_by("number").values_list("pk", "number"):
            ReplyVersion.objects.filter(pk=pk).update(number=old - excess)
        version.number = number - excess
    return version


def _turn_again(
    *,
    conversation: Conversation,
    user_message_id: int,
    again: bool = False,
    text: str | None = None,
) -> TurnStart:
    with transaction.atomic():
        user_message = Message.objects.filter(
            conversation=conversation,
            pk=user_message_id,
            role=Message.Role.USER,
            hidden_by__isnull=True,  # a branch not shown is not answered again
        ).first()
        if user_message is None:
            raise ChatError("That message is not in this conversation.", code="not_found")
        lock_and_check_idle(conversation)
        thread_changes(conversation)
        reply = user_message.replies.order_by("-id").first()
        last = _last_user_message_id(conversation) == user_message.pk
        if text is not None and not last:
            return branch_start(conversation=conversation, question=user_message, text=text)
        if again and not last:
            raise ChatError(
                "Only the last message can be edited or answered again.", code="not_last"
            )
        if not again and reply is not None and reply.status == Message.Status.COMPLETE:
            raise ChatError("That message already has a complete reply.", code="bad_frame")
        if again and reply is not None and reply.status == Message.Status.STREAMING:
            raise ChatError(
                "A reply is still being written. Stop it or wait for it to finish.", code="busy"
            )
        question = user_message.content
        new_title = ""
        if text is not None:
            user_message.content = clean_text(text)
            user_message.token_count = count_tokens(
                user_message.content, conversation.effective_model
            )
            user_message.save(update_fields=["content", "token_count"])
            new_title = _title_follows_edit(conversation, user_message)
        now = timezone.now()
        if reply is None:
            reply = message_create(
                conversation=conversation,
                role=Message.Role.ASSISTANT,
                content="",
                status=Message.Status.STREAMING,
                reply_to=user_message,
            )
        else:
            if again:  # regenerate or edit: the answer so far becomes an earlier version
                _keep_version(reply, question)
            reply.status = Message.Status.STREAMING
            reply.error = ""
            reply.error_kind = ""
            reply.lease_expires_at = now + stream_lease()
            if not again:
                # A retry: the earlier partial text stays stored until the retry writes text
                # of its own (its first checkpoint, or its end): one that fails at once
                # loses nothing.
                previous = reply.content
                reply.save(update_fields=["status", "error", "error_kind", "lease_expires_at"])
                reply.content = ""
                reply.version_count = reply.versions.count()
                return TurnStart(user_message=user_message, reply=reply, previous_content=previous)
            reply.content = ""
            reply.context_report = None
            reply.created_at = now  # the newest message of the conversation: answered now
            reply.version_count = reply.versions.count()  # for the page's "2 / 2"
            reply.save(
                update_fields=[
                    "content",
                    "status",
                    "error",
                    "error_kind",
                    "context_report",
                    "created_at",
                    "lease_expires_at",
                ]
            )
    return TurnStart(user_message=user_message, reply=reply, new_title=new_title)


def _title_follows_edit(conversation: Conversation, question: Message) -> str:
    """The first question edited in place (the conversation's only one): a title made from
    its earlier wording gives way to the new wording's stand-in, titled again after the
    reply (``chat.titles``); a title the user chose stays. The new title, or ""."""
    # As stored: a tab's object is as it was when it connected, before any rename since.
    conversation.refresh_from_db(fields=["title", "title_source"])
    if conversation.title_source not in (
        Conversation.TitleSource.MESSAGE,
        Conversation.TitleSource.GENERATED,
    ):
        return ""
    earlier = Message.objects.filter(
        conversation=conversation,
        role=Message.Role.USER,
        hidden_by__isnull=True,
        created_at__lt=question.created_at,
    )
    title = title_from_text(question.content)
    if earlier.exists() or not title:
        return ""
    Message.objects.filter(pk=question.pk).update(branch_title="")
    conversation.title, conversation.title_source = title, Conversation.TitleSource.MESSAGE
    conversation.save(update_fields=["title", "title_source"])
    return title


def branch_start(*, conversation: Conversation, question: Message, text: str) -> TurnStart:
    """Call inside the transaction that checked the conversation idle: hide ``question`` and
    what follows it, store ``text`` as its sibling with the reply's placeholder."""
    from chat import branches  # the branch rules; they store through this module

    branches.hide_from(question)
    root_id = question.branch_of_id or question.pk
    user_message, reply = _question_and_placeholder(conversation, text, branch_of_id=root_id)
    new_title = branches.follow(conversation=conversation, hidden=question, shown=user_message)
    return TurnStart(
        user_message=user_message, reply=reply, branched_from=question.pk, new_title=new_title
    )


def turn_continue(*, conversation: Conversation, reply_id: int) -> TurnStart:
    """Stream the rest of a reply the length cap cut into the same row (its text is kept)."""
    with transaction.atomic():
        lock_and_check_idle(conversation)
        reply = (
            Message.objects.filter(
                conversation=conversation,
                pk=reply_id,
                role=Message.Role.ASSISTANT,
                hidden_by__isnull=True,
            )
            .select_related("reply_to")
            .first()
        )
        if reply is None or reply.reply_to is None:
            raise ChatError("That reply is not in this conversation.", code="not_found")
        if reply.status != Message.Status.TRUNCATED or not reply.content:
            raise ChatError(
                "Only a reply cut at its length limit can be continued.", code="bad_frame"
            )
        thread_changes(conversation)
        reply.status = Message.Status.STREAMING
        reply.error = ""
        reply.lease_expires_at = timezone.now() + stream_lease()
        reply.save(update_fields=["status", "error", "lease_expires_at"])
    return TurnStart(user_message=reply.reply_to, reply=reply)
