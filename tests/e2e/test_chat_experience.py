"""What users expect of a chat, tried in a real browser: the theme, a reply that looks the same
while it streams and after, code that can be copied, regenerate and edit, a welcoming start."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in

pytestmark = pytest.mark.e2e

MARKDOWN = (
    "Here is **the plan** for you.\n\n- first item\n- second item\n\n"
    "```python\ndef total(prices):\n    return sum(prices)\n```\n\nThat is all, enjoy."
)


def send(page, text):
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")


def wait_for_reply(page):
    reply = page.locator('[data-role="assistant"]').last
    expect(reply.locator(".context-report")).to_be_attached()
    return reply


def background(page) -> str:
    return page.evaluate("getComputedStyle(document.body).backgroundColor")


def test_dark_mode_follows_the_system_and_the_choice_is_remembered(browser, app_server):
    context = browser.new_context(color_scheme="dark")
    page = context.new_page()
    log_in(page, app_server)
    dark = background(page)
    assert dark != "rgb(245, 246, 248)"  # not the light background
    choice = page.get_by_label("Theme")
    # System / Light / Dark, saying which one the system gives.
    expect(choice).to_have_value("")
    expect(choice.locator("option").first).to_have_text("System (dark)")
    choice.select_option("light")
    assert background(page) == "rgb(245, 246, 248)"
    page.goto(f"{app_server.url}/profile/")  # remembered, on every page
    assert background(page) == "rgb(245, 246, 248)"
    expect(page.get_by_label("Theme")).to_have_value("light")
    page.get_by_label("Theme").select_option("")  # back to the system's (dark)
    assert background(page) == dark
    assert "theme=" not in page.evaluate("document.cookie")  # following the system again
    context.close()


def test_a_streamed_reply_looks_the_same_while_it_streams_and_after(
    page, app_server, fake_upstream
):
    """A "Thinking…" indicator until the first token; then rendered Markdown at every step
    (never raw ** or ```), the last streamed HTML equal to the stored reply's; Send is Stop
    meanwhile and Enter sends nothing (no error)."""
    fake_upstream.behaviour.reply = MARKDOWN
    fake_upstream.behaviour.interval = 0.08
    fake_upstream.behaviour.stall_before = 1.5
    log_in(page, app_server)
    page.evaluate(
        """() => {
        window.seen = [];
        new MutationObserver(() => {
          const node = document.querySelector('.message.status-streaming .content');
          if (node && node.innerHTML) window.seen.push([node.innerHTML, node.innerText]);
        }).observe(document.getElementById('messages'),
                   {subtree: true, childList: true, characterData: true});
    }"""
    )
    try:
        send(page, "Make a plan")
        expect(page.get_by_text("Thinking…")).to_be_visible()
        expect(page.get_by_role("button", name="Stop")).to_be_visible()
        expect(page.get_by_role("button", name="Send")).to_have_count(0)
        box = page.get_by_role("textbox", name="Message")
        box.fill("Not now")
        box.press("Enter")
        expect(page.locator("#composer-error")).to_be_hidden()
        expect(box).to_have_value("Not now")
        reply = wait_for_reply(page)
    finally:
        fake_upstream.behaviour.stall_before = 0.0
    expect(page.get_by_text("Thinking…")).to_have_count(0)
    expect(page.get_by_role("button", name="Send")).to_be_visible()
    seen = page.evaluate("window.seen")
    assert len(seen) >= 3, "the reply should show in several steps"
    assert all("**" not in text and "```" not in text for _, text in seen)
    final = reply.locator(".content").evaluate("el => el.innerHTML")
    assert seen[-1][0] == final
    assert "<strong>the plan</strong>" in final and "<li>first item</li>" in final


def test_code_blocks_have_a_language_and_copy(browser, app_server, fake_upstream):
    fake_upstream.behaviour.reply = MARKDOWN
    fake_upstream.behaviour.interval = 0.0
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=app_server.url)
    page = context.new_page()
    log_in(page, app_server)
    send(page, "Code please")
    reply = wait_for_reply(page)
    block = reply.locator(".code-block")
    expect(block.locator(".code-lang")).to_have_text("python")
    expect(block.locator("pre .k").first).to_have_text("def")  # highlighted on the server
    block.get_by_role("button", name="Copy").click()
    expect(block.get_by_role("button", name="Copied")).to_be_visible()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == "def total(prices):\n    return sum(prices)\n"
    context.close()


def test_a_reply_is_regenerated_and_an_edited_question_resent(page, app_server, fake_upstream):
    """Regenerate keeps the first answer reachable ("1 / 2"), each with its own report; Edit
    puts the last question in the box, and sending it answers the new wording."""
    fake_upstream.behaviour.interval = 0.0
    fake_upstream.behaviour.reply = "The first answer."
    log_in(page, app_server)
    send(page, "Line one\n    indented line two")
    reply = wait_for_reply(page)
    question = page.locator('[data-role="user"] .content').last
    assert question.inner_text() == "Line one\n    indented line two"

    fake_upstream.behaviour.reply = "The second answer."
    reply.get_by_role("button", name="Regenerate").click()
    expect(page.locator('[data-role="assistant"]').last).to_contain_text("The second answer.")
    reply = page.locator('[data-role="assistant"]').last
    expect(reply.locator(".version-count")).to_have_text("2 / 2")
    reply.get_by_role("button", name="Previous version").click()
    expect(reply.locator(".version-count")).to_have_text("1 / 2")
    expect(reply).to_contain_text("The first answer.")
    expect(reply.get_by_text("What the model saw")).to_be_visible()
    reply.get_by_role("button", name="Next version").click()
    expect(reply).to_contain_text("The second answer.")

    fake_upstream.behaviour.reply = "An answer about the new wording."
    page.locator('[data-role="user"]').last.get_by_role("button", name="Edit").click()
    box = page.get_by_role("textbox", name="Message")
    expect(box).to_have_value("Line one\n    indented line two")
    expect(page.get_by_text("Editing your last message.")).to_be_visible()
    box.fill("A better question")
    box.press("Enter")
    expect(page.locator('[data-role="user"] .content').last).to_have_text("A better question")
    expect(page.locator('[data-role="assistant"]').last).to_contain_text("the new wording")
    expect(page.locator('[data-role="assistant"] .version-count').last).to_have_text("3 / 3")
    expect(page.locator('[data-role="user"]')).to_have_count(1)
    page.reload()
    expect(page.locator('[data-role="user"] .content').last).to_have_text("A better question")
    expect(page.locator('[data-role="assistant"] .version-count').last).to_have_text("3 / 3")


def test_a_welcoming_start(page, app_server, fake_upstream):
    """The blank page suggests a start and has the message box focused; a suggestion fills
    it; Tab goes from the header to the box; Escape closes a menu."""
    fake_upstream.behaviour.interval = 0.0
    fake_upstream.behaviour.reply = "Glad to help."
    log_in(page, app_server)
    box = page.get_by_role("textbox", name="Message")
    expect(box).to_be_focused()
    suggestions = page.locator(".suggestions button")
    expect(suggestions.first).to_be_visible()
    suggestions.first.click()
    assert box.input_value() and box.evaluate("el => el === document.activeElement")

    page.get_by_role("button", name="Log out").focus()
    page.keyboard.press("Tab")
    expect(box).to_be_focused()

    send(page, "Hello")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    wait_for_reply(page)
    settings = page.locator(".conversation-settings-panel")
    settings.locator(":scope > summary").click()
    expect(settings.get_by_role("button", name="Save")).to_be_visible()
    page.keyboard.press("Escape")
    expect(settings.get_by_role("button", name="Save")).to_be_hidden()
