"""The level per subject, tried as a new user would: expert talk about programming and beginner
questions about cooking give two levels on the profile and two instructions in "What the model
saw"; a level set by hand wins."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.e2e.conftest import PASSWORD, log_in, open_report
from tests.support.live_server import create_user

EXPERT = [
    "My asyncio event loop stalls when a coroutine awaits a thread pool future under load.",
    "Would a mutex around the cache invalidation fix the deadlock, or is it a race condition?",
    "Does the migration's new index hold a lock long enough to block writes in the transaction?",
]
NOVICE = [
    "What is a roux? My recipe for mac and cheese says to make one first.",
    "How long do I boil pasta for? I don't understand the packet, it says simmer.",
    "What does it mean to deglaze a pan? Is it normal that my onions burn?",
]


def send_and_wait(page, text, count):
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")
    replies = page.locator('[data-role="assistant"]')
    expect(replies).to_have_count(count)
    reply = replies.last
    expect(reply.locator(".context-report")).to_be_attached()
    return reply


def test_two_subjects_two_levels_and_a_level_set_by_hand(
    browser, app_server, fake_upstream, live_env
):
    fake_upstream.behaviour.reply = "Noted."
    fake_upstream.behaviour.interval = 0.0
    create_user(live_env["env"], "lin", PASSWORD)
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    log_in(page, app_server, username="lin")
    for n, text in enumerate(EXPERT + NOVICE, start=1):
        reply = send_and_wait(page, text, n)
        if n == 1:
            page.wait_for_url(re.compile(r"/c/\d+/$"))

    reply = send_and_wait(page, "Why would a coroutine deadlock on that mutex?", 7)
    report = open_report(reply)
    expect(report).to_contain_text("expert in programming")
    reply = send_and_wait(page, "How do I make a sauce for the pasta tonight?", 8)
    report = open_report(reply)
    expect(report).to_contain_text("new to cooking")
    expect(report).not_to_contain_text("expert in programming")

    conversation_url = page.url
    page.goto(f"{app_server.url}/profile/")
    expect(page.locator("#domain-programming")).to_contain_text("Expert")
    expect(page.locator("#domain-cooking")).to_contain_text("Beginner")
    expect(page.locator("#domain-programming svg.spark polyline")).to_have_count(1)

    page.locator("#id_cooking").select_option("expert")
    page.get_by_role("button", name="Save levels").click()
    expect(page.locator("#domains")).to_contain_text("Levels saved.")
    expect(page.locator("#domain-cooking")).to_contain_text("set by you")

    page.goto(conversation_url)
    report = open_report(send_and_wait(page, "What is a roux, again?", 9))
    expect(report).to_contain_text("expert in cooking")
    expect(report).to_contain_text("set by the user")

    context.close()
