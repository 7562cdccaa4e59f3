"""/mcp under the servers the app is run with (daphne for `make run`, uvicorn for `make
serve`): the SDK's session manager starts with the first request (daphne sends no lifespan
events), answers over real HTTP, and stops cleanly with uvicorn's lifespan shutdown."""

from __future__ import annotations

import pytest

from tests.mcp.conftest import call, client
from tests.support.live_server import SERVERS, ServerProcess

pytestmark = pytest.mark.e2e  # real server processes


@pytest.mark.parametrize("server", SERVERS)
async def test_the_sdk_client_works_against_a_real_server(keyed_live_env, server):
    env, secret = keyed_live_env
    app = ServerProcess(env, server=server).start()
    try:
        async with client(secret, url=f"{app.url}/mcp") as session:
            remembered = await call(
                session, "remember", kind="fact", text=f"I run on {server}", category="technical"
            )
            listed = (await call(session, "list_memories", query=server))["memories"]
        with pytest.raises(ExceptionGroup):
            async with client("mc-wrong", url=f"{app.url}/mcp") as session:
                await session.list_tools()
    finally:
        app.stop()
    assert remembered["outcome"] == "remembered"
    assert [m["text"] for m in listed] == [f"I run on {server}"]
    assert listed[0]["created_at"]
    log = app.log_tail(20_000)
    assert "Traceback" not in log, log
