"""Issue 14's "broken today" list, each tried in a real browser as a user would."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import PASSWORD, log_in
from tests.support.live_server import manage

pytestmark = pytest.mark.e2e

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 900}


@pytest.fixture
def quick_reply(fake_upstream):
    fake_upstream.behaviour.reply = "Sure. Here is a **short** answer."
    fake_upstream.behaviour.interval = 0.0
    return fake_upstream


def start_conversation(page, text="Hello there"):
    """Send a first message from the blank page; wait for the reply to be stored."""
    page.wait_for_load_state("load")  # chat.js is deferred: Enter before it only adds a line
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    expect(page.locator('[data-role="assistant"] .context-report').last).to_be_attached()
    # The list has the new conversation (its title came with the first message).
    expect(page.locator("#sidebar-list li.current")).to_contain_text(text[:10])
    return int(re.search(r"/c/(\d+)/$", page.url).group(1))


def no_horizontal_overflow(page) -> bool:
    return page.evaluate(
        "document.documentElement.scrollWidth <= window.innerWidth"
        " && document.body.scrollWidth <= window.innerWidth"
    )


def test_typing_in_the_rename_or_budget_box_keeps_the_menu_and_the_text(
    page, app_server, quick_reply
):
    """The sidebar search listens to its own box only: typing a title or a budget, then
    waiting past the search's 300 ms, keeps the menu open and what was typed."""
    log_in(page, app_server)
    start_conversation(page, "Rename me please")
    item = page.locator("#sidebar-list li.current")
    item.locator("summary").click()
    title = item.get_by_label("Title")
    title.fill("A new title being typed")
    page.wait_for_timeout(700)
    expect(title).to_be_visible()
    expect(title).to_have_value("A new title being typed")

    page.locator(".conversation-settings-panel > summary").click()
    page.locator(".conversation-settings-panel").get_by_text("Advanced").click()
    budget = page.get_by_label("At most, each time (tokens)")
    budget.fill("4096")
    page.wait_for_timeout(700)
    expect(budget).to_be_visible()
    expect(budget).to_have_value("4096")
    expect(title).to_have_value("A new title being typed")


def test_show_archived_works_after_archiving_and_unarchiving(page, app_server, quick_reply):
    """After Archive, "Show archived" lists the archived conversation (no 405), and after
    Unarchive there, "Show active" lists it again."""
    log_in(page, app_server)
    start_conversation(page, "Archive this one")
    page.locator("#sidebar-list li.current summary").click()
    page.locator("#sidebar-list li.current").get_by_role("button", name="Archive").click()
    expect(page.locator("#sidebar-list li.current")).to_have_count(0)
    show = page.get_by_role("link", name="Show archived")
    assert "/archive/" not in (show.get_attribute("href") or "")
    show.click()
    archived = page.locator("#sidebar-list li", has_text="Archive this one")
    expect(archived).to_be_visible()
    archived.locator("summary").click()
    archived.get_by_role("button", name="Unarchive").click()
    expect(page.locator("#sidebar-list li", has_text="Archive this one")).to_have_count(0)
    page.get_by_role("link", name="Show active").click()
    expect(page.locator("#sidebar-list li", has_text="Archive this one")).to_be_visible()


def test_on_a_phone_the_list_slides_out_and_nothing_is_wider_than_the_screen(
    browser, app_server, quick_reply
):
    """Below 720 px: a Conversations button opens the list as a drawer (Escape closes it),
    the header fits, the composer stays on screen, and a long unbroken string in a message
    wraps instead of widening the page."""
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    log_in(page, app_server)
    start_conversation(page, "Phone check " + "x" * 300)
    assert no_horizontal_overflow(page)
    header = page.locator("header.topbar").bounding_box()
    assert header["width"] <= PHONE["width"] and header["height"] < 80
    composer = page.get_by_role("textbox", name="Message").bounding_box()
    assert composer["y"] + composer["height"] <= PHONE["height"]

    sidebar = page.get_by_role("complementary", name="Conversations")
    expect(sidebar).to_be_hidden()
    page.get_by_role("button", name="Conversations").click()
    expect(sidebar).to_be_visible()
    expect(sidebar.get_by_role("link", name="New conversation")).to_be_visible()
    for _ in range(50):  # slid in (the page's CSP allows no string evaluation: poll here)
        if (
            page.evaluate("() => document.getElementById('sidebar').getBoundingClientRect().left")
            >= 0
        ):
            break
        page.wait_for_timeout(50)
    box = sidebar.bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"]
    page.keyboard.press("Escape")
    expect(sidebar).to_be_hidden()

    page.get_by_role("button", name="Menu").click()
    expect(page.get_by_role("link", name="Profile")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.get_by_role("link", name="Profile")).to_be_hidden()
    context.close()


def test_a_long_unbroken_string_does_not_widen_the_desktop_page(page, app_server, quick_reply):
    log_in(page, app_server)
    start_conversation(page, "y" * 2000)
    assert no_horizontal_overflow(page)
    bubble = page.locator('[data-role="user"]').last.bounding_box()
    assert bubble["x"] + bubble["width"] <= DESKTOP["width"]


def test_renaming_the_open_conversation_updates_its_heading_and_the_tab_title(
    page, app_server, quick_reply
):
    log_in(page, app_server)
    start_conversation(page, "Old name for this")
    item = page.locator("#sidebar-list li.current")
    item.locator("summary").click()
    item.get_by_label("Title").fill("Lisbon in May")
    item.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Lisbon in May")
    expect(page).to_have_title("Lisbon in May · memorychat")
    expect(page.locator("#sidebar-list li.current")).to_contain_text("Lisbon in May")


def test_a_conversation_started_from_the_blank_page_is_complete_without_a_reload(
    page, app_server, quick_reply
):
    """Its Settings panel, and the reply's tools and report, come without a reload."""
    log_in(page, app_server)
    page.evaluate("window.notReloaded = true")
    start_conversation(page, "Start from blank")
    expect(page.locator(".conversation-settings-panel > summary")).to_be_visible()
    reply = page.locator('[data-role="assistant"]').last
    expect(reply.get_by_role("button", name="Copy")).to_be_visible()
    expect(reply.get_by_role("button", name="Regenerate")).to_be_visible()
    expect(reply.get_by_text("What the model saw")).to_be_visible()
    assert page.evaluate("window.notReloaded") is True


def test_load_earlier_keeps_the_readers_place(page, app_server, live_env):
    """The older batch goes above what the reader was looking at, which stays put."""
    manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; "
        "from chat.services import conversation_create, message_create; "
        "alice = get_user_model().objects.get(username='alice'); "
        "c = conversation_create(user=alice, title='Long history'); "
        "[message_create(conversation=c, role='user', content=f'history line {i}') "
        "for i in range(70)]; print(c.pk)",
        env=live_env["env"],
    )
    log_in(page, app_server)
    page.get_by_role("link", name="Long history").click()
    messages = page.locator("#messages")
    earliest = page.locator(
        '[data-role="user"] .content', has_text=re.compile(r"^history line 20$")
    )
    earliest.scroll_into_view_if_needed()
    messages.evaluate("el => { el.scrollTop = 0; }")
    before = earliest.bounding_box()["y"]
    page.get_by_role("button", name="Load earlier messages").click()
    expect(
        page.locator('[data-role="user"] .content', has_text=re.compile(r"^history line 0$"))
    ).to_be_attached()
    page.wait_for_timeout(200)
    assert abs(earliest.bounding_box()["y"] - before) < 4


def test_new_temporary_conversation_leaves_no_empty_row_and_shows_a_badge(
    page, app_server, quick_reply, db_rows
):
    log_in(page, app_server)
    (count,) = db_rows("SELECT COUNT(*) FROM chat_conversation")[0]
    for _ in range(2):
        page.get_by_role("link", name="New temporary conversation").click()
        expect(page.get_by_role("heading", level=1)).to_have_text("New temporary conversation")
    assert db_rows("SELECT COUNT(*) FROM chat_conversation")[0][0] == count
    conversation_id = start_conversation(page, "Nothing to remember here")
    assert db_rows("SELECT temporary FROM chat_conversation WHERE id = ?", (conversation_id,)) == [
        (1,)
    ]
    expect(page.locator("#sidebar-list li.current .badge.temporary")).to_have_text("temporary")
    expect(page.locator(".conversation-header .badge.temporary")).to_be_visible()


def test_link_buttons_read_as_links_and_pasted_text_is_not_cut(page, app_server):
    """Log out looks like the top bar's other links (no filled block); a paste over the limit
    is kept whole, counted, and refused with a reason when sent."""
    log_in(page, app_server)
    looks = (
        "el => { const s = getComputedStyle(el); return [s.backgroundColor, s.borderTopWidth,"
        " s.textDecorationLine, s.color, parseFloat(s.paddingTop),"
        " el.getBoundingClientRect().height]; }"
    )
    logout = page.get_by_role("button", name="Log out").evaluate(looks)
    profile = page.get_by_role("link", name="Profile", exact=True).evaluate(looks)
    assert logout[0] in ("rgba(0, 0, 0, 0)", "transparent") and logout[1] == "0px"
    assert logout[2:4] == profile[2:4]  # the nav's links: same colour and decoration
    assert logout[4] > 0 and logout[5] >= 24
    box = page.get_by_role("textbox", name="Message")
    text = "z" * 16_500
    box.evaluate("(el, text) => { el.value = text; el.dispatchEvent(new Event('input')); }", text)
    assert len(box.input_value()) == 16_500
    expect(page.locator("#char-count")).to_have_text("16,500 / 16,000")
    box.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("too long")
    assert len(box.input_value()) == 16_500


def test_signing_out_in_another_tab_sends_this_one_to_the_login_page(
    browser, app_server, quick_reply
):
    context = browser.new_context()
    page = context.new_page()
    log_in(page, app_server)
    start_conversation(page, "Two tabs")
    other = context.new_page()
    other.goto(f"{app_server.url}/profile/")
    other.get_by_role("button", name="Log out").click()
    page.wait_for_url(re.compile(r"/accounts/login/\?next=%2Fc%2F\d+%2F"), timeout=15_000)
    context.close()


def test_a_refused_socket_says_the_conversation_is_not_available(
    browser, app_server, quick_reply, db_rows, live_env
):
    """When the server refuses the socket (the conversation is gone), the page says so and
    stops reconnecting instead of retrying for ever."""
    context = browser.new_context()
    page = context.new_page()
    sockets = []

    def through(route):
        server = route.connect_to_server()
        sockets.append((route, server))

    page.route_web_socket(re.compile(r"/ws/chat/"), through)
    log_in(page, app_server)
    conversation_id = start_conversation(page, "This will vanish")
    manage(
        "shell",
        "-c",
        "from chat.models import Conversation; "
        f"Conversation.objects.filter(pk={conversation_id}).delete()",
        env=live_env["env"],
    )
    route, _ = sockets[-1]
    route.close(code=1001, reason="going away")  # a drop: the page reconnects, is refused
    expect(page.get_by_role("alert")).to_contain_text("not available")
    expect(page.get_by_role("textbox", name="Message")).to_be_disabled()
    attempts = len(sockets)
    page.wait_for_timeout(2500)
    assert len(sockets) == attempts  # no more reconnecting
    context.close()


def test_log_in_again_after_being_sent_to_the_login_page(page, app_server):
    """The login page of a signed-out tab brings the user back."""
    page.goto(f"{app_server.url}/accounts/login/?next=/profile/")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{app_server.url}/profile/")
