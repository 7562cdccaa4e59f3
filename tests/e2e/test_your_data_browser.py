"""Forgetting in a real browser: deleting a conversation with "forget too", and "Forget
everything" with its typed confirmation (a plain form: done here with JavaScript off)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in
from tests.support.live_server import create_user

pytestmark = pytest.mark.e2e
PASSWORD = "fiona-password-1"


@pytest.fixture(scope="module")
def fiona(live_env):
    create_user(live_env["env"], "fiona", PASSWORD)
    return "fiona"


def facts_of(db_rows, username: str, like: str) -> list[tuple]:
    return db_rows(
        "SELECT f.text FROM memory_fact f JOIN auth_user u ON u.id = f.user_id "
        "WHERE u.username = ? AND f.text LIKE ?",
        (username, f"%{like}%"),
    )


def tell(page, text: str) -> None:
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    expect(page.locator('[data-role="assistant"]').last).to_contain_text("Noted")


def test_deleting_a_conversation_can_forget_what_was_learned_there(
    page, app_server, fake_upstream, db_rows, fiona
):
    """The confirmation offers "forget too", ticked; deleting forgets the fact learned there."""
    fake_upstream.behaviour.reply = "Noted."
    fake_upstream.behaviour.interval = 0.0
    log_in(page, app_server, username=fiona, password=PASSWORD)
    tell(page, "My daughter's name is Zenobia.")
    for _ in range(50):
        if facts_of(db_rows, fiona, "Zenobia"):
            break
        page.wait_for_timeout(100)
    assert facts_of(db_rows, fiona, "Zenobia")

    page.get_by_role("complementary", name="Conversations").locator("summary").first.click()
    page.get_by_role("link", name="Delete…").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Delete")
    forget = page.get_by_label("Also forget what was learned here")
    expect(forget).to_be_checked()
    expect(page.locator("#forget-detail")).to_contain_text("1 memory came only")
    page.get_by_role("button", name="Delete").click()
    page.wait_for_url(f"{app_server.url}/")
    expect(page.locator("#page-notice")).to_contain_text("Deleted “")  # said after it
    assert facts_of(db_rows, fiona, "Zenobia") == []


def test_forget_everything_needs_the_typed_confirmation(
    browser, page, app_server, fake_upstream, db_rows, fiona
):
    """Without JavaScript: a wrong phrase is an error that keeps the boxes; the right one
    forgets every memory and comes back to the profile saying so."""
    fake_upstream.behaviour.reply = "Noted."
    fake_upstream.behaviour.interval = 0.0
    log_in(page, app_server, username=fiona, password=PASSWORD)
    tell(page, "I live in Grenoble.")
    for _ in range(50):
        if facts_of(db_rows, fiona, "Grenoble"):
            break
        page.wait_for_timeout(100)
    assert facts_of(db_rows, fiona, "Grenoble")

    context = browser.new_context(java_script_enabled=False)
    plain = context.new_page()
    log_in(plain, app_server, username=fiona, password=PASSWORD)
    plain.goto(f"{app_server.url}/profile/")
    plain.get_by_role("link", name="Forget everything…").click()
    expect(plain.get_by_role("heading", level=1)).to_have_text("Forget everything?")
    plain.get_by_label('Type "forget everything" to confirm').fill("forget it all")
    clear_preferences = plain.get_by_label("Also clear the preferences you typed on your profile")
    clear_preferences.check()
    plain.get_by_role("button", name="Forget everything").click()
    expect(plain.get_by_role("alert")).to_contain_text('Type "forget everything" exactly')
    expect(clear_preferences).to_be_checked()
    assert facts_of(db_rows, fiona, "Grenoble")

    plain.get_by_label('Type "forget everything" to confirm').fill("forget everything")
    plain.get_by_role("button", name="Forget everything").click()
    expect(plain.get_by_role("status")).to_contain_text("Everything was forgotten")
    assert plain.url == f"{app_server.url}/profile/"
    assert facts_of(db_rows, fiona, "") == []
    context.close()
