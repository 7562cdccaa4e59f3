"""/v1/chat/completions and /v1/models through the real openai client against the real ASGI
app: a key's user chats through the same turn as the web page, streamed or not; the history
a client sends continues the conversation it matches, or starts one the web UI shows."""

import openai
import pytest
from django.conf import settings

from chat.models import Conversation, Message
from tests.api.conftest import client, http, rows

pytestmark = pytest.mark.django_db(transaction=True)


async def test_models_lists_the_default_model_and_the_servers(alice_key, fake_llm):
    listed = await client(alice_key).models.list()
    names = [m.id for m in listed.data]
    assert names[0] == settings.OPENAI_MODEL and {"fake-large", "fake-small"} <= set(names)


async def test_a_completion_is_a_stored_turn_the_web_ui_shows(alice, alice_key, fake_llm):
    fake_llm.behaviour.reply = "Noted: your cat is called Miso."
    api = client(alice_key)
    answer = await api.chat.completions.create(
        model=settings.OPENAI_MODEL,
        messages=[
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "My cat is called Miso."},
        ],
    )
    assert answer.choices[0].message.content == fake_llm.behaviour.reply
    assert answer.choices[0].finish_reason == "stop" and answer.usage.total_tokens > 0
    [conversation] = await rows(Conversation, user=alice)
    assert conversation.title and not conversation.temporary
    stored = await rows(Message, conversation=conversation)
    assert [(m.role, m.content) for m in stored] == [
        ("user", "My cat is called Miso."),
        ("assistant", fake_llm.behaviour.reply),
    ]
    # The model got the app's own instructions, not the client's system message.
    sent = fake_llm.chat_requests()[-1]["body"]["messages"]
    assert sent[-1] == {"role": "user", "content": "My cat is called Miso."}
    assert all("You are terse." not in str(m["content"]) for m in sent)


async def test_the_whole_history_continues_the_conversation_it_matches(alice, alice_key, fake_llm):
    api = client(alice_key)
    model = settings.OPENAI_MODEL
    history = [{"role": "user", "content": "First question"}]
    first = await api.chat.completions.create(model=model, messages=history)
    history += [
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "Second question"},
    ]
    await api.chat.completions.create(model=model, messages=history)
    [conversation] = await rows(Conversation, user=alice)
    assert [m.content for m in await rows(Message, conversation=conversation, role="user")] == [
        "First question",
        "Second question",
    ]
    # A history the app does not hold starts a new conversation holding it.
    other = [
        {"role": "user", "content": "Elsewhere"},
        {"role": "assistant", "content": "A reply another app gave"},
        {"role": "user", "content": "Go on"},
    ]
    response = await http().post("/chat/completions", json={"model": model, "messages": other})
    assert response.status_code == 401  # no key: nothing stored
    made = await api.chat.completions.with_raw_response.create(model=model, messages=other)
    new_id = int(made.headers["X-Memorychat-Conversation"])
    assert new_id != conversation.pk
    held = await rows(Message, conversation_id=new_id)
    assert [(m.role, m.content) for m in held][:3] == [
        ("user", "Elsewhere"),
        ("assistant", "A reply another app gave"),
        ("user", "Go on"),
    ]


async def test_a_reply_many_conversations_share_still_continues_the_right_one(
    alice, alice_key, fake_llm
):
    """A model's stock answer ending a dozen newer conversations does not hide the one the
    history sent belongs to (each candidate must hold the turn before it too)."""
    api = client(alice_key)
    model = settings.OPENAI_MODEL
    fake_llm.behaviour.reply = "Sure, happy to help."
    history = [{"role": "user", "content": "The first question"}]
    await api.chat.completions.create(model=model, messages=history)
    for n in range(12):
        await api.chat.completions.create(
            model=model, messages=[{"role": "user", "content": f"Another chat {n}"}]
        )
    history += [
        {"role": "assistant", "content": "Sure, happy to help."},
        {"role": "user", "content": "The follow-up"},
    ]
    made = await api.chat.completions.with_raw_response.create(model=model, messages=history)
    continued = int(made.headers["X-Memorychat-Conversation"])
    users = await rows(Message, conversation_id=continued, role="user")
    assert [m.content for m in users] == ["The first question", "The follow-up"]
    assert len(await rows(Conversation, user=alice)) == 13


async def test_streamed_chunks_concatenate_to_the_stored_reply(alice, alice_key, fake_llm):
    fake_llm.behaviour.reply = "One two three four five six seven."
    stream = await client(alice_key).chat.completions.create(
        model=settings.OPENAI_MODEL,
        messages=[{"role": "user", "content": "Count"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    pieces, finish, usage = [], None, None
    async for chunk in stream:
        if chunk.choices:
            pieces.append(chunk.choices[0].delta.content or "")
            finish = chunk.choices[0].finish_reason or finish
        usage = chunk.usage or usage
    [reply] = await rows(Message, conversation__user=alice, role="assistant")
    assert "".join(pieces) == reply.content == fake_llm.behaviour.reply
    assert len([p for p in pieces if p]) > 1 and finish == "stop" and usage.completion_tokens


async def test_the_raw_stream_is_server_sent_events_ending_in_done(alice_key, fake_llm):
    body = {
        "model": settings.OPENAI_MODEL,
        "messages": [{"role": "user", "content": "Hi"}],
        "stream": True,
    }
    response = await http(alice_key).post("/chat/completions", json=body)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = response.text.split("\n\n")
    assert events[-2] == "data: [DONE]" and all(e.startswith("data: ") for e in events[:-1])


async def test_temporary_keeps_no_memory(alice, alice_key, fake_llm):
    api = client(alice_key)
    await api.chat.completions.create(
        model=settings.OPENAI_MODEL,
        messages=[{"role": "user", "content": "I live in Lisbon."}],
        extra_body={"temporary": True},
    )
    [conversation] = await rows(Conversation, user=alice)
    assert conversation.temporary
    async with http(alice_key) as raw:
        response = await raw.post(
            "/chat/completions",
            json={"model": settings.OPENAI_MODEL, "messages": [{"role": "user", "content": "x"}]},
            headers={"X-Memorychat-Temporary": "true"},
        )
    assert response.status_code == 200
    assert await rows(Conversation, user=alice, temporary=False) == []


async def test_one_users_key_never_reaches_anothers_conversation(
    alice, bob, alice_key, bob_key, fake_llm
):
    model = settings.OPENAI_MODEL
    first = await client(alice_key).chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Alice's secret plan"}]
    )
    # Bob sends Alice's exact history: a new conversation of his own, holding his copy.
    history = [
        {"role": "user", "content": "Alice's secret plan"},
        {"role": "assistant", "content": first.choices[0].message.content},
        {"role": "user", "content": "and then?"},
    ]
    await client(bob_key).chat.completions.create(model=model, messages=history)
    [alices] = await rows(Conversation, user=alice)
    assert len(await rows(Message, conversation=alices)) == 2
    [bobs] = await rows(Conversation, user=bob)
    assert len(await rows(Message, conversation=bobs)) == 4


async def test_a_turn_refused_by_the_limits_is_429_with_retry_after(alice_key, fake_llm, settings):
    settings.MEMORYCHAT_MESSAGES_PER_MINUTE = 1
    api = client(alice_key)
    body = {"model": settings.OPENAI_MODEL, "messages": [{"role": "user", "content": "one"}]}
    await api.chat.completions.create(**body)
    for stream in (False, True):
        with pytest.raises(openai.RateLimitError) as refused:
            await api.chat.completions.create(**body, stream=stream)
        assert int(refused.value.response.headers["Retry-After"]) > 0
        assert refused.value.body["code"] == "rate_limited"
    assert len(await rows(Conversation)) == 1  # the refused turns left no conversation


async def test_an_upstream_failure_is_502_with_a_plain_message(alice_key, fake_llm, settings):
    settings.OPENAI_MAX_RETRIES = 0
    fake_llm.behaviour.fail_status, fake_llm.behaviour.fail_times = 500, 10
    api = client(alice_key)
    body = {"model": settings.OPENAI_MODEL, "messages": [{"role": "user", "content": "hi"}]}
    with pytest.raises(openai.APIStatusError) as failed:
        await api.chat.completions.create(**body)
    assert failed.value.status_code == 502 and failed.value.body["type"] == "upstream_error"
    assert "<" not in failed.value.message
    with pytest.raises(openai.APIError):  # streamed: an error event in the stream
        async for _ in await api.chat.completions.create(**body, stream=True):
            pass


async def test_offline_the_offline_provider_answers(alice, alice_key):
    answer = await client(alice_key).chat.completions.create(
        model=settings.OPENAI_MODEL, messages=[{"role": "user", "content": "Anyone there?"}]
    )
    [reply] = await rows(Message, conversation__user=alice, role="assistant")
    assert answer.choices[0].message.content == reply.content and reply.model == "offline"


async def test_after_a_failed_turn_the_client_continues_the_same_conversation(
    alice, alice_key, fake_llm, settings
):
    """The 502 is not retried by the client on its own; the next request, without the failed
    exchange, continues the conversation that holds it."""
    settings.OPENAI_MAX_RETRIES = 0
    api = client(alice_key)
    model = settings.OPENAI_MODEL
    history = [{"role": "user", "content": "Hello"}]
    first = await api.chat.completions.create(model=model, messages=history)
    history.append({"role": "assistant", "content": first.choices[0].message.content})
    fake_llm.behaviour.fail_status, fake_llm.behaviour.fail_times = 500, 1
    retrying = openai.AsyncOpenAI(api_key=alice_key, base_url=api.base_url, http_client=http())
    with pytest.raises(openai.APIStatusError) as failed:
        await retrying.chat.completions.create(
            model=model, messages=[*history, {"role": "user", "content": "This one fails"}]
        )
    assert failed.value.status_code == 502
    await api.chat.completions.create(
        model=model, messages=[*history, {"role": "user", "content": "Again, please"}]
    )
    [conversation] = await rows(Conversation, user=alice)
    users = await rows(Message, conversation=conversation, role="user")
    assert [m.content for m in users] == ["Hello", "This one fails", "Again, please"]


async def test_after_the_turn_the_memory_learns_and_a_new_conversation_recalls_it(
    alice, alice_key, fake_llm
):
    from chat import live
    from memory.models import Decision

    api = client(alice_key)
    model = settings.OPENAI_MODEL
    await api.chat.completions.create(
        model=model,
        messages=[{"role": "user", "content": "We decided to go to Porto in August."}],
        extra_body={"temporary": True},
    )
    await live.settle()
    assert await rows(Decision, user=alice) == []  # temporary: nothing learned
    await api.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "We decided to go to Porto in August."}]
    )
    await live.settle()
    [decision] = await rows(Decision, user=alice)
    assert "Porto" in decision.what
    await api.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Where are we going this summer?"}]
    )
    prompt = fake_llm.chat_requests()[-1]["body"]["messages"]
    # The memory block goes last, before the question (the prompt's cacheable prefix first).
    assert "Porto" not in prompt[-1]["content"].rsplit("\n", 1)[-1]  # not the question's word
    assert "Porto in August" in " ".join(str(m["content"]) for m in prompt)
    assert len(await rows(Conversation, user=alice)) == 3


async def test_limits_are_shared_with_the_web_chat(alice, alice_key, fake_llm, settings):
    from tests.chat.helpers import connected, frames_until

    settings.MEMORYCHAT_MESSAGES_PER_MINUTE = 1
    await client(alice_key).chat.completions.create(
        model=settings.OPENAI_MODEL, messages=[{"role": "user", "content": "one"}]
    )
    [conversation] = await rows(Conversation, user=alice)
    tab = await connected(alice, conversation.pk)
    await tab.send_json_to({"type": "send", "text": "two", "client_id": "w-1"})
    [error] = await frames_until(tab, "error")
    assert error["code"] == "rate_limited"
    await tab.disconnect()
