"""llm.limits: the server's context size, learned where it says it, and what the chat and the
summary runs make of it (a fake server that refuses what does not fit, as llama.cpp does)."""

import asyncio
import json

import pytest
from django.core.cache import cache

from chat.models import Conversation
from chat.services import NewMessage, conversation_create, message_create_many
from contextwindow.tokens import count_tokens
from llm import limits
from llm.clients import chat_endpoint
from llm.errors import UpstreamError
from llm.providers import OpenAIProvider
from memory import context, services
from memory.models import Summary
from tests.support.fake_llm import _max_tokens, _prompt_tokens
from tests.support.trip_turns import TRIP_TURNS

pytestmark = pytest.mark.django_db


def paths(fake):
    return [r["path"] for r in fake.requests]


@pytest.mark.parametrize(
    ("style", "asked"),
    [
        ("vllm", ["/v1/models", "/tokenize"]),
        ("llama.cpp", ["/v1/models", "/props", "/tokenize"]),
        ("ollama", ["/v1/models", "/props", "/api/show"]),
    ],
)
def test_the_context_size_is_read_where_the_server_says_it(fake_llm, style, asked):
    fake_llm.behaviour.n_ctx, fake_llm.behaviour.states_context = 4096, style
    assert limits.context_tokens(chat_endpoint(), "fake-small") == 4096
    assert limits.context_tokens(chat_endpoint(), "fake-small") == 4096
    assert paths(fake_llm) == asked  # asked once, then cached


CALIBRATION = limits.CALIBRATION_TEXT


@pytest.mark.parametrize(
    ("style", "body"),
    [
        ("llama.cpp", {"content": CALIBRATION}),
        ("vllm", {"model": "fake-small", "prompt": CALIBRATION, "add_special_tokens": False}),
    ],
)
def test_the_servers_tokenizer_gives_the_scale_at_the_probe(fake_llm, style, body):
    """A server that counts tokens (/tokenize, llama.cpp's or vLLM's body) counts the
    calibration text when its size is asked: its tokens per estimated token are known
    before any request was sent or any reply reported usage."""
    fake_llm.behaviour.n_ctx, fake_llm.behaviour.states_context = 4096, style
    fake_llm.behaviour.tokens_per_estimate = 1.8  # a tokenizer far finer than tiktoken
    estimated = count_tokens(CALIBRATION, "fake-small")
    expected = round(round(estimated * 1.8) / estimated, 3)
    assert limits.server_size(chat_endpoint(), "fake-small") == (4096, expected)
    assert limits.token_scale(chat_endpoint(), "fake-small") == expected
    (asked,) = [r for r in fake_llm.requests if r["path"] == "/tokenize"]
    assert asked["body"] == body
    assert fake_llm.chat_requests() == []


@pytest.mark.parametrize("style", ["llama.cpp", "vllm"])
def test_a_server_that_cannot_count_still_says_its_size(alice, fake_llm, style):
    """No /tokenize (404): the context size stands, the scale waits for replies, the turn
    is built, and the server is not asked again on the next turn."""
    fake_llm.behaviour.n_ctx, fake_llm.behaviour.states_context = 4096, style
    fake_llm.behaviour.tokenize = False
    fake_llm.behaviour.tokens_per_estimate = 1.8
    assert limits.server_size(chat_endpoint(), "fake-small") == (4096, 1.0)
    conversation = conversation_create(user=alice, model="fake-small")
    for _ in range(2):
        built = context.build(conversation=conversation, user_text="Hello")
        assert built.report["budget"] == 4096 and built.report["token_scale"] is None
    assert paths(fake_llm).count("/tokenize") == 1


def test_a_server_that_does_not_say_uses_the_setting(fake_llm, settings):
    assert limits.context_tokens(chat_endpoint(), "fake-small") is None
    settings.MODEL_CONTEXT_TOKENS = 8192
    assert limits.context_tokens(chat_endpoint(), "fake-small") == 8192


def test_no_server_no_limit(settings):
    settings.OPENAI_API_KEY = ""
    assert limits.chat_budget(16000, chat_endpoint(), "gpt-4o") == 16000


def test_the_chat_budget_is_the_smaller_of_the_conversations_and_the_servers(alice, fake_llm):
    fake_llm.behaviour.n_ctx, fake_llm.behaviour.states_context = 4096, "llama.cpp"
    conversation = conversation_create(user=alice)
    built = context.build(conversation=conversation, user_text="Hello")
    assert built.report["budget"] == 4096 and conversation.effective_budget == 16000
    small = conversation_create(user=alice, context_budget=2000)
    assert context.build(conversation=small, user_text="Hello").report["budget"] == 2000


def test_a_chat_request_refused_for_length_is_not_built_again(alice, fake_llm):
    """The server never said its size; its 400 (llama.cpp's body) teaches it, and the next
    build of the same turn is under it, so the same request is not sent twice."""
    fake_llm.behaviour.n_ctx = 300
    conversation = conversation_create(user=alice)
    message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user" if i % 2 == 0 else "assistant", "word " * 40) for i in range(20)
        ],
    )
    built = context.build(conversation=conversation, user_text="And now?")

    async def send():
        return await OpenAIProvider().stream(
            built.messages, model="gpt-4o", report=built.report, max_tokens=built.report["reserve"]
        )

    with pytest.raises(UpstreamError) as failed:
        asyncio.run(send())
    assert failed.value.kind == "refused"
    assert limits.context_tokens(chat_endpoint(), "gpt-4o") == 300
    again = context.build(conversation=conversation, user_text="And now?")
    assert again.report["budget"] == 300 < built.report["budget"]
    assert again.messages != built.messages


def long_chat(conversation, n=24, words=60):
    message_create_many(
        conversation=conversation,
        messages=[
            NewMessage("user" if i % 2 == 0 else "assistant", f"Message {i}: " + "plan " * words)
            for i in range(n)
        ],
    )


def summary_answer(body):
    size = len(json.loads(body["messages"][-1]["content"])["messages"])
    return {
        "summary": f"Over {size} messages: " + "the user and the assistant made plans; " * 7,
        "topics": [],
        "decisions": [],
        "action_items": [],
        "facts": [],
        "open_questions": [],
    }


def fits(body, behaviour):
    return _prompt_tokens(body, behaviour) + _max_tokens(body) <= behaviour.n_ctx


@pytest.fixture
def conversation(alice):
    return conversation_create(user=alice)


def test_summary_batches_are_split_until_each_request_fits(conversation, fake_llm):
    """24 messages of 60 words against a 2,048-token server that says so: split before
    sending, recursively, every request within the context with its answer's cap."""
    fake_llm.behaviour.n_ctx, fake_llm.behaviour.states_context = 2048, "llama.cpp"
    fake_llm.behaviour.json_reply = summary_answer
    long_chat(conversation)
    run = services.summary_run_execute(
        run_id=services.summary_run_start(conversation=conversation).pk
    )
    assert run.status == "done" and run.method == "json_schema" and run.error == "", run.error
    requests = fake_llm.chat_requests()
    assert len(requests) > 2
    assert all(fits(r["body"], fake_llm.behaviour) for r in requests)
    assert Summary.objects.get(is_current=True).message_count == 24


def test_a_refusal_for_length_splits_and_never_repeats_a_request(conversation, fake_llm):
    """The server does not say its size: the first request is refused (400); the limit is
    learned and the halves sized under it; no request body is sent twice."""
    fake_llm.behaviour.n_ctx = 2048
    fake_llm.behaviour.json_reply = summary_answer
    long_chat(conversation)
    run = services.summary_run_execute(
        run_id=services.summary_run_start(conversation=conversation).pk
    )
    assert run.status == "done" and run.method == "json_schema", run.error
    assert "json_schema, 24 messages: the server refused the request for its length" in run.error
    bodies = [json.dumps(r["body"], sort_keys=True) for r in fake_llm.chat_requests()]
    assert len(bodies) == len(set(bodies))
    refused = [r for r in fake_llm.chat_requests() if not fits(r["body"], fake_llm.behaviour)]
    assert len(refused) == 1


def test_a_summary_run_starts_before_the_tail_outgrows_the_servers_window(alice, fake_llm):
    """The budget-share trigger reads the budget the chat builds with: on a 4,096-token
    server a conversation of the default budget (16,000) is folded once its tail holds 30 %
    of 4,096, not of 16,000 (by then the window would have dropped messages unsummarised)."""
    long_chat(conversation_create(user=alice), n=4, words=400)  # ~1,600 tokens, 4 messages
    (unknown,) = Conversation.objects.all()
    assert services.conversation_after_turn(conversation=unknown) is None  # size not known
    fake_llm.behaviour.n_ctx, fake_llm.behaviour.states_context = 4096, "llama.cpp"
    cache.clear()  # the server's answer without a size is kept for a while
    assert services.conversation_after_turn(conversation=unknown) is not None


def test_the_trigger_counts_the_tail_in_the_servers_tokens(alice, fake_llm):
    """A tail under 30 % of a 4,096-token server by our estimate but over it in the server's
    tokens (its tokenizer counts 1.8 of them for each of ours) is folded now: the chat's
    window, sized in the server's tokens, would otherwise drop it unsummarised."""
    conversation = conversation_create(user=alice)
    long_chat(conversation, n=4, words=240)
    estimated = sum(count_tokens(m.content, "gpt-4o-mini") for m in conversation.messages.all())
    share = 4096 * services.summaries.TRIGGER_BUDGET_SHARE
    assert share / 1.8 < estimated < share  # folded only in the server's tokens
    fake_llm.behaviour.n_ctx, fake_llm.behaviour.states_context = 4096, "llama.cpp"
    fake_llm.behaviour.tokens_per_estimate = 1.0
    assert services.conversation_after_turn(conversation=conversation) is None
    cache.clear()
    finer_llama_cpp(fake_llm, 4096)
    assert services.conversation_after_turn(conversation=conversation) is not None


def trip_chat(conversation):
    """The trip conversation's 25 turns, each answered; no reply reported usage."""
    reply = "Good idea: I have noted that for the trip, and we can plan the rest next."
    message_create_many(
        conversation=conversation,
        messages=[
            message
            for text in TRIP_TURNS
            for message in (NewMessage("user", text), NewMessage("assistant", reply))
        ],
    )


def finer_llama_cpp(fake, n_ctx):
    """A llama.cpp server whose tokenizer counts 1.8 tokens for each of tiktoken's."""
    fake.behaviour.n_ctx, fake.behaviour.states_context = n_ctx, "llama.cpp"
    fake.behaviour.tokens_per_estimate = 1.8


def test_the_first_turn_is_sized_in_the_servers_tokens(alice, fake_llm):
    """A 1,024-token server: the first request of a long conversation fits it, the limit
    scaled by the probe's count; sized by the estimate alone it would be refused (400)."""
    finer_llama_cpp(fake_llm, 1024)
    conversation = conversation_create(user=alice, model="smollm2-135m")
    trip_chat(conversation)
    built = context.build(conversation=conversation, user_text="What have we planned?")
    scale = limits.token_scale(chat_endpoint(), "smollm2-135m")
    assert scale >= 1.8 and built.report["token_scale"] == scale
    assert built.report["limit"] == int((1024 - built.report["reserve"]) / scale)
    assert built.report["blocks"][1]["name"] == "history"  # as much of it as fits

    async def send():
        reply = await OpenAIProvider().stream(
            built.messages,
            model="smollm2-135m",
            report=built.report,
            max_tokens=built.report["reserve"],
        )
        return "".join([delta async for delta in reply])

    assert asyncio.run(send())
    (request,) = fake_llm.chat_requests()
    assert fits(request["body"], fake_llm.behaviour)


def test_the_first_summary_batch_is_sized_in_the_servers_tokens(conversation, fake_llm):
    """The run splits its batch by the probe's scale before sending: no request is refused
    for its length, every one fits the server's 2,048 tokens with its answer's cap."""
    finer_llama_cpp(fake_llm, 2048)
    fake_llm.behaviour.json_reply = summary_answer
    long_chat(conversation)
    run = services.summary_run_execute(
        run_id=services.summary_run_start(conversation=conversation).pk
    )
    assert run.status == "done" and run.method == "json_schema", run.error
    assert "refused" not in run.error
    requests = fake_llm.chat_requests()
    assert len(requests) > 2
    assert all(fits(r["body"], fake_llm.behaviour) for r in requests)


def test_the_server_counts_once_per_probe_not_per_turn(alice, fake_llm):
    """Turns and a summary run on the same server and model: /tokenize once, with the
    context probe, cached as long as it is."""
    finer_llama_cpp(fake_llm, 4096)
    fake_llm.behaviour.json_reply = summary_answer
    conversation = conversation_create(user=alice, model="fake-small")
    trip_chat(conversation)
    for text in ("Where to?", "And after?"):
        context.build(conversation=conversation, user_text=text)
    services.summary_run_execute(run_id=services.summary_run_start(conversation=conversation).pk)
    assert fake_llm.chat_requests()
    assert paths(fake_llm).count("/tokenize") == 1
    cache.delete(f"llm-context:{chat_endpoint().base_url}:fake-small")  # its time is up
    context.build(conversation=conversation, user_text="And then?")
    assert paths(fake_llm).count("/tokenize") == 2
