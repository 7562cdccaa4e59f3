"""A conversation's ⋯ menu in the sidebar: its panel (rename, archive, forget, delete) is sent
as the text of a <noscript> and made into elements by static/js/chat.js when the menu first
opens; without scripts the browser shows the same forms as they are."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in
from tests.e2e.test_chat_fixes import start_conversation

pytestmark = pytest.mark.e2e


@pytest.fixture
def quick_reply(fake_upstream):
    fake_upstream.behaviour.reply = "Sure. Here is a **short** answer."
    fake_upstream.behaviour.interval = 0.0
    return fake_upstream


def test_a_menu_gets_its_panel_when_first_opened_by_keyboard(page, app_server, quick_reply):
    """No panel is in the page before a menu opens; Enter on ⋯ opens it with its forms, Tab
    goes on into the Title box, Escape closes it and gives the focus back to ⋯; opened
    again, it has one panel, not two."""
    log_in(page, app_server)
    start_conversation(page, "Menus made on demand")
    page.reload()
    item = page.locator("#sidebar-list li.current")
    expect(item.locator("noscript")).to_have_count(1)
    expect(page.locator("#sidebar-list .actions-panel")).to_have_count(0)

    summary = item.locator("summary")
    summary.focus()
    page.keyboard.press("Enter")
    panel = item.locator(".actions-panel")
    expect(panel).to_be_visible()
    expect(item.locator("noscript")).to_have_count(0)
    expect(item.get_by_label("Title")).to_have_value("Menus made on demand")
    page.keyboard.press("Tab")
    expect(item.get_by_label("Title")).to_be_focused()

    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(summary).to_be_focused()
    page.keyboard.press("Enter")
    expect(panel).to_be_visible()
    expect(item.locator(".actions-panel")).to_have_count(1)


def test_a_menu_of_a_list_swapped_in_by_the_search_still_renames(page, app_server, quick_reply):
    """The search swaps the list in (htmx parses it with scripting off, so its <noscript>
    holds elements): the menu opens on its panel and Rename renames."""
    log_in(page, app_server)
    start_conversation(page, "Swapped list item")
    with page.expect_response(lambda response: "q=Swapped" in response.url):
        page.locator("#conversation-search").fill("Swapped list")
    item = page.locator("#sidebar-list li[data-conversation]", has_text="Swapped list item")
    expect(page.locator("#sidebar-list li[data-conversation]")).to_have_count(1)
    page.wait_for_timeout(100)  # the swap settles after the response
    item.locator("summary").click()
    expect(item.locator(".actions-panel")).to_have_count(1)
    item.get_by_label("Title").fill("Renamed after a search")
    item.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Renamed after a search")


def test_without_scripts_the_menu_renames_and_archives(browser, app_server):
    """Scripts off: the composer's form starts a conversation, its ⋯ menu shows the forms
    (CSRF-protected plain posts) and Rename, then Archive, work."""
    context = browser.new_context(java_script_enabled=False)
    plain = context.new_page()
    log_in(plain, app_server)
    plain.get_by_role("button", name="Send").click()
    plain.wait_for_url(re.compile(r"/c/\d+/$"))
    item = plain.locator("#sidebar-list li.current")
    item.locator("summary").click()
    expect(item.locator(".actions-panel")).to_be_visible()
    # Rename, pin, archive (and move, once the user has a project): each with its token.
    forms = item.locator(".actions-panel form").count()
    assert forms >= 3 and item.locator('input[name="csrfmiddlewaretoken"]').count() == forms
    item.get_by_label("Title").fill("Renamed without scripts")
    item.get_by_role("button", name="Rename").click()
    expect(plain.get_by_role("heading", level=1)).to_have_text("Renamed without scripts")

    item = plain.locator("#sidebar-list li.current")
    item.locator("summary").click()
    item.get_by_role("button", name="Archive").click()
    plain.wait_for_url(f"{app_server.url}/")
    expect(plain.locator("#sidebar-list li", has_text="Renamed without scripts")).to_have_count(0)
    context.close()
