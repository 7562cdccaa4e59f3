"""llm.providers.OpenAIProvider's streams against the fake model server: replies reuse one
connection, and a server slow to end its body does not hold a finished reply."""

import time

from llm.providers import OpenAIProvider

MESSAGES = [{"role": "user", "content": "Hello?"}]


async def stream_text(provider, **kwargs) -> tuple[str, str | None]:
    stream = await provider.stream(MESSAGES, model="fake-large", **kwargs)
    text = "".join([delta async for delta in stream])
    return text, stream.finish_reason


async def test_streamed_replies_reuse_one_connection(fake_llm):
    """The body is read to its end after [DONE], so the connection goes back to the pool:
    a new one per reply costs a connect and, to a real server, a TLS handshake."""
    fake_llm.behaviour.reply = "one two three"
    provider = OpenAIProvider()
    for _ in range(3):
        assert await stream_text(provider) == ("one two three", "stop")
    assert len({r["peer"] for r in fake_llm.chat_requests()}) == 1


async def test_a_body_that_does_not_end_does_not_hold_the_reply(fake_llm):
    fake_llm.behaviour.reply = "all here"
    fake_llm.behaviour.end_delay = 3.0
    began = time.monotonic()
    assert await stream_text(OpenAIProvider()) == ("all here", "stop")
    assert time.monotonic() - began < 1.5
