"""/mcp under the servers the app is run with (daphne for `make run`, uvicorn for `make
serve`): the SDK's session manager starts with the first request (daphne sends no lifespan
events), answers over real HTTP, and stops cleanly with uvicorn's lifespan shutdown."""

from __future__ import annotations

import pytest

from tests.mcp.conftest import call, client
from tests.support.live_server import SERVERS, ServerProcess, create_user, manage, project_env

pytestmark = pytest.mark.e2e  # real server processes


@pytest.fixture(scope="module")
def live_env(tmp_path_factory):
    db = tmp_path_factory.mktemp("mcp") / "db.sqlite3"
    env = project_env(DATABASE_URL=f"sqlite:///{db}")
    manage("migrate", "--noinput", env=env)
    create_user(env, "alice", "alice-password-1")
    secret = manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; from profiles.keys import key_create; "
        "print(key_create(user=get_user_model().objects.get(username='alice'), name='t').secret)",
        env=env,
    ).split()[-1]  # after the shell's own notes
    return env, secret


@pytest.mark.parametrize("server", SERVERS)
async def test_the_sdk_client_works_against_a_real_server(live_env, server):
    env, secret = live_env
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
