"""A new user's chat in a real browser: log in, send, watch the reply stream, reload."""

import re
import time

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in, open_report

pytestmark = pytest.mark.e2e


def test_a_reply_streams_in_pieces_and_survives_a_reload(page, app_server, fake_upstream, db_rows):
    """Enter sends; the reply grows piece by piece; after a reload both messages are there."""
    fake_upstream.behaviour.reply = " ".join(f"piece{i}" for i in range(40))
    fake_upstream.behaviour.interval = 0.05
    log_in(page, app_server)

    box = page.get_by_role("textbox", name="Message")
    box.fill("Hello from the browser")
    box.press("Enter")

    page.wait_for_url(re.compile(r"/c/\d+/$"))
    user = page.locator('[data-role="user"] .content')
    expect(user).to_have_text("Hello from the browser")
    assistant = page.locator('[data-role="assistant"]').last
    expect(assistant).to_contain_text("piece0")
    seen = set()
    for _ in range(100):
        seen.add(assistant.inner_text())
        if "piece39" in assistant.inner_text():
            break
        page.wait_for_timeout(30)
    assert len(seen) >= 3, "the reply should arrive in several pieces"
    expect(assistant).to_contain_text("piece39")
    expect(box).to_have_value("")

    page.reload()
    expect(page.locator('[data-role="user"] .content')).to_have_text("Hello from the browser")
    expect(page.locator('[data-role="assistant"]').last).to_contain_text("piece39")
    expect(page.get_by_text("What the model saw").last).to_be_visible()
    assert db_rows("SELECT role, status FROM chat_message ORDER BY id")[-2:] == [
        ("user", "complete"),
        ("assistant", "complete"),
    ]


def test_a_reply_that_ended_before_the_tab_connected_is_shown_whole(
    page, browser, app_server, fake_upstream, db_rows
):
    """A tab loaded while a reply streams, whose socket connects only once the reply has
    ended (its end reached no socket of that tab), shows the whole reply, not "Thinking…"."""
    fake_upstream.behaviour.reply = " ".join(f"word{i}" for i in range(40))
    fake_upstream.behaviour.interval = 0.1
    log_in(page, app_server)
    box = page.get_by_role("textbox", name="Message")
    box.fill("Forty words, please")
    box.press("Enter")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    expect(page.locator('[data-role="assistant"]').last).to_contain_text("word1")
    last_reply = "SELECT status FROM chat_message WHERE role = 'assistant' ORDER BY id DESC LIMIT 1"
    seen = []

    def once_the_reply_ended(route):
        seen.append(db_rows(last_reply))  # the page was rendered before this
        deadline = time.monotonic() + 20
        while db_rows(last_reply) != [("complete",)] and time.monotonic() < deadline:
            time.sleep(0.05)
        route.continue_()

    other = page.context.new_page()
    other.route(re.compile(r"/static/js/chat\.js"), once_the_reply_ended)
    other.goto(page.url)
    assert seen[0] == [("streaming",)], "the tab was to load while the reply streamed"
    expect(other.locator('[data-role="assistant"]').last).to_contain_text("word39")
    expect(other.locator('[data-role="assistant"] .thinking')).to_have_count(0)
    expect(other.get_by_role("button", name="Send")).to_be_visible()


def test_what_the_model_saw_loads_its_blocks_when_opened(page, app_server, fake_upstream):
    """The page carries only the summary; opening it fetches the report's blocks, on a reply
    just streamed and on one from a reload."""
    fake_upstream.behaviour.reply = "A short answer."
    log_in(page, app_server)
    box = page.get_by_role("textbox", name="Message")
    box.fill("What did you see?")
    box.press("Enter")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    for reload in (False, True):
        if reload:
            page.reload()
        reply = page.locator('[data-role="assistant"]').last
        expect(reply.locator(".context-report summary")).to_have_text("What the model saw")
        expect(reply.locator(".report-blocks")).to_have_count(0)
        report = open_report(reply)
        rows = report.locator(".report-blocks tbody tr")
        expect(rows.first).to_contain_text("System prompt")
        expect(rows.last).to_contain_text("Your message")
        expect(report.locator(".report-totals")).to_contain_text(
            re.compile(r"[\d,]+ of [\d,]+ tokens")
        )


def test_stop_keeps_the_partial_reply(page, app_server, fake_upstream, db_rows):
    """The Stop button appears while streaming and keeps what was written."""
    fake_upstream.behaviour.reply = " ".join(f"long{i}" for i in range(400))
    fake_upstream.behaviour.interval = 0.03
    log_in(page, app_server)
    box = page.get_by_role("textbox", name="Message")
    box.fill("Write a lot")
    page.get_by_role("button", name="Send").click()
    assistant = page.locator('[data-role="assistant"]').last
    expect(assistant).to_contain_text("long3")
    page.get_by_role("button", name="Stop").click()
    expect(assistant).to_contain_text("Stopped")
    expect(page.get_by_role("button", name="Stop")).to_be_hidden()
    status, content = db_rows(
        "SELECT status, content FROM chat_message WHERE role = 'assistant' ORDER BY id DESC"
    )[0]
    assert status == "interrupted" and content.startswith("long0") and "long399" not in content


def test_shift_enter_adds_a_line_and_empty_messages_are_refused(page, app_server):
    """Shift+Enter keeps typing; an empty Send says so and sends nothing."""
    log_in(page, app_server)
    box = page.get_by_role("textbox", name="Message")
    box.press("Enter")
    expect(page.get_by_role("alert")).to_have_text("The message is empty.")
    box.type("first line")
    box.press("Shift+Enter")
    box.type("second line")
    expect(box).to_have_value("first line\nsecond line")
    assert page.url.endswith("/")


def test_a_reply_cut_at_its_length_limit_continues(page, app_server, fake_upstream, db_rows):
    """The server stops at max_tokens (the reply reserve, 1024): the page says the reply was
    cut short and offers Continue, which appends the rest to the same reply."""
    fake_upstream.behaviour.reply = " ".join(f"w{i}" for i in range(1100))
    fake_upstream.behaviour.interval = 0.0
    fake_upstream.behaviour.chunk_words = 50
    log_in(page, app_server)
    box = page.get_by_role("textbox", name="Message")
    box.fill("Write more than fits")
    box.press("Enter")
    assistant = page.locator('[data-role="assistant"]').last
    expect(assistant).to_contain_text("Cut short: The reply reached its length limit")
    expect(assistant).not_to_contain_text("w1024")
    fake_upstream.behaviour.reply = "and that is the end."
    assistant.get_by_role("button", name="Continue").click()
    expect(assistant).to_contain_text("and that is the end.")
    expect(assistant).to_contain_text("w1023")
    expect(assistant.get_by_role("button", name="Continue")).to_have_count(0)
    status, content = db_rows(
        "SELECT status, content FROM chat_message WHERE role = 'assistant' ORDER BY id DESC"
    )[0]
    assert status == "complete" and content.startswith("w0 ") and content.endswith("the end.")
    fake_upstream.behaviour.chunk_words = 1
