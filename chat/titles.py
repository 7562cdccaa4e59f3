"""A conversation's title after its first exchange.

The first message gives a stand-in at once (``chat.services._touch``: its first line, cut).
Once the first reply is stored, a short title replaces it: with a model, one the summary
endpoint writes (``generate_title``, a background job: ``chat.tasks.title_conversation``);
offline, or when the model gives nothing usable, the first question's subject as a person
would title it (``offline_title``: ``chat.title_phrase``; the exchange's key words when the
question has none), at once, in the after-turn thread. Only the stand-in is replaced
(``title_source == "message"``, in the update's own condition): a title the user chose, even
while the job ran, is kept. The new title goes to the conversation's open tabs as a ``title``
frame after commit.
"""

from __future__ import annotations

import logging
import re
from functools import partial

import openai
from django.db import transaction

from chat import fanout, protocol
from chat.job_watch import Watch, frames_cannot_cross, task_ended
from chat.models import Conversation, Message
from chat.services import TITLE_MAX_CHARS, title_from_text
from chat.title_phrase import question_title
from llm import OFFLINE_MODEL, pinning
from llm.clients import max_tokens_field, summary_client, summary_endpoint, summary_model
from llm.messages import shape_messages
from llm.slots import NoSlot, background_slot
from memory.extraction import topics_of

logger = logging.getLogger(__name__)

KEY_WORDS = 5
EXCHANGE_CHARS = 1500  # of each side: enough to name the subject, small for a local model
TITLE_TOKENS = 24
TITLE_PROMPT = (
    "Write a title for the conversation below: two to six words that name its subject. "
    "Answer with the title alone, without quotes or a full stop."
)
_THINKING = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_LABEL = re.compile(r"^\s*(?:title\s*:\s*)", re.IGNORECASE)
_QUOTES = "\"'\u201c\u201d\u2018\u2019`*#_ "  # straight and curly quotes, Markdown marks


def keyword_title(texts: list[str]) -> str:
    """The exchange's key words (``memory.extraction.topics_of``), in the order they were
    said, as a short title; "" when it has none (a greeting)."""
    messages = [{"role": "user", "content": text} for text in texts if text.strip()]
    words = topics_of(messages)[:KEY_WORDS]
    if not words:
        return ""
    said = " ".join(texts).lower()

    def position(word: str) -> int:
        found = said.find(word.lower())
        return found if found >= 0 else len(said)

    words.sort(key=position)
    title = " ".join(words)
    title = title[:1].upper() + title[1:]
    return title_from_text(title)  # cut at a word boundary, as any title


def offline_title(question: str, answer: str = "") -> str:
    """A title made without a model: the question's subject ("Plan a 3-day trip to Lisbon"),
    else the exchange's key words; "" when neither says anything (a greeting)."""
    return title_from_text(question_title(question)) or keyword_title([question, answer])


def clean_model_title(text: str) -> str:
    """A model's answer as a title: its reasoning, a "Title:" label, quotes and the final
    full stop dropped; its first line, cut at a word boundary."""
    text = _THINKING.sub("", text or "").strip()
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return ""
    title = _LABEL.sub("", lines[0]).strip(_QUOTES).rstrip(".").strip(_QUOTES)
    return title_from_text(" ".join(title.split()))


def model_title(question: str, answer: str, model: str) -> str:
    """What the summary endpoint proposes for this exchange; "" when it cannot say."""
    exchange = f"User: {question[:EXCHANGE_CHARS]}"
    if answer:
        exchange += f"\n\nAssistant: {answer[:EXCHANGE_CHARS]}"
    try:
        with background_slot() as lease:
            response = summary_client().chat.completions.create(
                model=summary_model(model),
                messages=shape_messages(
                    [
                        {"role": "system", "content": TITLE_PROMPT},
                        {"role": "user", "content": exchange},
                    ]
                ),
                **max_tokens_field(TITLE_TOKENS),
                extra_body=pinning.background_fields(lease) or None,  # never the chat's slot
            )
    except (openai.OpenAIError, NoSlot) as exc:
        logger.info("no title from the model: %s", exc)
        return ""
    choices = response.choices or []
    return clean_model_title(choices[0].message.content or "") if choices else ""


def first_exchange(conversation_id: int) -> tuple[str, str]:
    """The first question and its first reply's text ("" for an offline or unfinished one),
    in the branch shown (``chat.branches``)."""
    rows = list(
        Message.objects.filter(
            conversation_id=conversation_id,
            role__in=["user", "assistant"],
            hidden_by__isnull=True,
        )
        .order_by("created_at", "id")
        .values_list("role", "content", "model", "status")[:2]
    )
    question = rows[0][1] if rows and rows[0][0] == Message.Role.USER else ""
    answer = ""
    if len(rows) > 1 and rows[1][0] == Message.Role.ASSISTANT and rows[1][2] != OFFLINE_MODEL:
        answer = rows[1][1] if rows[1][3] == Message.Status.COMPLETE else ""
    return question, answer


def title_store(*, conversation_id: int, title: str) -> bool:
    """Replace the first message's stand-in with ``title`` and tell the open tabs; nothing
    when the user chose a title meanwhile (or one was made already)."""
    # + 1: title_from_text's longest, a cut title and its "…" (every title here came from it).
    title = " ".join(title.split())[: TITLE_MAX_CHARS + 1]
    if not title:
        return False
    changed = Conversation.objects.filter(
        pk=conversation_id, title_source=Conversation.TitleSource.MESSAGE
    ).update(title=title, title_source=Conversation.TitleSource.GENERATED)
    if changed:
        # The branch shown keeps its title: a switch back to it shows it again (branches.follow).
        first = _first_question_id(conversation_id)
        if first is not None:
            Message.objects.filter(pk=first).update(branch_title=title)
        transaction.on_commit(lambda: _tell_tabs(conversation_id, title))
    return bool(changed)


def _first_question_id(conversation_id: int) -> int | None:
    return (
        Message.objects.filter(
            conversation_id=conversation_id, role=Message.Role.USER, hidden_by__isnull=True
        )
        .order_by("created_at", "id")
        .values_list("pk", flat=True)
        .first()
    )


def _tell_tabs(conversation_id: int, title: str) -> None:
    try:
        fanout.send_to_conversation(conversation_id, protocol.title(title))
    except Exception:  # stored: a reload shows it
        logger.warning("could not tell the tabs of conversation %s its title", conversation_id)


def generate_title(conversation_id: int) -> str:
    """The job: the model's title for the first exchange, or one made offline; "" when the
    stand-in is no longer there to replace."""
    conversation = Conversation.objects.filter(pk=conversation_id).first()
    if conversation is None or conversation.title_source != Conversation.TitleSource.MESSAGE:
        return ""
    question, answer = first_exchange(conversation_id)
    title = model_title(question, answer, conversation.effective_model) if question else ""
    title = title or offline_title(question, answer) or conversation.title
    return title if title_store(conversation_id=conversation_id, title=title) else ""


def title_after_first_exchange(conversation: Conversation, user_message: Message) -> Watch | None:
    """After a reply (``chat.turn.after``): a conversation still showing its first message's
    stand-in gets its title, from the model in a job, or else made offline now. The
    job to watch when its title frame cannot reach this process's tabs by itself (the
    in-memory channel layer: ``chat.job_watch``), else None."""
    if conversation.title_source != Conversation.TitleSource.MESSAGE:
        return None
    return title_make(conversation)


def title_make(conversation: Conversation) -> Watch | None:
    """Title the conversation's first exchange (the branch shown): see
    ``title_after_first_exchange``; also after a switch to a first question whose branch has
    no title yet (``chat.branches.follow``)."""
    # Asked once per conversation object: a later turn in the same tab asks no more.
    conversation.title_source = Conversation.TitleSource.GENERATED
    if summary_endpoint().configured:
        from chat.tasks import title_conversation

        result = title_conversation.enqueue(conversation.pk)
        if result.is_finished or not frames_cannot_cross():
            return None
        return Watch(
            name=f"title-{conversation.pk}-{result.id}",  # a later switch's job is another
            ended=partial(task_ended, title_conversation, result.id),
            then=partial(title_tell_tabs, conversation.pk),
        )
    # The first question as stored now: it may have been edited since this turn began.
    question, _answer = first_exchange(conversation.pk)
    title = offline_title(question) or conversation.title
    if title_store(conversation_id=conversation.pk, title=title):
        conversation.title = title
    return None


def title_tell_tabs(conversation_id: int) -> None:
    """The generated title, sent again to the conversation's tabs (from the server process:
    ``chat.job_watch``); nothing when none was stored (the user's own title stays, its frame
    already sent)."""
    title = (
        Conversation.objects.filter(
            pk=conversation_id, title_source=Conversation.TitleSource.GENERATED
        )
        .values_list("title", flat=True)
        .first()
    )
    if title:
        _tell_tabs(conversation_id, title)
