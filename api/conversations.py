"""Which conversation a ``/v1`` request continues. A client sends its whole history each
time: when the turns before its new message are exactly the stored user and assistant
messages of one of the user's conversations (the latest such), the request continues it;
otherwise a new conversation starts, holding that history, so that the next request finds
it. Either shows in the web UI like any other conversation.

The match's shortcut: a /v1 turn that ends with a reply keeps on its conversation the
digest of the thread as the client will send it back (the history, the message and the
reply) and that reply's id (``conversation_remember``). The next request's history finds
the conversation by that digest in one indexed query of the user's conversations, while the
reply is still shown and nothing is shown after it; storing a message, ending a reply, a
change in place or a branch switch clears the digest. When it misses, the turns are compared
as above.

A request names a project or none (``project_for_request``), and continues only a
conversation in that same project (none: only one outside every project); a new
conversation starts in it, so its instructions and its memory apply to every turn."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db.models import Exists, IntegerField, OuterRef, Q, Value
from django.db.models.functions import Coalesce

from api.wire import ApiError, Turn
from chat.models import Conversation, Message
from chat.services import NewMessage, clean_text, conversation_create, message_create_many
from projects.models import Project
from projects.selectors import project_named
from web.compiled import CompiledRead

CANDIDATES = 10  # conversations whose last two turns match, compared in full
SHOWN_ROLES = [Message.Role.USER, Message.Role.ASSISTANT]
# "In the branch shown" (hidden_by is null) as an expression no index serves: with
# ``hidden_by__isnull`` SQLite walks the hidden_by index, every shown message of every user,
# a cost per request that grew with the whole table; so it goes through the user's
# conversations and their messages' index instead.
_SHOWN = Coalesce("hidden_by", Value(0), output_field=IntegerField())


def _threads(conversation_ids: list[int]) -> dict[int, list[Turn]]:
    """Conversations' messages as a client would have them, in one query: a reply that failed
    with no text left out, and the message it answered (the client got an error, not a turn)."""
    rows = list(
        Message.objects.filter(
            conversation_id__in=conversation_ids,
            role__in=SHOWN_ROLES,
            hidden_by__isnull=True,  # the branch shown
        )
        .order_by("conversation_id", "id")
        .values_list("conversation_id", "id", "role", "content", "reply_to_id")
    )
    unanswered = {to for _, _, role, content, to in rows if role == "assistant" and not content}
    threads: dict[int, list[Turn]] = {pk: [] for pk in conversation_ids}
    for conversation_id, pk, role, content, _ in rows:
        if (content or role == "user") and pk not in unanswered:
            threads[conversation_id].append(Turn(role, content))
    return threads


def _same(a: list[Turn], b: list[Turn]) -> bool:
    return len(a) == len(b) and all(
        x.role == y.role and x.text.strip() == y.text.strip() for x, y in zip(a, b, strict=True)
    )


def thread_digest(turns: list[Turn]) -> str:
    """The turns as the match compares them (role, text as stored, ends stripped), hashed;
    each text's length goes first, so no two threads hash the same text."""
    digest = hashlib.sha256()
    for turn in turns:
        text = clean_text(turn.text).strip().encode()
        digest.update(f"{turn.role}:{len(text)}:".encode())
        digest.update(text)
    return digest.hexdigest()


def _digest_read(*, temporary: bool, in_project: bool) -> CompiledRead[Conversation]:
    """The user's conversations whose /v1 digest is the one given and whose thread has not
    changed since (its last reply then still shown, nothing shown after it), the latest
    first: compiled once (Django's compiling cost many times the statement)."""
    tip_shown = Message.objects.filter(
        pk=OuterRef("api_digest_tip"), conversation_id=OuterRef("pk"), hidden_by__isnull=True
    )
    shown_after = (
        Message.objects.filter(conversation_id=OuterRef("pk"), id__gt=OuterRef("api_digest_tip"))
        .alias(shown=_SHOWN)
        .filter(shown=0)
    )

    def build(user_id, digest, *project_id):
        place = Q(project_id=project_id[0]) if in_project else Q(project__isnull=True)
        return (
            Conversation.objects.filter(place, user_id=user_id, api_digest=digest)
            .filter(temporary=temporary)
            .filter(Exists(tip_shown))
            .exclude(Exists(shown_after))
            .order_by("-api_digest_tip")[:1]
        )

    return CompiledRead(build, int, str, *([int] if in_project else []))


_DIGEST_READS = {
    (temporary, in_project): _digest_read(temporary=temporary, in_project=in_project)
    for temporary in (False, True)
    for in_project in (False, True)
}


def _by_digest(
    *, user, digest: str, temporary: bool, project: Project | None
) -> Conversation | None:
    """The user's latest conversation whose thread is the one ``digest`` is of; one query."""
    read = _DIGEST_READS[temporary, project is not None]
    values = [user.pk, digest] + ([project.pk] if project is not None else [])
    return read.first(*values)


def project_for_request(*, user, value: str) -> Project | None:
    """The user's project the request names (id or name, any case), None for none; another
    user's or an unknown one is a 404, an archived one a 400 (it takes no new turns here)."""
    if not value:
        return None
    project = project_named(user=user, value=value)
    if project is None:
        raise ApiError(
            404, f"You have no project {value!r}.", param="project", code="project_not_found"
        )
    if project.archived:
        raise ApiError(
            400,
            f"The project {project.name!r} is archived; restore it first.",
            param="project",
            code="project_archived",
        )
    return project


def conversation_matching(
    *, user, history: list[Turn], temporary: bool, project: Project | None = None
) -> Conversation | None:
    """The user's latest conversation (temporary or not, as asked; in ``project``, or in
    none) whose stored turns are ``history``; None when none is (or ``history`` is empty).
    The candidates hold the history's last turn with its turn before it earlier (one query:
    a reply text many conversations share, as a model's stock answer, no longer makes each
    of them a candidate to load); their messages come in one more."""
    if not history:
        return None
    found = _by_digest(
        user=user, digest=thread_digest(history), temporary=temporary, project=project
    )
    if found is not None:
        return found
    history = [Turn(t.role, clean_text(t.text)) for t in history]
    last = history[-1]
    candidates = Message.objects.alias(shown=_SHOWN).filter(
        conversation__user=user,
        conversation__temporary=temporary,
        conversation__project=project,
        role=last.role,
        content=last.text,
        shown=0,
    )
    if len(history) > 1:
        before = history[-2]
        earlier = Message.objects.filter(
            conversation_id=OuterRef("conversation_id"),
            id__lt=OuterRef("id"),
            role=before.role,
            content=before.text,
            hidden_by__isnull=True,
        )
        candidates = candidates.filter(Exists(earlier))
    ids = candidates.order_by("-id").values_list("conversation_id", flat=True)
    latest_first = list(dict.fromkeys(ids[: CANDIDATES * 2]))[:CANDIDATES]
    if not latest_first:
        return None
    threads = _threads(latest_first)
    for conversation_id in latest_first:
        if _same(threads[conversation_id], history):
            return Conversation.objects.get(pk=conversation_id, user=user)
    return None


def conversation_for_request(
    *, user, history: list[Turn], model: str, temporary: bool, project: Project | None = None
) -> tuple[Conversation, bool]:
    """The conversation the request continues, or a new one holding its history (True)."""
    model = "" if model == settings.OPENAI_MODEL else model
    conversation = conversation_matching(
        user=user, history=history, temporary=temporary, project=project
    )
    if conversation is not None:
        if conversation.model != model:
            conversation.model = model
            conversation.save(update_fields=["model"])
        return conversation, False
    conversation = conversation_create(user=user, temporary=temporary, model=model, project=project)
    if history:
        message_create_many(
            conversation=conversation,
            messages=[NewMessage(role=t.role, content=t.text) for t in history],
        )
    return conversation, True


def conversation_remember(
    *, conversation: Conversation, history: list[Turn], question: str, reply: Message
) -> None:
    """After a /v1 turn answered with ``reply`` to ``question`` (as stored): the digest of the
    thread the client now holds, for its next request to find this conversation by. Not
    kept for a history with an empty reply in it (the match leaves such a reply out: only the
    comparison says whether it matches), nor while another reply of the conversation streams
    (the web page answering again: the thread is changing)."""
    if not reply.content or any(t.role == "assistant" and not clean_text(t.text) for t in history):
        return
    thread = [*history, Turn("user", question), Turn("assistant", reply.content)]
    streaming = Message.objects.filter(
        conversation_id=OuterRef("pk"), status=Message.Status.STREAMING
    )
    Conversation.objects.filter(pk=conversation.pk).exclude(Exists(streaming)).update(
        api_digest=thread_digest(thread), api_digest_tip=reply.pk
    )


def conversation_discard(*, conversation: Conversation) -> None:
    """A conversation made for a turn that was then refused (a limit): not left behind."""
    conversation.delete()
