"""/v1 under the servers the app is run with (daphne for `make run`, uvicorn for `make
serve`), through its own short middleware (``api.asgi``): the real openai client, streamed and
not, over real HTTP; the offline provider answers (no model server is configured)."""

from __future__ import annotations

import openai
import pytest

from tests.support.live_server import SERVERS, ServerProcess, manage

pytestmark = pytest.mark.e2e  # real server processes

COUNT = (
    "from chat.models import Conversation, Message; "
    "print(Conversation.objects.filter(user__username='alice').count(), "
    "Message.objects.filter(conversation__user__username='alice').count())"
)


@pytest.mark.parametrize("server", SERVERS)
async def test_the_openai_client_works_against_a_real_server(keyed_live_env, server):
    env, secret = keyed_live_env
    before = [int(n) for n in manage("shell", "-c", COUNT, env=env).split()[-2:]]
    app = ServerProcess(env, server=server).start()
    try:
        api = openai.AsyncOpenAI(api_key=secret, base_url=f"{app.url}/v1", max_retries=0)
        model = (await api.models.list()).data[0].id
        question = {"role": "user", "content": f"I run on {server}."}
        stream = await api.chat.completions.create(model=model, messages=[question], stream=True)
        text = "".join(
            [chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices]
        )
        history = [question, {"role": "assistant", "content": text}]
        raw = await api.chat.completions.with_raw_response.create(
            model=model, messages=[*history, {"role": "user", "content": "And then?"}]
        )
        answer = raw.parse().choices[0].message.content
        wrong = openai.AsyncOpenAI(api_key="mc-wrong", base_url=f"{app.url}/v1", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            await wrong.models.list()
    finally:
        app.stop()
    assert text and answer
    assert raw.headers["X-Memorychat-Conversation"].isdigit()
    after = [int(n) for n in manage("shell", "-c", COUNT, env=env).split()[-2:]]
    # One conversation, continued by the second request: two turns, four messages.
    assert [a - b for a, b in zip(after, before, strict=True)] == [1, 4]
    log = app.log_tail(20_000)
    assert "Traceback" not in log, log
