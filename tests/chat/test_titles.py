"""A conversation's title after its first exchange (chat.titles): the first message's stand-in
is replaced by the model's short title (a background job) or, offline, by the exchange's key
words; a title the user chose is never replaced; open tabs get the new title."""

import pytest
from asgiref.sync import sync_to_async

from chat.models import Conversation
from chat.services import conversation_rename, title_from_text
from chat.titles import TITLE_PROMPT, clean_model_title, keyword_title, offline_title
from chat.turn import run_turn
from tests.chat.conftest import acreate_conversation
from tests.chat.helpers import connected, frames_until
from tests.support.tasks import run_pending_tasks

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = (
    "How do I configure an nginx reverse proxy in front of a Django app that uses websockets "
    "and serves its static files from a separate directory?"
)


async def _turn(user, conversation, text=QUESTION):
    frames = []

    async def sink(frame):
        frames.append(frame)

    reply = await run_turn(user=user, conversation=conversation, text=text, sink=sink)
    return reply, frames


async def _stored(conversation) -> Conversation:
    return await Conversation.objects.aget(pk=conversation.pk)


def test_offline_the_title_is_the_questions_subject_not_its_first_line_cut_short():
    title = offline_title(QUESTION)
    assert title == "Configure an nginx reverse proxy"
    assert title != title_from_text(QUESTION)
    assert offline_title("Hi!") == ""


def test_key_words_in_the_order_said_are_the_last_resort():
    assert keyword_title([QUESTION]) == "Configure nginx reverse proxy Django"
    assert keyword_title(["Hi!"]) == ""


@pytest.mark.parametrize(
    ("answer", "title"),
    [
        ('"Nginx proxy for Django."', "Nginx proxy for Django"),
        ("Title: Lisbon with children\nI chose this because…", "Lisbon with children"),
        ("<think>The user asks about TCP.</think>\n**TCP versus UDP**", "TCP versus UDP"),
        ("   ", ""),
    ],
)
def test_a_models_answer_becomes_a_clean_title(answer, title):
    assert clean_model_title(answer) == title


async def test_offline_the_first_exchange_titles_the_conversation_by_its_key_words(alice):
    """No model: the title is made at once after the reply, and the tab is told."""
    conversation = await acreate_conversation(alice)
    reply, frames = await _turn(alice, conversation)
    assert reply.status == "complete"
    stored = await _stored(conversation)
    assert stored.title == "Configure an nginx reverse proxy"
    assert stored.title_source == Conversation.TitleSource.GENERATED
    titles = [f["title"] for f in frames if f["type"] == "title"]
    assert titles == [title_from_text(QUESTION), stored.title]

    # A second exchange leaves the title alone.
    await _turn(alice, conversation, text="And what about HTTP/2 and gzip compression?")
    assert (await _stored(conversation)).title == stored.title


async def test_with_a_model_a_job_asks_the_summary_endpoint_and_tabs_get_the_title(alice, fake_llm):
    fake_llm.behaviour.reply = "Put nginx in front and proxy the websocket upgrade."
    fake_llm.behaviour.json_reply = lambda body: 'Title: "Nginx in front of Django."'
    conversation = await acreate_conversation(alice)
    tab = await connected(alice, conversation.pk)
    await _turn(alice, conversation)
    assert (await _stored(conversation)).title_source == Conversation.TitleSource.MESSAGE

    await sync_to_async(run_pending_tasks)()
    stored = await _stored(conversation)
    assert stored.title == "Nginx in front of Django"
    asked = [r for r in fake_llm.chat_requests() if not r["body"].get("stream")]
    assert len(asked) == 1
    sent = asked[0]["body"]["messages"]
    assert sent[0]["content"] == TITLE_PROMPT
    assert QUESTION in sent[-1]["content"] and fake_llm.behaviour.reply in sent[-1]["content"]
    seen = await frames_until(tab, "title")  # the stand-in's
    if seen[-1]["title"] != stored.title:
        seen = await frames_until(tab, "title")
    assert seen[-1]["title"] == stored.title
    await tab.disconnect()


async def test_a_model_that_fails_leaves_the_key_words(alice, fake_llm):
    fake_llm.behaviour.reply = "Proxy it."
    conversation = await acreate_conversation(alice)
    await _turn(alice, conversation)
    fake_llm.behaviour.fail_status, fake_llm.behaviour.fail_times = 500, 10
    await sync_to_async(run_pending_tasks)()
    stored = await _stored(conversation)
    assert stored.title == "Configure an nginx reverse proxy"
    assert stored.title_source == Conversation.TitleSource.GENERATED


async def test_a_title_the_user_chose_is_never_replaced(alice, fake_llm):
    """Renamed while the job waited: the job leaves it; a conversation made with a title
    keeps it after its first exchange."""
    fake_llm.behaviour.json_reply = lambda body: "A generated title"
    conversation = await acreate_conversation(alice)
    await _turn(alice, conversation)
    await sync_to_async(conversation_rename)(
        conversation=await _stored(conversation), title="My own name"
    )
    await sync_to_async(run_pending_tasks)()
    assert (await _stored(conversation)).title == "My own name"

    named = await acreate_conversation(alice, title="Named first")
    await _turn(alice, named)
    await sync_to_async(run_pending_tasks)()
    stored = await _stored(named)
    assert stored.title == "Named first"
    assert stored.title_source == Conversation.TitleSource.USER


def test_the_longest_title_made_is_stored_whole_with_its_ellipsis(alice):
    """title_store keeps TITLE_MAX_CHARS + 1 characters: a title cut at a word boundary and
    its "…", the longest title_from_text makes (not one too many)."""
    from chat.services import TITLE_MAX_CHARS, conversation_create
    from chat.titles import title_store

    title = title_from_text("a" * TITLE_MAX_CHARS + " and more")
    assert len(title) == TITLE_MAX_CHARS + 1 and title.endswith("…")
    conversation = conversation_create(user=alice, title="Stand-in")
    Conversation.objects.filter(pk=conversation.pk).update(title_source="message")
    assert title_store(conversation_id=conversation.pk, title=title)
    assert Conversation.objects.get(pk=conversation.pk).title == title
