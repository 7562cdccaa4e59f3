"""The profile page in a real browser: HTMX swaps in place, and the page works without JS."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.support.live_server import ServerProcess, create_user, manage, project_env

pytestmark = pytest.mark.e2e

PASSWORD = "alice-password-1"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    env = project_env(DATABASE_URL=f"sqlite:///{tmp_path_factory.mktemp('profiles')}/db.sqlite3")
    manage("migrate", "--noinput", env=env)
    create_user(env, "alice", PASSWORD)
    server = ServerProcess(env).start()
    yield server
    server.stop()


def open_profile(browser, server, *, javascript=True):
    context = browser.new_context(java_script_enabled=javascript)
    page = context.new_page()
    page.goto(f"{server.url}/accounts/login/?next=/profile/")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{server.url}/profile/")
    return page


def test_preferences_save_in_place_and_update_the_preview(browser, server):
    """With HTMX, saving swaps the form section and the prompt preview without a reload."""
    page = open_profile(browser, server)
    page.evaluate("window.notReloaded = true")
    page.get_by_label("Level of detail").select_option("brief")
    page.get_by_role("button", name="Save preferences").click()
    page.get_by_text("Preferences saved.").wait_for()
    assert "Length: brief" in page.locator("#prompt-preview").inner_text()
    assert page.evaluate("window.notReloaded") is True


def test_errors_show_inline_in_the_browser(browser, server):
    """An invalid topic list shows its error next to the field, in place."""
    page = open_profile(browser, server)
    page.evaluate("window.notReloaded = true")
    page.get_by_label("Topics of interest").fill(", ".join(f"t{i}" for i in range(30)))
    page.get_by_role("button", name="Save preferences").click()
    page.locator("#preferences .errorlist", has_text="At most 20 topics").wait_for()
    assert page.evaluate("window.notReloaded") is True


def test_the_memory_switch_flips_in_place(browser, server):
    """Turning memory off updates the mode and the learned-style notice out of band."""
    page = open_profile(browser, server)
    page.get_by_label("Off: remember nothing").check()
    page.get_by_role("button", name="Save memory mode").click()
    page.locator("#memory").get_by_text("Saved.").wait_for()
    assert "Memory is off" in page.locator("#learned-style").inner_text()
    page.get_by_label("Ask first").check()
    page.get_by_role("button", name="Save memory mode").click()
    page.locator("#memory").get_by_text("asks first").wait_for()
    assert "Memory is off" not in page.locator("#learned-style").inner_text()


def test_reset_asks_in_the_page_then_resets_in_place(browser, server):
    """With HTMX the reset button asks in the page's own dialog (not the browser's
    confirm()), then resets in place and says so."""
    page = open_profile(browser, server)
    browser_dialogs = []
    page.on("dialog", lambda dialog: (browser_dialogs.append(dialog.message), dialog.dismiss()))
    page.get_by_role("button", name="Reset learned style…").click()
    asking = page.get_by_role("dialog")
    expect(asking).to_contain_text("Forget the style learned from your messages?")
    expect(asking.get_by_role("button", name="Cancel")).to_be_focused()
    asking.get_by_role("button", name="Cancel").click()
    expect(asking).to_be_hidden()
    page.get_by_role("button", name="Reset learned style…").click()
    asking.get_by_role("button", name="Reset").click()
    page.get_by_text("Your learned style was reset.").first.wait_for()
    expect(page.locator("#page-notice")).to_have_text("The learned style was reset.")
    assert browser_dialogs == []


def test_the_page_works_without_javascript(browser, server):
    """Without JS: forms post and redirect back, reset goes through a confirmation page."""
    page = open_profile(browser, server, javascript=False)
    page.get_by_label("Response format").select_option("tables")
    page.get_by_role("button", name="Save preferences").click()
    page.get_by_text("Preferences saved.").wait_for()
    assert "Format: use tables" in page.locator("#prompt-preview").inner_text()

    page.get_by_role("button", name="Reset learned style…").click()
    page.wait_for_url(f"{server.url}/profile/reset-style/**")
    page.get_by_label("Yes, forget the style learned from my messages").check()
    page.get_by_role("button", name="Reset learned style").click()
    page.get_by_text("Your learned style was reset.").wait_for()
