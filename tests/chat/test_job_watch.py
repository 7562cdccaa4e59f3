"""On the in-memory channel layer (`make run`'s default) a job worker's frames reach no tab: the
server process that started the job watches it and brings what it stored to the tabs
(chat.job_watch): a summary run's "Remembered" notices, a model's title.

The worker runs here in a thread with a channel layer of its own, as a process of its own has:
what it sends reaches nobody."""

from __future__ import annotations

import asyncio
import contextlib
import threading

import pytest
from asgiref.sync import sync_to_async
from channels.layers import DEFAULT_CHANNEL_LAYER, InMemoryChannelLayer, channel_layers
from django.test import AsyncClient
from django.urls import reverse

from chat import job_watch
from chat.models import Conversation, Message
from chat.publisher import summary_run_watch
from chat.services import NewMessage, message_create_many, turn_edit
from chat.turn import run_turn
from chat.turn.after import after_turns
from memory import services
from memory.models import MemoryEvent
from projects.services import project_create
from tests.chat.conftest import acreate_conversation
from tests.chat.helpers import connected, frames_until
from tests.chat.test_branch_titles import PORTO, answered, two_exchanges
from tests.support.tasks import run_pending_tasks

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

LINES = [
    "We decided to use Postgres instead of MySQL because it has JSONB.",
    "Good choice.",
    "I need to book the venue by Friday.",
    "Noted.",
]


@pytest.fixture(autouse=True)
def in_memory_layer(settings):
    """The server's layer is the in-memory one (``make run``), also in a run with REDIS_URL:
    with Redis the worker's frames reach the tabs and nothing is watched."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch, in_memory_layer):
    assert job_watch.frames_cannot_cross()
    monkeypatch.setattr(job_watch, "POLL", 0.05)


@contextlib.contextmanager
def layer_of_its_own():
    """The job worker's process: an in-memory layer nobody listens on."""
    before = channel_layers.set(DEFAULT_CHANNEL_LAYER, InMemoryChannelLayer())
    try:
        yield
    finally:
        channel_layers.set(DEFAULT_CHANNEL_LAYER, before)


def run_worker_elsewhere() -> None:
    with layer_of_its_own():
        run_pending_tasks()


def run_worker_elsewhere_holding_the_loop() -> None:
    """The worker, with this event loop held until it is done: its layer stands in for the
    whole process's (``channel_layers`` is one for every thread), so a watch that saw a job
    end must not send while the worker's layer stands in (its frames would go nowhere: a
    race that a loaded host lost)."""
    worker = threading.Thread(target=run_worker_elsewhere)
    worker.start()
    worker.join()


@sync_to_async
def _exchange(conversation, lines=LINES):
    message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(lines)
        ],
    )


async def test_a_summary_runs_notice_reaches_the_open_tab_from_a_worker_elsewhere(alice):
    conversation = await acreate_conversation(alice)
    await _exchange(conversation)
    tab = await connected(alice, conversation.pk)
    run = await sync_to_async(services.summary_run_start)(conversation=conversation)

    await sync_to_async(run_worker_elsewhere)()
    assert await MemoryEvent.objects.filter(source="summary").aexists()
    assert await tab.receive_nothing(timeout=0.3)  # the worker's own frame went nowhere

    watch = summary_run_watch(run)
    assert watch is not None
    job_watch.watch(watch)
    notice = (await frames_until(tab, "memory_event"))[-1]
    event = await MemoryEvent.objects.aget(source="summary")
    assert notice["id"] == event.pk
    assert "Remembered" in notice["html"] and "Postgres" in notice["html"]
    await tab.disconnect()


async def test_the_turns_that_start_a_run_watch_it(alice):
    """after_turns hands the event loop a watch for the run it started (12 messages: due)."""
    conversation = await acreate_conversation(alice)
    await _exchange(conversation, LINES * 3)
    last = await Message.objects.filter(conversation=conversation, role="user").alast()
    watches = await sync_to_async(after_turns)([(conversation, last)])
    assert [w.name.split("-")[0] for w in watches] == ["summary"]
    assert await sync_to_async(watches[0].ended)() is False  # queued, no worker yet
    await sync_to_async(run_worker_elsewhere)()
    assert await sync_to_async(watches[0].ended)() is True


async def test_a_models_title_reaches_the_open_tab_from_a_worker_elsewhere(alice, fake_llm):
    """The turn's after-work starts the watch itself (chat.turn.gate)."""
    fake_llm.behaviour.reply = "Put nginx in front and proxy the websocket upgrade."
    fake_llm.behaviour.json_reply = lambda body: "Nginx in front of Django"
    conversation = await acreate_conversation(alice)
    tab = await connected(alice, conversation.pk)

    async def sink(frame):
        pass

    await run_turn(user=alice, conversation=conversation, text="How do I proxy Django?", sink=sink)
    for _ in range(100):  # the after-turn batch may queue the title job a moment later
        run_worker_elsewhere_holding_the_loop()
        stored = await Conversation.objects.aget(pk=conversation.pk)
        if stored.title_source == "generated" and stored.title == "Nginx in front of Django":
            break
        await asyncio.sleep(0.1)
    assert stored.title == "Nginx in front of Django"
    seen = await frames_until(tab, "title")  # the stand-in's
    while seen[-1]["title"] != stored.title:
        seen = await frames_until(tab, "title")
    await tab.disconnect()


async def test_a_job_whose_result_is_gone_is_no_longer_watched():
    told = []
    watch = job_watch.Watch(name="gone", ended=lambda: None, then=lambda: told.append(1))
    await job_watch._watch(watch)
    assert told == []


async def test_keep_this_branch_brings_its_made_title_to_the_open_tab(alice, fake_llm):
    """ "Keep this branch" (a view, not the socket) under a link's preview watches the title
    job of an untitled first question, as the socket's switch does."""
    conversation = await acreate_conversation(alice)

    @sync_to_async
    def two_branches():
        fake_llm.behaviour.json_reply = lambda body: "Lisbon with children"
        lisbon = two_exchanges(conversation)
        answered(
            conversation,
            turn_edit(conversation=conversation, user_message_id=lisbon.pk, text=PORTO),
        )
        run_worker_elsewhere()
        Message.objects.filter(pk=lisbon.pk).update(branch_title="")
        fake_llm.behaviour.json_reply = lambda body: "Lisbon for a family"
        return lisbon

    lisbon = await two_branches()
    tab = await connected(alice, conversation.pk)
    client = AsyncClient()
    await client.aforce_login(alice)

    response = await client.post(reverse("chat:branch_keep", args=[conversation.pk, lisbon.pk]))
    assert response.status_code == 302
    run_worker_elsewhere_holding_the_loop()

    seen = await frames_until(tab, "title")  # the stand-in's, sent with the switch
    while seen[-1]["title"] != "Lisbon for a family":
        seen = await frames_until(tab, "title")
    await tab.disconnect()


async def test_a_job_already_watched_is_not_watched_twice():
    """Staff's re-summarise of a run a turn already queued hands the same run over again."""
    told = []
    ended = iter([False, True, True])
    watch = job_watch.Watch(name="twice", ended=lambda: next(ended), then=lambda: told.append(1))
    job_watch.watch(watch)
    job_watch.watch(watch)
    await asyncio.gather(*job_watch._watches)
    assert told == [1]


async def _staff_client(staff) -> AsyncClient:
    client = AsyncClient()
    await client.aforce_login(staff)
    return client


async def test_staffs_resummarise_brings_its_notices_to_the_open_tab(alice, staff):
    """The conversation's staff page (a view) queues the run and watches it, as a turn does."""
    conversation = await acreate_conversation(alice)
    await _exchange(conversation)
    tab = await connected(alice, conversation.pk)
    client = await _staff_client(staff)

    response = await client.post(reverse("staff:resummarise", args=[conversation.pk]))
    assert response.status_code == 302
    run_worker_elsewhere_holding_the_loop()

    notice = (await frames_until(tab, "memory_event"))[-1]
    assert notice["id"] == (await MemoryEvent.objects.aget(source="summary")).pk
    assert "Remembered" in notice["html"] and "Postgres" in notice["html"]
    await tab.disconnect()


async def test_staffs_project_resummarise_brings_its_notices_to_every_open_tab(alice, staff):
    """From the user's staff page: one run per conversation of the project, each watched."""
    garden = await sync_to_async(project_create)(user=alice, name="Garden")
    tabs = []
    for lines in (LINES, ["We chose raised beds over pots because of the slugs.", "Noted."]):
        conversation = await acreate_conversation(alice, project=garden)
        await _exchange(conversation, lines)
        tabs.append(await connected(alice, conversation.pk))
    client = await _staff_client(staff)

    response = await client.post(reverse("staff:project_resummarise", args=[garden.pk]))
    assert response.status_code == 302
    run_worker_elsewhere_holding_the_loop()

    for tab, said in zip(tabs, ("Postgres", "raised beds"), strict=True):
        notice = (await frames_until(tab, "memory_event"))[-1]
        assert "Remembered" in notice["html"] and said in notice["html"], notice["html"]
        await tab.disconnect()
