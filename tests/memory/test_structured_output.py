"""Summary runs against what real servers do with structured output: a JSON answer cut at the
token cap, garbage that parses, no json_schema support, server errors; separate summary and
embedding servers; the background slots."""

import json
import threading
import time

import openai
import pytest

from chat.services import NewMessage, conversation_create, message_create, message_create_many
from llm.slots import NoSlot, background_slot
from memory import services, summariser
from memory.models import ActionItem, Decision, Fact, Summary
from memory.search import embeddings
from tests.memory.test_llm_memory import extraction_json
from tests.support.fake_llm import Behaviour, FakeLLM

pytestmark = pytest.mark.django_db


def chat(conversation, n=2):
    message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user" if i % 2 == 0 else "assistant", f"I'm Sam; message {i}.")
            for i in range(n)
        ],
    )


def run_once(conversation):
    return services.summary_run_execute(
        run_id=services.summary_run_start(conversation=conversation).pk
    )


def batch_size(body):
    return len(json.loads(body["messages"][-1]["content"])["messages"])


def test_a_summary_request_sends_a_cap_sized_to_the_schema(conversation, fake_llm, settings):
    """max_tokens grows with the batch and never passes SUMMARY_MAX_TOKENS."""
    settings.SUMMARY_MAX_TOKENS = 1000
    fake_llm.behaviour.json_reply = extraction_json
    chat(conversation, 2)
    run_once(conversation)
    body = fake_llm.chat_requests()[-1]["body"]
    assert body["max_tokens"] == summariser.answer_cap(2, 1000) == 1000
    assert summariser.answer_cap(2, 4096) == 1020 < summariser.answer_cap(10, 4096)


def test_an_answer_cut_at_the_token_cap_says_so_and_falls_back(conversation, fake_llm):
    """JSON cut mid-string with finish_reason "length": the run's record says the answer hit
    the cap (not just 'Unterminated string'), and the batch is still folded."""
    fake_llm.behaviour.json_reply = extraction_json
    fake_llm.behaviour.json_cut_at = 40
    chat(conversation, 2)
    run = run_once(conversation)
    assert run.status == "done" and run.method == "offline"
    assert "the answer was cut at the token cap (max_tokens=" in run.error
    assert "Unterminated string" in run.error
    assert Summary.objects.get(is_current=True).model == "offline"


def test_a_cut_batch_is_retried_in_halves(conversation, fake_llm):
    """Too long for the cap as a whole, fine in halves: the halves' answers are used, the
    second folded onto the first's summary."""

    def answer(body):
        data = extraction_json(body)
        if batch_size(body) > 4:
            return json.dumps(data)[:100]  # what a cut answer looks like
        data["summary"] = f"Summary of {batch_size(body)} messages."
        return data

    fake_llm.behaviour.json_reply = answer
    chat(conversation, 8)
    run = run_once(conversation)
    assert run.status == "done" and run.method == "json_schema"
    assert "json_schema, 8 messages: the answer is not JSON" in run.error
    requests = fake_llm.chat_requests()
    assert [batch_size(r["body"]) for r in requests] == [8, 4, 4]
    second = json.loads(requests[-1]["body"]["messages"][-1]["content"])
    assert second["previous_summary"] == "Summary of 4 messages."
    assert Summary.objects.get(is_current=True).text == "Summary of 4 messages."
    assert Fact.objects.get().text == "The user is Sam."  # the same fact twice is one memory


def test_garbage_that_parses_is_never_stored(conversation, fake_llm):
    """The answer the issue saw: summary ':{', a digits fact at importance 1.0, a punctuation
    decision. It is refused, and nothing of it reaches the memory."""
    fake_llm.behaviour.json_reply = lambda body: {
        "summary": "':{'",
        "topics": [],
        "decisions": [{"what": '".,;:!"', "status": "decided", "message_index": 0}],
        "action_items": [],
        "facts": [
            {
                "category": "other",
                "subject": "",
                "text": "The 1234567890",
                "importance": 1.0,
                "message_index": 0,
            }
        ],
        "open_questions": [],
    }
    chat(conversation, 2)
    run = run_once(conversation)
    assert run.status == "done" and run.method == "offline"
    assert "the summary" in run.error and "is not text" in run.error
    assert not Fact.objects.filter(text__contains="1234567890").exists()
    assert not Decision.objects.exists()
    assert ":{" not in Summary.objects.get(is_current=True).text


def test_bad_items_are_dropped_and_good_ones_kept(conversation, fake_llm):
    """A usable answer with some bad items: the bad ones go, NaN importance is never stored,
    an impossible date is no date."""

    def answer(body):
        data = extraction_json(body)
        data["facts"].append(
            {"category": "x", "subject": "", "text": "!!!", "importance": 1, "message_index": 0}
        )
        data["facts"][0]["importance"] = "NaN"
        data["action_items"][0]["due_date"] = "2026-02-30"
        return data

    fake_llm.behaviour.json_reply = answer
    chat(conversation, 2)
    run = run_once(conversation)
    assert run.status == "done" and run.method == "json_schema" and run.error == ""
    fact = Fact.objects.get()
    assert fact.text == "The user is Sam." and fact.importance == 0.5
    assert ActionItem.objects.get().due_date is None


def test_a_server_without_json_schema_gets_json_object(conversation, fake_llm):
    """400 for json_schema: the server's reason is noted and json_object answers."""
    fake_llm.behaviour.json_reply = extraction_json
    fake_llm.behaviour.reject_json_schema = True
    chat(conversation, 2)
    run = run_once(conversation)
    assert run.status == "done" and run.method == "json_object"
    assert "the server refused the request (HTTP 400): response_format" in run.error
    last = fake_llm.chat_requests()[-1]["body"]
    assert last["response_format"] == {"type": "json_object"}
    assert '"summary": str' in last["messages"][0]["content"]
    assert Summary.objects.get(is_current=True).text.startswith("Sam planned")


def test_a_strict_template_gets_one_system_message(conversation, fake_llm):
    fake_llm.behaviour.json_reply = extraction_json
    fake_llm.behaviour.strict_template = True
    chat(conversation, 2)
    run = run_once(conversation)
    assert run.status == "done" and run.method == "json_schema", run.error


def test_a_server_error_is_retried_later_with_the_servers_words(conversation, fake_llm):
    """5xx is not a bad answer: the run is queued again, its error holds the server's body."""
    fake_llm.behaviour.fail_status = 503
    fake_llm.behaviour.fail_times = 1
    chat(conversation, 2)
    run = run_once(conversation)
    assert run.status == "queued" and run.attempts == 1
    assert "The model server failed (HTTP 503)" in run.error
    assert "Server said: HTTP 503" in run.error and "fake failure 503" in run.error


def test_summaries_go_to_their_own_server_and_model(conversation, fake_llm, settings):
    """SUMMARY_BASE_URL / SUMMARY_MODEL: the chat server never sees the summary request."""
    summary_server = FakeLLM(Behaviour(json_reply=extraction_json)).start()
    try:
        settings.SUMMARY_BASE_URL = summary_server.base_url
        settings.SUMMARY_API_KEY = "summary-key"
        settings.SUMMARY_MODEL = "small-summariser"
        chat(conversation, 2)
        run = run_once(conversation)
        assert run.status == "done"
        assert fake_llm.chat_requests() == []
        assert summary_server.chat_requests()[-1]["body"]["model"] == "small-summariser"
        assert Summary.objects.get(is_current=True).model == "small-summariser"
    finally:
        summary_server.stop()


def test_embeddings_go_to_their_own_server(alice, fake_llm, settings):
    embedding_server = FakeLLM(Behaviour()).start()
    try:
        settings.EMBEDDING_BASE_URL = embedding_server.base_url
        settings.OPENAI_EMBEDDING_MODEL = "e5-small"
        vectors = embeddings.embed_texts(["hello world"])
        assert len(vectors) == 1
        assert [r["path"] for r in embedding_server.requests] == ["/v1/embeddings"]
        assert fake_llm.requests == []
    finally:
        embedding_server.stop()


def test_the_backfill_waits_the_background_timeout_a_query_the_chats(alice, settings):
    """An embedding server slower than the chat's timeout (a batch of long texts on a local
    server): the backfill's batch waits BACKGROUND_TIMEOUT and is stored; a turn's query
    gives up at the chat's timeout (the search goes on without vectors)."""
    embedding_server = FakeLLM(Behaviour(stall_before=1.5)).start()
    try:
        settings.EMBEDDING_BASE_URL, settings.EMBEDDING_API_KEY = embedding_server.base_url, "k"
        settings.OPENAI_EMBEDDING_MODEL = "e5-small"
        settings.OPENAI_MAX_RETRIES = 0
        settings.OPENAI_TIMEOUT, settings.BACKGROUND_TIMEOUT = 0.5, 30.0
        conversation = conversation_create(user=alice)
        message_create(conversation=conversation, role="user", content="My dog Rex loves the sea")
        assert embeddings.embed_pending() == 1
        with pytest.raises(openai.APITimeoutError):
            embeddings.embed_texts(["where does Rex go?"], query=True, user_id=alice.pk)
    finally:
        embedding_server.stop()


def test_background_calls_hold_a_slot_of_their_own(settings):
    """BACKGROUND_MODEL_CONCURRENCY=1: a second background call waits for the first."""
    settings.BACKGROUND_MODEL_CONCURRENCY = 1
    held, release = threading.Event(), threading.Event()

    def first():
        with background_slot():
            held.set()
            release.wait(5)

    thread = threading.Thread(target=first)
    thread.start()
    held.wait(5)
    with pytest.raises(NoSlot), background_slot(wait=0.3):
        pass
    release.set()
    thread.join()
    with background_slot(wait=0.3) as number:
        assert number == 0


def test_a_single_slot_server_makes_the_second_request_wait():
    """The fake server's slots, as a single-slot llama-server: a request that arrives while
    another is answered waits for it."""
    import openai

    server = FakeLLM(Behaviour(slots=1, interval=0.05, reply="a b c d e f")).start()
    try:
        client = openai.OpenAI(api_key="k", base_url=server.base_url, max_retries=0)

        def ask():
            with client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}], stream=True
            ) as stream:
                for _ in stream:
                    pass

        threads = [threading.Thread(target=ask) for _ in range(2)]
        for thread in threads:
            thread.start()
            time.sleep(0.05)
        for thread in threads:
            thread.join()
        waits = sorted(r["waited"] for r in server.chat_requests())
        assert waits[0] < 0.05 and waits[1] > 0.15
    finally:
        server.stop()


def test_staff_see_what_answered_and_what_failed_before(client, staff, conversation, fake_llm):
    from django.urls import reverse

    fake_llm.behaviour.json_reply = extraction_json
    fake_llm.behaviour.json_cut_at = 40
    chat(conversation, 2)
    run_once(conversation)
    client.force_login(staff)
    html = client.get(reverse("staff:conversation", args=[conversation.pk])).content.decode()
    assert "(offline)" in html and "cut at the token cap" in html


def test_a_slot_is_kept_while_its_holder_lives_and_freed_soon_after_it_dies(settings, monkeypatch):
    """The holder renews its lease; a killed worker's slot (no renewals) frees after the
    lease, not after the longest request."""
    from django.core.cache import cache

    from llm import slots

    settings.BACKGROUND_MODEL_CONCURRENCY = 1
    monkeypatch.setattr(slots, "LEASE_SECONDS", 1)
    held, release = threading.Event(), threading.Event()

    def long_call():
        with background_slot():
            held.set()
            release.wait(10)

    thread = threading.Thread(target=long_call)
    thread.start()
    held.wait(5)
    time.sleep(1.8)  # past one lease: still held, renewed
    with pytest.raises(NoSlot), background_slot(wait=0.3):
        pass
    release.set()
    thread.join()

    cache.add("llm-background-slot-0", "a killed worker", 1)
    started = time.monotonic()
    with background_slot(wait=5):
        assert time.monotonic() - started < 3
