"""Importing a ChatGPT export in a real browser: from "Your data" to the progress shown by
polling, then the conversations in the sidebar; a broken file's error. With
``IMPORT_SHOTS=<dir>`` the page is photographed at both sizes, light and dark."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in
from tests.e2e.site import SCHEMES, VIEWPORTS
from tests.support.live_server import create_user, manage
from tests.userdata.exports import T0, as_json, as_zip, chatgpt_conversation, claude_conversation

pytestmark = pytest.mark.e2e
PASSWORD = "gwen-password-1"


@pytest.fixture(scope="module")
def gwen(live_env):
    create_user(live_env["env"], "gwen", PASSWORD)
    return "gwen"


def export(tmp_path: Path) -> Path:
    path = tmp_path / "chatgpt-export.zip"
    second = chatgpt_conversation(
        ident="c-2",
        title="Workshop move",
        start=T0 + 86400,
        turns=[("user", "We decided to move the workshop to Annecy."), ("assistant", "Annecy.")],
    )
    path.write_bytes(as_zip([chatgpt_conversation(), second]))
    return path


def shots(page, url: str, name: str, again=None) -> None:
    """Each size and scheme: the page again (``again()``, or a reload) under the theme."""
    out = os.environ.get("IMPORT_SHOTS")
    if not out:
        return
    Path(out).mkdir(parents=True, exist_ok=True)
    for size, viewport in VIEWPORTS.items():
        page.set_viewport_size(viewport)
        for scheme in SCHEMES:
            page.context.add_cookies([{"name": "theme", "value": scheme, "url": url}])
            again() if again else page.reload()
            page.wait_for_timeout(300)
            page.screenshot(path=f"{out}/{size}-{scheme}-{name}.png", full_page=True)
    page.set_viewport_size(VIEWPORTS["desktop"])


def test_a_chatgpt_export_imported_from_your_data(
    page, app_server, live_env, gwen, tmp_path, db_rows
):
    """Profile → Import; the upload is received, the job stores it, the page's progress
    follows by polling, and the conversations are in the sidebar with their titles."""
    log_in(page, app_server, username=gwen, password=PASSWORD)
    page.goto(f"{app_server.url}/profile/")
    if os.environ.get("IMPORT_SHOTS"):  # the profile's "Your data", where the link is
        for size, viewport in VIEWPORTS.items():
            page.set_viewport_size(viewport)
            section = page.locator("#your-data")
            section.screenshot(path=f"{os.environ['IMPORT_SHOTS']}/{size}-your-data.png")
        page.set_viewport_size(VIEWPORTS["desktop"])
    page.get_by_role("link", name="Import from ChatGPT or Claude…").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Import conversations")
    shots(page, app_server.url, "import-empty")

    page.get_by_label("Export file").set_input_files(export(tmp_path))
    page.get_by_role("button", name="Import").click()
    expect(page.locator(".notices")).to_contain_text("ChatGPT export received: 2 conversations")
    expect(page.locator(".import").first).to_contain_text("Waiting for the background worker")
    shots(page, app_server.url, "import-waiting")
    if os.environ.get("IMPORT_SHOTS"):  # the progress bars, as the polled fragment shows them
        with sqlite3.connect(live_env["db"]) as connection:
            connection.execute(
                "UPDATE userdata_chatimport SET status='building', imported=2, messages=4, "
                "memory_total=2, memory_done=1 WHERE filename='chatgpt-export.zip'"
            )
        shots(page, app_server.url, "import-building")
        with sqlite3.connect(live_env["db"]) as connection:
            connection.execute(
                "UPDATE userdata_chatimport SET status='queued', imported=0, messages=0, "
                "memory_total=0, memory_done=0 WHERE filename='chatgpt-export.zip'"
            )

    manage("job_worker", "--batch", "--no-startup-delay", env=live_env["env"])
    expect(page.locator(".import").first).to_contain_text(
        "2 conversations imported (4 messages)", timeout=20_000
    )
    expect(page.locator(".import").first).not_to_have_attribute("hx-trigger", "every 2s")
    shots(page, app_server.url, "import-done")

    page.get_by_role("link", name="See them in your conversations").click()
    sidebar = page.get_by_role("complementary", name="Conversations")
    expect(sidebar).to_contain_text("Trip to Lyon")
    expect(sidebar).to_contain_text("Workshop move")
    facts = db_rows(
        "SELECT f.text FROM memory_fact f JOIN auth_user u ON u.id = f.user_id "
        "WHERE u.username = ? AND f.text LIKE '%Zenobia%'",
        (gwen,),
    )
    assert facts  # learned from the imported conversation, as from any


def test_a_broken_file_says_what_is_wrong(page, app_server, gwen, tmp_path):
    log_in(page, app_server, username=gwen, password=PASSWORD)
    page.goto(f"{app_server.url}/account/import/")
    broken = tmp_path / "conversations.json"
    broken.write_text('[{"title": "cut off')

    def upload():
        page.goto(f"{app_server.url}/account/import/")
        page.get_by_label("Export file").set_input_files(broken)
        page.get_by_role("button", name="Import").click()

    upload()
    expect(page.get_by_role("alert")).to_contain_text("The file is not valid JSON")
    shots(page, app_server.url, "import-error", again=upload)


def test_a_claude_export_imported_from_your_data(page, app_server, live_env, gwen, tmp_path):
    """A Claude ``conversations.json`` from the same page: received as Claude's, stored by the
    job with its name, then in the sidebar."""
    log_in(page, app_server, username=gwen, password=PASSWORD)
    page.goto(f"{app_server.url}/account/import/")
    path = tmp_path / "conversations.json"
    path.write_bytes(as_json([claude_conversation()]))
    page.get_by_label("Export file").set_input_files(path)
    page.get_by_role("button", name="Import").click()
    expect(page.locator(".notices")).to_contain_text("Claude export received: 1 conversation")
    manage("job_worker", "--batch", "--no-startup-delay", env=live_env["env"])
    expect(page.locator(".import").first).to_contain_text("1 conversation imported", timeout=20_000)
    shots(page, app_server.url, "import-claude-done")
    page.get_by_role("link", name="See them in your conversations").first.click()
    expect(page.get_by_role("complementary", name="Conversations")).to_contain_text("Garden plans")
