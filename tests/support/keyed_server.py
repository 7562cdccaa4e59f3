"""The fixture the key-only surfaces' live-server tests share (``/v1`` in tests/api, ``/mcp``
in tests/mcp): a database a real server process runs on, with alice and an API key of hers.
Registered for every test by ``tests/conftest.py``."""

from __future__ import annotations

import pytest

from tests.support.live_server import create_user, manage, project_env

KEY_SECRET = (
    "from django.contrib.auth import get_user_model; from profiles.keys import key_create; "
    "print(key_create(user=get_user_model().objects.get(username='alice'), name='t').secret)"
)


@pytest.fixture(scope="module")
def keyed_live_env(tmp_path_factory) -> tuple[dict[str, str], str]:
    """A migrated SQLite database of the module's own holding alice: the environment to run a
    server in, and the secret of alice's key."""
    db = tmp_path_factory.mktemp("keyed") / "db.sqlite3"
    env = project_env(DATABASE_URL=f"sqlite:///{db}")
    manage("migrate", "--noinput", env=env)
    create_user(env, "alice", "alice-password-1")
    secret = manage("shell", "-c", KEY_SECRET, env=env).split()[-1]  # after the shell's notes
    return env, secret
