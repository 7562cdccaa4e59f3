"""The user's memory in a real browser: a fact told is noticed under the reply, undone, told
again, found on the Memory page, its source followed (highlighted), edited, and the edit is
what the next reply's model saw; ask first keeps a suggestion out of the context until kept."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.e2e.conftest import PASSWORD, log_in, open_report
from tests.support.live_server import create_user


def send(page, text):
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")


def last_reply_done(page):
    reply = page.locator('[data-role="assistant"]').last
    expect(reply.locator(".context-report")).to_be_attached()
    open_report(reply)
    return reply


def remembered_facts(reply):
    """The facts in a reply's "What the model saw" (memories used)."""
    rows = reply.locator(".report-memories:not(.left-out) li")
    return [text for text in rows.all_text_contents() if text.strip().lower().startswith("fact")]


def test_tell_undo_tell_again_follow_the_source_and_edit(
    browser, app_server, fake_upstream, live_env
):
    fake_upstream.behaviour.reply = "Noted."
    fake_upstream.behaviour.interval = 0.0
    create_user(live_env["env"], "mira", PASSWORD)
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    log_in(page, app_server, username="mira")

    send(page, "My daughter's name is Ada.")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    notice = page.locator(".memory-notice").last
    expect(notice).to_contain_text("Remembered:")
    expect(notice).to_contain_text("Ada")
    notice.get_by_role("button", name="Undo").click()
    expect(notice).to_contain_text("Undone.")
    conversation_url = page.url

    last_reply_done(page)
    send(page, "My daughter's name is Ada.")
    expect(page.locator(".memory-notice:not(.undone)")).to_contain_text("Ada")
    last_reply_done(page)

    page.get_by_role("link", name="Memory", exact=True).click()
    row = page.locator(".memory-item.kind-fact").filter(has_text="Ada")
    expect(row).to_have_count(1)
    row.locator(".source-link").click()
    page.wait_for_url(re.compile(r"/c/\d+/\?highlight=\d+#m\d+$"))
    source = page.locator("article.is-source")
    expect(source).to_contain_text("My daughter's name is Ada.")
    expect(source).to_be_in_viewport()

    page.goto(f"{app_server.url}/memory/")
    row = page.locator(".memory-item.kind-fact").filter(has_text="Ada")
    row.get_by_role("link", name="Edit").click()
    editor = page.get_by_role("textbox", name=re.compile("Edit this fact"))
    editor.fill("Her daughter Ada is seven years old")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".memory-item.kind-fact")).to_contain_text("seven years old")
    expect(page.locator(".memory-item.kind-fact")).to_contain_text("Edited by you")

    page.goto(conversation_url)
    replies = page.locator('[data-role="assistant"]')
    earlier = replies.count()
    send(page, "How old is my daughter Ada?")
    expect(replies).to_have_count(earlier + 1)  # the new reply's report, not the last one's
    reply = last_reply_done(page)
    expect(reply.locator(".context-report")).to_contain_text("seven years old")
    context.close()


def test_ask_first_keeps_a_suggestion_out_of_the_context_until_it_is_kept(
    browser, app_server, fake_upstream, live_env
):
    fake_upstream.behaviour.reply = "Noted."
    fake_upstream.behaviour.interval = 0.0
    create_user(live_env["env"], "nora", PASSWORD)
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    log_in(page, app_server, username="nora")
    page.goto(f"{app_server.url}/profile/")
    page.get_by_label(re.compile("Ask first")).check()
    page.get_by_role("button", name="Save memory mode").click()
    expect(page.locator("#memory")).to_contain_text("asks first")

    page.goto(f"{app_server.url}/")
    send(page, "My favourite colour is green.")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    notice = page.locator(".memory-notice").last
    expect(notice).to_contain_text("Remember this?")
    # Keep / Edit / Discard answer it; no Undo beside them.
    expect(notice.get_by_role("button", name="Keep")).to_be_visible()
    expect(notice.get_by_role("link", name="Edit")).to_be_visible()
    expect(notice.get_by_role("button", name="Discard")).to_be_visible()
    expect(notice.get_by_role("button", name="Undo")).to_have_count(0)
    last_reply_done(page)

    page.goto(f"{app_server.url}/")
    send(page, "What is my favourite colour?")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    reply = last_reply_done(page)
    assert not [text for text in remembered_facts(reply) if "green" in text]
    asking_url = page.url

    page.goto(f"{app_server.url}/memory/")
    suggested = page.locator("#suggested .memory-item").filter(has_text="green")
    expect(suggested).to_have_count(1)
    suggested.get_by_role("button", name="Keep").click()
    expect(page.locator("#suggested .memory-item").filter(has_text="green")).to_have_count(0)

    page.goto(asking_url)
    send(page, "What is my favourite colour again?")
    expect(page.locator('[data-role="assistant"]')).to_have_count(2)
    reply = last_reply_done(page)
    expect(reply.locator(".report-memories").first).to_contain_text("green")
    texts = reply.locator(".report-memories li").all_text_contents()
    assert [text for text in remembered_facts(reply) if "green" in text], texts
    context.close()


def test_a_tab_on_another_conversation_hears_what_was_remembered(
    browser, app_server, fake_upstream, live_env
):
    """The notice reaches the user's tab on another conversation as a note linking to the
    reply where it was learned (its Undo is there)."""
    fake_upstream.behaviour.reply = "Noted."
    fake_upstream.behaviour.interval = 0.0
    create_user(live_env["env"], "noor", PASSWORD)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    elsewhere = context.new_page()
    log_in(elsewhere, app_server, username="noor")
    send(elsewhere, "Hello there.")
    elsewhere.wait_for_url(re.compile(r"/c/\d+/$"))
    last_reply_done(elsewhere)

    talking = context.new_page()
    talking.goto(f"{app_server.url}/")
    send(talking, "My daughter's name is Ada.")
    talking.wait_for_url(re.compile(r"/c/\d+/$"))
    expect(talking.locator(".memory-notice").last).to_contain_text("Ada")
    assert talking.locator(".memory-toast").count() == 0

    toast = elsewhere.locator(".memory-toast")
    expect(toast).to_contain_text("Remembered")
    expect(toast).to_contain_text("Ada")
    assert elsewhere.evaluate("document.scrollingElement.scrollWidth") <= 390
    toast.get_by_role("link").click()
    elsewhere.wait_for_url(re.compile(r"/c/\d+/\?highlight=\d+#m\d+$"))
    # The reply the notice sits under, with its Undo.
    expect(elsewhere.locator("article.is-source")).to_contain_text("Noted.")
    notice = elsewhere.locator(".memory-notice").filter(has_text="Ada")
    expect(notice.get_by_role("button", name="Undo")).to_be_visible()
    context.close()
