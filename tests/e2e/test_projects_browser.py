"""Projects in the browser (issue 37): a project made on its page, a new chat started in it,
and the sidebar grouping the project's conversation under it, at a desktop's and a phone's
width (the phone's drawer included)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in

pytestmark = pytest.mark.e2e

WIDTHS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
def quick_reply(fake_upstream):
    fake_upstream.behaviour.reply = "Sow them in rows 30 cm apart."
    fake_upstream.behaviour.interval = 0.0
    return fake_upstream


@pytest.mark.parametrize("width", sorted(WIDTHS))
def test_create_a_project_start_a_chat_in_it_and_find_it_grouped(
    browser, app_server, quick_reply, width
):
    context = browser.new_context(viewport=WIDTHS[width])
    page = context.new_page()
    log_in(page, app_server)
    name = f"Garden {width}"
    if width == "phone":
        page.get_by_role("button", name="Menu").click()
    page.get_by_role("link", name="Projects").click()
    new = page.locator("details.project-new")
    if new.get_attribute("open") is None:
        new.locator("summary").click()
    page.get_by_label("Name").fill(name)
    page.get_by_label("Instructions").fill("Give quantities in metric units.")
    page.get_by_role("button", name="Create project").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(name)
    expect(page.locator(".project-instructions")).to_contain_text("metric units")

    page.get_by_role("link", name="New chat in this project").click()
    expect(page.locator("#conversation-title")).to_have_text(f"New conversation in {name}")
    box = page.get_by_role("textbox", name="Message")
    box.fill("When do I sow the beans?")
    box.press("Enter")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    expect(page.locator('[data-role="assistant"]').last).to_contain_text("30 cm apart")
    expect(page.locator(".conversation-header .conversation-project")).to_have_text(name)

    if width == "phone":
        page.get_by_role("button", name="Conversations").click()
        expect(page.get_by_role("complementary", name="Conversations")).to_be_visible()
    group = page.locator(".project-group", has_text=name)
    expect(group).to_have_class(re.compile("current-project"))
    current = group.locator("li.current .conversation-link")
    expect(current).to_be_visible()
    expect(current).to_contain_text("When do I sow")
    # Collapsible: closed, its conversations are hidden; open again, they show.
    group.locator("summary").first.click()
    expect(current).to_be_hidden()
    group.locator("summary").first.click()
    expect(current).to_be_visible()
    if width == "phone":
        page.get_by_role("button", name="Close the conversation list").click()

    # The instructions reached the model after the user's own preferences.
    report = page.locator('[data-role="assistant"] .context-report').last
    report.locator("summary").click()
    expect(report).to_contain_text("Project instructions")
    expect(report).to_contain_text("Give quantities in metric units.")
    bodies = [str(r["body"]) for r in quick_reply.chat_requests()]
    assert any("When do I sow" in body and "metric units" in body for body in bodies)
    context.close()


def test_a_conversation_moves_into_a_project_from_its_menu(browser, app_server, quick_reply):
    context = browser.new_context(viewport=WIDTHS["desktop"])
    page = context.new_page()
    log_in(page, app_server)
    page.goto(f"{app_server.url}/projects/new/")
    page.get_by_label("Name").fill("Moving target")
    page.get_by_role("button", name="Create project").click()
    page.goto(f"{app_server.url}/")
    box = page.get_by_role("textbox", name="Message")
    box.fill("A loose conversation about tomatoes, beans and the long summer ahead")
    box.press("Enter")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    expect(page.locator("#sidebar-list li.current")).to_contain_text("A loose")
    item = page.locator("#sidebar-list li.current")
    item.locator(".conversation-actions summary").click()
    item.get_by_label("Project").select_option(label="Moving target")
    item.get_by_role("button", name="Move").click()
    group = page.locator(".project-group", has_text="Moving target")
    expect(group.locator(".conversation-link")).to_contain_text("A loose conversation")
    # The header gains the project's badge and stays one row: Settings is not left alone on
    # a second one (the title is cut short instead).
    badge = page.locator(".conversation-header .conversation-project")
    expect(badge).to_have_text("Moving target")
    title = page.locator("#conversation-title").bounding_box()
    settings = page.locator(".conversation-settings-panel > summary").bounding_box()
    assert abs((title["y"] + title["height"] / 2) - (settings["y"] + settings["height"] / 2)) < 8
    context.close()


def test_deleting_a_project_says_what_became_of_its_conversations(page, app_server, quick_reply):
    log_in(page, app_server)
    page.goto(f"{app_server.url}/projects/new/")
    page.get_by_label("Name").fill("Short lived")
    page.get_by_role("button", name="Create project").click()
    page.get_by_text("Manage", exact=True).click()
    page.get_by_role("link", name="Delete…").click()
    expect(
        page.get_by_label("Keep them: move the conversations and memories to everywhere")
    ).to_be_checked()
    page.get_by_role("button", name="Delete the project").click()
    expect(page.get_by_role("status")).to_contain_text(
        "The project “Short lived” was deleted: its conversations and memories now reach"
    )


def test_the_remembered_cue_in_a_project_leads_to_what_the_project_knows(
    page, app_server, quick_reply
):
    """What a project's conversation learns is the project's: its "Remembered" cue links to
    the project's knowledge page, which lists it (issue 37)."""
    log_in(page, app_server)
    page.goto(f"{app_server.url}/projects/new/")
    page.get_by_label("Name").fill("Family notes")
    page.get_by_role("button", name="Create project").click()
    page.get_by_role("link", name="New chat in this project").click()
    # The composer's script is deferred: Enter pressed before it runs is a newline in the box
    # (what a user would see too, and send again); the CI beside a benchmark typed that early.
    page.wait_for_load_state()
    box = page.get_by_role("textbox", name="Message")
    box.fill("My daughter's name is Ada.")
    box.press("Enter")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    notice = page.locator(".memory-notice").last
    expect(notice).to_contain_text("Remembered:")
    expect(notice).to_contain_text("Ada")
    expect(notice.get_by_role("link", name="Your memory")).to_have_count(0)
    notice.get_by_role("link", name="What this project knows").click()
    page.wait_for_url(re.compile(r"/projects/\d+/knowledge/$"))
    expect(page).to_have_title(re.compile("^What Family notes knows"))
    expect(page.locator("main")).to_contain_text("Ada")
