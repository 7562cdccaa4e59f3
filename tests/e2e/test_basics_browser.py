"""The chat's basics in a real browser, at a desktop's and a phone's width: finding an old
conversation by a word said in it (the sidebar and the Ctrl+K palette), sharing one and
opening the link signed out, then revoking it, and exporting one as Markdown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in
from tests.e2e.site import VIEWPORTS
from tests.support.live_server import create_user

pytestmark = pytest.mark.e2e
PASSWORD = "hana-password-1"


@pytest.fixture(scope="module")
def hana(live_env):
    create_user(live_env["env"], "hana", PASSWORD)
    return "hana"


@pytest.fixture(params=sorted(VIEWPORTS))
def sized(request, browser):
    context = browser.new_context(viewport=VIEWPORTS[request.param], accept_downloads=True)
    yield context.new_page(), request.param == "phone"
    context.close()


def tell(page, text: str) -> int:
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    expect(page.locator('[data-role="assistant"] .message-tools').last).to_be_attached()
    return int(re.search(r"/c/(\d+)/", page.url)[1])


def test_find_share_revoke_and_export(sized, app_server, hana, browser):
    page, phone = sized
    log_in(page, app_server, hana, PASSWORD)
    word = "marzipans" if phone else "pistachios"
    conversation = tell(page, f"I am allergic to {word} since childhood")
    page.goto(f"{app_server.url}/")

    # Ctrl+K, a word form of what was said: the snippet marks it; Enter-free, a click opens it.
    page.keyboard.press("Control+k")
    palette = page.locator("#search-palette")
    expect(palette).to_be_visible()
    page.locator("#palette-q").fill(word.rstrip("s"))
    hit = palette.locator("#palette-results a:has(mark)").first
    expect(hit.locator("mark")).to_have_text(word)
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Escape")
    expect(palette).to_be_hidden()
    page.keyboard.press("Control+k")
    hit.click()
    page.wait_for_url(re.compile(rf"/c/{conversation}/\?found=\d+"))
    expect(page.locator(".message.is-source")).to_contain_text(word)

    # The sidebar's search finds it too.
    if phone:
        page.get_by_role("button", name="Conversations").click()
    page.get_by_role("searchbox", name="Search conversations").fill(word)
    expect(page.locator(".sidebar-message-hits mark").first).to_have_text(word)

    # Share, open signed out, revoke: then the link is not found.
    page.goto(f"{app_server.url}/c/{conversation}/")
    page.get_by_role("link", name=re.compile("^Share")).click()
    page.get_by_role("button", name="Create a link").click()
    link = page.locator("#share-link").input_value()
    stranger = browser.new_context()
    other = stranger.new_page()
    response = other.goto(link)
    assert response.status == 200
    expect(other.locator(".shared-copy")).to_contain_text(f"allergic to {word}")
    expect(other.locator("textarea")).to_have_count(0)
    page.get_by_role("button", name="Stop sharing").click()
    assert other.goto(link).status == 404
    stranger.close()

    # Markdown download.
    with page.expect_download() as download:
        page.get_by_role("link", name="As Markdown").click()
    text = Path(download.value.path()).read_text(encoding="utf-8")
    assert f"allergic to {word}" in text and text.startswith("# ")
