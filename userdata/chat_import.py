"""A user's import of their ChatGPT or Claude conversations, in the background.

1. ``chat_import_start`` (the upload's request): the file is read and checked whole
   (``userdata.transfer.external``), as a stream: one conversation at a time is in memory,
   compressed as soon as it is checked; a refused file stores nothing. The conversations are
   kept, compressed (JSON lines), in a ``ChatImport`` and the ``import_conversations`` job is
   queued.
2. ``chat_import_run`` (the job): ``CHUNK`` conversations per transaction, each with its
   messages (``chat.services``) and its ``ImportedConversation`` (the export's id). A
   conversation already imported is left alone, so a second import of the same export adds
   nothing, and an import stopped half-way (a worker killed, the database gone) is resumed by
   the job again, or by uploading the file again: what is stored is whole conversations only.
3. ``chat_import_build_memory`` (the ``build_imported_memory`` job, again and again): the
   memory is built from the new conversations as from any conversation (a summary run each:
   summary, facts, decisions, action items; then their embeddings), at most
   ``BUILD_IN_FLIGHT`` runs queued at a time, so that the user's own conversations' runs
   never wait behind thousands of imported ones."""

from __future__ import annotations

import json
import logging
import zlib
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from itertools import islice
from typing import IO

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Q
from django.shortcuts import get_object_or_404
from django.utils import timezone

from chat.models import Conversation, Message
from chat.services import NewConversation, NewMessage, conversations_create_many
from memory import recall
from memory.models import SummaryRun
from memory.services import embeddings_schedule, summary_run_start
from userdata.models import ChatImport, ImportedConversation
from userdata.transfer.external import (
    BadFile,
    ExportReader,
    ImportedMessage,
)
from userdata.transfer.external import (
    ImportedConversation as Parsed,
)

logger = logging.getLogger(__name__)

CHUNK = 50  # conversations per transaction: about a tenth of a second of SQLite's write lock
BUILD_IN_FLIGHT = 4  # an import's summary runs queued or running at once
BUILD_WAIT_SECONDS = 5  # how long the build job waits for them before looking again
STALE_AFTER = timedelta(minutes=10)  # an import silent this long has lost its worker
ACTIVE = (ChatImport.Status.QUEUED, ChatImport.Status.IMPORTING)
RUNNING_RUNS = (SummaryRun.Status.QUEUED, SummaryRun.Status.RUNNING)


def max_upload_bytes() -> int:
    return settings.MEMORYCHAT_CHAT_IMPORT_MAX_MB * 1_000_000


# -- reads -------------------------------------------------------------------------------------


def chat_import_get_for_user(*, user, import_id: int) -> ChatImport:
    """The user's own import (404 for anyone else's)."""
    return get_object_or_404(ChatImport.objects.defer("payload"), pk=import_id, user=user)


def chat_imports_recent(*, user, limit: int = 5) -> list[ChatImport]:
    return list(
        ChatImport.objects.filter(user=user).defer("payload").order_by("-created_at", "-id")[:limit]
    )


def _importing_now(user) -> ChatImport | None:
    return (
        ChatImport.objects.filter(
            user=user, status__in=ACTIVE, heartbeat_at__gte=timezone.now() - STALE_AFTER
        )
        .defer("payload")
        .first()
    )


# -- 1. the upload -----------------------------------------------------------------------------


def chat_import_start(*, user, filename: str, file: IO[bytes]) -> ChatImport:
    """Check the upload whole and queue its import; ``BadFile`` (nothing stored) otherwise.
    ``file`` is read as a stream (Django keeps a large upload in a temporary file)."""
    limit = max_upload_bytes()
    size = _size(file)
    if size > limit:
        raise BadFile(
            f"The file is {size / 1e6:,.1f} MB; an import takes at most "
            f"{limit / 1e6:,.0f} MB. From a ChatGPT export's zip full of images, upload the "
            "conversations.json inside it."
        )
    _refuse_if_importing(user)  # early, before reading the file; again under the lock below
    export = ExportReader(file, max_bytes=limit)
    packed = _Packer()
    rows, most = 0, settings.MEMORYCHAT_IMPORT_MAX_ROWS
    for conversation in export:
        rows += 1 + len(conversation.messages)
        if rows > most:
            raise BadFile(
                f"The export holds more than {most:,} conversations and messages; an import "
                f"takes at most {most:,}."
            )
        packed.add(conversation)
    if not packed.count:
        raise BadFile("The export holds no conversation with a message to import.")
    with transaction.atomic():
        # One import at a time per user: the user's row is locked (PostgreSQL; SQLite's
        # IMMEDIATE transactions serialize writers whole), so of two uploads read at once
        # the second sees the first's import here and is refused.
        users = get_user_model().objects.select_for_update(no_key=True)
        list(users.filter(pk=user.pk).values_list("pk"))
        _refuse_if_importing(user)
        _stopped_imports_fail(user)
        chat_import = ChatImport.objects.create(
            user=user,
            source=export.source,
            filename=filename[:200],
            payload=packed.finish(),
            total=packed.count,
            skipped_empty=export.skipped_empty,
        )
        transaction.on_commit(lambda: _enqueue_import(chat_import.pk))
    return chat_import


def _refuse_if_importing(user) -> None:
    if _importing_now(user) is not None:
        raise BadFile("An import is already under way: wait for it to finish.")


def _size(file: IO[bytes]) -> int:
    size = getattr(file, "size", None)  # an UploadedFile's, said by the request
    if size is None:
        size = file.seek(0, 2)
        file.seek(0)
    return size


def _stopped_imports_fail(user) -> None:
    """An import whose worker was lost (silent for STALE_AFTER) is over: a new upload of the
    same file goes on from what it stored."""
    ChatImport.objects.filter(user=user, status__in=ACTIVE).update(
        status=ChatImport.Status.FAILED,
        finished_at=timezone.now(),
        error="The import stopped (its worker was lost). Upload the same file again to go on.",
    )


def _enqueue_import(import_id: int) -> None:
    from userdata.tasks import import_conversations

    import_conversations.enqueue(import_id)


class _Packer:
    """Checked conversations compressed as they come, one JSON line each: the upload's
    memory is the compressed payload and the conversation being read."""

    def __init__(self) -> None:
        self._compressor = zlib.compressobj(6)
        self._parts: list[bytes] = []
        self.count = 0

    def add(self, c: Parsed) -> None:
        row = [
            c.source_id,
            c.title,
            c.created_at.isoformat(),
            c.updated_at.isoformat(),
            [[m.role, m.text, m.created_at.isoformat()] for m in c.messages],
        ]
        line = json.dumps(row, ensure_ascii=False).encode() + b"\n"
        self._parts.append(self._compressor.compress(line))
        self.count += 1

    def finish(self) -> bytes:
        self._parts.append(self._compressor.flush())
        return b"".join(self._parts)


def _unpack(payload: bytes) -> Iterator[Parsed]:
    """The payload's conversations, in order, decompressed a piece at a time."""
    date = datetime.fromisoformat
    for ident, title, created, updated, messages in _rows(payload):
        yield Parsed(
            source_id=ident,
            title=title,
            created_at=date(created),
            updated_at=date(updated),
            messages=tuple(ImportedMessage(role, text, date(at)) for role, text, at in messages),
        )


def _rows(payload: bytes, piece: int = 256 * 1024) -> Iterator[list]:
    decompressor = zlib.decompressobj()
    rest = b""
    for start in range(0, len(payload), piece):
        rest += decompressor.decompress(payload[start : start + piece])
        if start == 0 and rest[:2] in (b"[[", b"[]"):
            # Kept by an earlier version as one JSON list (an import queued before an upgrade).
            rest += decompressor.decompress(payload[piece:]) + decompressor.flush()
            yield from json.loads(rest)
            return
        *lines, rest = rest.split(b"\n")
        for line in lines:
            yield json.loads(line)
    rest += decompressor.flush()
    if rest.strip():
        yield json.loads(rest)


def _chunks(items: Iterable[Parsed], size: int) -> Iterator[list[Parsed]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


# -- 2. the job that stores them --------------------------------------------------------------


def chat_import_run(*, import_id: int) -> str:
    """Store the import's conversations from where it stands; then queue the memory build."""
    # Queued, or importing with its worker lost (a job run again): never two jobs at once.
    now = timezone.now()
    claimed = (
        ChatImport.objects.filter(pk=import_id)
        .filter(
            Q(status=ChatImport.Status.QUEUED)
            | Q(status=ChatImport.Status.IMPORTING, heartbeat_at__lt=now - STALE_AFTER)
        )
        .update(status=ChatImport.Status.IMPORTING, heartbeat_at=now)
    )
    if not claimed:
        return "not waiting"
    chat_import = ChatImport.objects.select_related("user").get(pk=import_id)
    try:
        done = chat_import.processed
        rest = islice(_unpack(bytes(chat_import.payload)), done, None)
        for n, chunk in enumerate(_chunks(rest, CHUNK)):
            _store_chunk(chat_import, chunk, done + n * CHUNK)
    except Exception:
        # The error's own words go to the log, not to the page: they may name tables,
        # constraints or the database's state.
        logger.exception("chat import %s stopped", import_id)
        ChatImport.objects.filter(pk=import_id).update(
            status=ChatImport.Status.FAILED,
            finished_at=timezone.now(),
            error="The import stopped on an error of ours. The conversations stored so far "
            "are whole and kept; upload the same file again to go on.",
        )
        return "failed"
    return _after_storing(import_id)


def _store_chunk(chat_import: ChatImport, chunk: list[Parsed], start: int) -> None:
    user, source = chat_import.user, chat_import.source
    with transaction.atomic():
        known = set(
            ImportedConversation.objects.filter(
                user=user, source=source, source_id__in=[c.source_id for c in chunk]
            ).values_list("source_id", flat=True)
        )
        new = [c for c in chunk if c.source_id not in known]
        stored = conversations_create_many(
            user=user,
            conversations=[
                NewConversation(
                    title=c.title,
                    created_at=c.created_at,
                    updated_at=c.updated_at,
                    messages=tuple(NewMessage(m.role, m.text, m.created_at) for m in c.messages),
                )
                for c in new
            ],
        )
        ImportedConversation.objects.bulk_create(
            ImportedConversation(
                user=user,
                source=source,
                source_id=item.source_id,
                conversation=conversation,
                chat_import=chat_import,
            )
            for item, conversation in zip(new, stored, strict=True)
        )
        ChatImport.objects.filter(pk=chat_import.pk).update(
            processed=start + len(chunk),
            imported=F("imported") + len(new),
            already=F("already") + len(chunk) - len(new),
            messages=F("messages") + sum(len(c.messages) for c in new),
            heartbeat_at=timezone.now(),
        )


def _after_storing(import_id: int) -> str:
    chat_import = ChatImport.objects.select_related("user").defer("payload").get(pk=import_id)
    # What an earlier import of the user stored before it stopped has had no memory built.
    ImportedConversation.objects.filter(
        user=chat_import.user, chat_import__status=ChatImport.Status.FAILED
    ).update(chat_import=chat_import)
    to_build = recall.memory_enabled_count(
        Conversation.objects.filter(imported_from__chat_import=chat_import), user=chat_import.user
    )
    with transaction.atomic():
        ChatImport.objects.filter(pk=import_id).update(
            payload=b"",
            memory_total=to_build,
            status=ChatImport.Status.BUILDING if to_build else ChatImport.Status.DONE,
            finished_at=None if to_build else timezone.now(),
            heartbeat_at=timezone.now(),
        )
        if to_build:
            transaction.on_commit(lambda: _enqueue_build(import_id))
    return f"stored {chat_import.imported} conversations"


def _enqueue_build(import_id: int, *, wait: bool = False) -> None:
    from userdata.tasks import build_imported_memory

    task = build_imported_memory.using(priority=-10)  # after the chat's own jobs
    if wait:
        task = task.using(priority=-10, run_after=timezone.now() + _build_wait())
    task.enqueue(import_id)


def _build_wait() -> timedelta:
    return timedelta(seconds=BUILD_WAIT_SECONDS)


# -- 3. the memory ----------------------------------------------------------------------------


def chat_import_build_memory(*, import_id: int) -> str:
    """Start the summary runs of the next few imported conversations once the last few are
    done (each run is the usual one: the summary, then facts, decisions and action items, the
    embeddings after); the job queues itself again until every conversation has had its run."""
    chat_import = ChatImport.objects.filter(pk=import_id).defer("payload").first()
    if chat_import is None or chat_import.status != ChatImport.Status.BUILDING:
        return "not building"
    in_flight = SummaryRun.objects.filter(
        conversation__imported_from__chat_import=chat_import, status__in=RUNNING_RUNS
    ).count()
    if in_flight >= BUILD_IN_FLIGHT:
        ChatImport.objects.filter(pk=import_id).update(heartbeat_at=timezone.now())
        transaction.on_commit(lambda: _enqueue_build(import_id, wait=True))
        return f"{in_flight} runs under way"
    rows = list(
        ImportedConversation.objects.filter(
            chat_import=chat_import, pk__gt=chat_import.memory_cursor
        )
        .select_related("conversation__user")
        .order_by("pk")[: BUILD_IN_FLIGHT - in_flight]
    )
    if not rows:
        ChatImport.objects.filter(pk=import_id).update(
            status=ChatImport.Status.DONE, finished_at=timezone.now()
        )
        embeddings_schedule()
        return "done"
    enabled = recall.memory_enabled_many([row.conversation for row in rows])
    started = 0
    with transaction.atomic():
        for row in rows:
            if enabled.get(row.conversation_id) and _has_user_text(row.conversation_id):
                summary_run_start(conversation=row.conversation)
                started += 1
        ChatImport.objects.filter(pk=import_id).update(
            memory_cursor=rows[-1].pk,
            memory_done=F("memory_done") + len(rows),
            heartbeat_at=timezone.now(),
        )
        embeddings_schedule()
        # Queued after the runs just started: with one worker it runs once they are done.
        transaction.on_commit(lambda: _enqueue_build(import_id, wait=False))
    return f"started {started} runs"


def _has_user_text(conversation_id: int) -> bool:
    return Message.objects.filter(conversation_id=conversation_id, role=Message.Role.USER).exists()
