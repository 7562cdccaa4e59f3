"""A reply outlives the page that asked for it: reload, close the tab, a second tab's Stop."""

import re
import time

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in

pytestmark = pytest.mark.e2e

LAST_REPLY = (
    "SELECT status, content FROM chat_message WHERE role = 'assistant' ORDER BY id DESC LIMIT 1"
)


def ask(page, app_server, text: str):
    log_in(page, app_server)
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    return page.locator('[data-role="assistant"]').last


def test_a_reload_mid_reply_shows_it_so_far_then_the_rest(page, app_server, fake_upstream, db_rows):
    """The reply goes on through the reload: the new page shows the text so far, then the
    rest streams in, each word once; the reply is stored complete."""
    words = [f"part{i}" for i in range(60)]
    fake_upstream.behaviour.reply = " ".join(words)
    fake_upstream.behaviour.interval = 0.08
    assistant = ask(page, app_server, "A long answer, please")
    expect(assistant).to_contain_text("part3")
    page.reload()
    assistant = page.locator('[data-role="assistant"]').last
    expect(assistant).to_contain_text("part59", timeout=30_000)
    shown = assistant.locator(".content").inner_text().split()
    assert shown == words, "every word once, in order"
    expect(page.get_by_role("button", name="Send")).to_be_visible()
    assert db_rows(LAST_REPLY) == [("complete", " ".join(words))]


def test_a_closed_tab_finds_the_whole_answer_when_reopened(
    page, app_server, fake_upstream, db_rows
):
    """Close the tab mid-reply: the reply is written to its end meanwhile, and the page
    opened again shows it whole."""
    words = [f"bit{i}" for i in range(40)]
    fake_upstream.behaviour.reply = " ".join(words)
    fake_upstream.behaviour.interval = 0.05
    assistant = ask(page, app_server, "Tell me everything")
    expect(assistant).to_contain_text("bit2")
    url = page.url
    context = page.context
    page.close()
    for _ in range(200):
        if db_rows(LAST_REPLY)[0][0] != "streaming":
            break
        time.sleep(0.05)
    assert db_rows(LAST_REPLY) == [("complete", " ".join(words))]
    again = context.new_page()
    again.goto(url)
    expect(again.locator('[data-role="assistant"]').last).to_contain_text("bit39")
    expect(again.get_by_text("Interrupted")).to_have_count(0)


def test_stop_in_a_second_tab_stops_the_reply(page, app_server, fake_upstream, db_rows):
    """A second tab opened mid-reply shows it streaming, and its Stop stops it."""
    fake_upstream.behaviour.reply = " ".join(f"more{i}" for i in range(400))
    fake_upstream.behaviour.interval = 0.03
    assistant = ask(page, app_server, "Go on and on")
    expect(assistant).to_contain_text("more3")
    other = page.context.new_page()
    other.goto(page.url)
    expect(other.locator('[data-role="assistant"]').last).to_contain_text("more10")
    other.get_by_role("button", name="Stop").click()
    expect(other.locator('[data-role="assistant"]').last).to_contain_text("Stopped")
    expect(assistant).to_contain_text("Stopped")
    status, content = db_rows(LAST_REPLY)[0]
    assert status == "interrupted" and "more399" not in content
