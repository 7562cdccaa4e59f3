"""The composer and the reading position, in a real browser at a desktop's and a phone's
width: the message box grows with its text up to half the screen; on a touch screen Return
makes a new line and the button sends; opening a conversation focuses the box (not on touch);
a "↓" button brings back the end while a reply streams below; the header's model picker."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import PASSWORD
from tests.e2e.site import VIEWPORTS

pytestmark = pytest.mark.e2e

WIDTHS = sorted(VIEWPORTS)  # desktop 1366x900, phone 390x844


@pytest.fixture
def calm_upstream(fake_upstream):
    """The fake model as other tests expect it after this one."""
    behaviour = fake_upstream.behaviour
    saved = (behaviour.reply, behaviour.interval, behaviour.chunk_words)
    yield fake_upstream
    behaviour.reply, behaviour.interval, behaviour.chunk_words = saved


def signed_in(browser, app_server, viewport: str, *, touch: bool = False):
    options = {"viewport": VIEWPORTS[viewport]}
    if touch:
        options.update(has_touch=True, is_mobile=True)
    context = browser.new_context(**options)
    page = context.new_page()
    page.goto(f"{app_server.url}/accounts/login/")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{app_server.url}/")
    return context, page


def wait_until(page, expression: str, timeout: float = 30.0) -> None:
    """Poll ``expression`` in the page (its CSP forbids wait_for_function's eval)."""
    deadline = time.monotonic() + timeout
    while not page.evaluate(expression):
        assert time.monotonic() < deadline, f"never true: {expression}"
        page.wait_for_timeout(100)


def box_height(page) -> float:
    return page.evaluate("document.getElementById('message-input').getBoundingClientRect().height")


def start_conversation(page, text="Hello there"):
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    page.get_by_role("button", name="Send").click()
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    reply = page.locator('[data-role="assistant"]').last
    expect(reply.locator(".context-report")).to_be_attached(timeout=60_000)
    return reply


@pytest.mark.parametrize("viewport", WIDTHS)
def test_the_message_box_grows_with_its_text_up_to_half_the_screen(browser, app_server, viewport):
    context, page = signed_in(browser, app_server, viewport)
    box = page.get_by_role("textbox", name="Message")
    one_line = box_height(page)
    box.fill("\n".join(f"line {n}" for n in range(6)))
    six_lines = box_height(page)
    assert six_lines > one_line + 60
    box.fill("\n".join(f"line {n}" for n in range(200)))
    half = VIEWPORTS[viewport]["height"] / 2
    assert half - 2 <= box_height(page) <= half + 1
    assert (
        page.evaluate("getComputedStyle(document.getElementById('message-input')).overflowY")
        == "auto"
    )
    box.fill("")
    assert box_height(page) == pytest.approx(one_line, abs=1)
    context.close()


def test_the_box_shrinks_back_once_its_long_message_is_sent(browser, app_server, calm_upstream):
    """chat.js empties the box with an input event, as typing would: composer.js follows it
    without redefining the box's value."""
    context, page = signed_in(browser, app_server, "desktop")
    box = page.get_by_role("textbox", name="Message")
    one_line = box_height(page)
    start_conversation(page, "\n".join(f"line {n}" for n in range(8)))
    expect(box).to_have_value("")
    assert box_height(page) == pytest.approx(one_line, abs=1)
    own = "Object.getOwnPropertyDescriptor(document.getElementById('message-input'), 'value')"
    assert page.evaluate(f"{own} === undefined")
    context.close()


@pytest.mark.parametrize("viewport", WIDTHS)
def test_on_a_touch_screen_return_makes_a_new_line_and_the_button_sends(
    browser, app_server, viewport, calm_upstream
):
    calm_upstream.behaviour.reply = "Answered from a phone."
    context, page = signed_in(browser, app_server, viewport, touch=True)
    assert page.evaluate("matchMedia('(pointer: coarse)').matches")
    box = page.get_by_role("textbox", name="Message")
    box.click()
    page.keyboard.type("first line")
    page.keyboard.press("Enter")
    page.keyboard.type("second line")
    expect(box).to_have_value("first line\nsecond line")
    assert "/c/" not in page.url  # Return sent nothing
    page.get_by_role("button", name="Send").tap()
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    sent = page.locator('[data-role="user"] .content').last
    expect(sent).to_have_text("first line\nsecond line", timeout=60_000)  # a busy machine
    context.close()


@pytest.mark.parametrize("viewport", WIDTHS)
def test_opening_a_conversation_focuses_the_message_box_but_not_on_touch(
    browser, app_server, viewport
):
    context, page = signed_in(browser, app_server, viewport)
    start_conversation(page)
    url = page.url
    page.goto(url)
    expect(page.get_by_role("textbox", name="Message")).to_be_focused()
    context.close()

    context, page = signed_in(browser, app_server, viewport, touch=True)
    page.goto(url)
    expect(page.locator("#messages article").first).to_be_visible()
    assert page.evaluate("document.activeElement.id") != "message-input"  # no keyboard
    context.close()


@pytest.mark.parametrize("viewport", WIDTHS)
def test_a_down_button_brings_back_the_end_while_a_reply_streams(
    browser, app_server, viewport, calm_upstream
):
    context, page = signed_in(browser, app_server, viewport)
    calm_upstream.behaviour.reply = " ".join(f"word{n}" for n in range(30)) + "."
    start_conversation(page, "Short first")
    calm_upstream.behaviour.reply = "\n\n".join(
        f"Paragraph {n} of a long reply." for n in range(120)
    )
    calm_upstream.behaviour.interval = 0.05
    page.get_by_role("textbox", name="Message").fill("Now a long one")
    page.get_by_role("textbox", name="Message").press("Enter")
    down = page.get_by_role("button", name="Go to the latest message")
    expect(page.locator("#send-button.stop")).to_be_visible()
    expect(down).to_be_hidden()  # following the reply
    wait_until(
        page, "(m => m.scrollHeight > 2 * m.clientHeight)(document.getElementById('messages'))"
    )
    page.evaluate("document.getElementById('messages').scrollTop = 0")
    expect(down).to_be_visible()
    # Above the composer, not over it.
    composer_top = page.locator("#composer").bounding_box()["y"]
    button = down.bounding_box()
    assert button["y"] + button["height"] <= composer_top
    down.click()
    expect(down).to_be_hidden()
    at_end = (
        "(m => m.scrollHeight - m.scrollTop - m.clientHeight < 120)"
        "(document.getElementById('messages'))"
    )
    wait_until(page, at_end)
    page.get_by_role("button", name="Stop").click()
    expect(page.locator("#send-button.stop")).to_have_count(0)
    context.close()


@pytest.mark.parametrize("viewport", WIDTHS)
def test_the_header_offers_the_servers_models_and_each_reply_names_its_own(
    browser, app_server, viewport, db_rows, calm_upstream
):
    calm_upstream.behaviour.reply = "Which model am I?"
    context, page = signed_in(browser, app_server, viewport)
    picker = page.get_by_label("Model", exact=True)
    expect(picker).to_be_visible()
    assert picker.locator("option").all_text_contents()[1:] == ["fake-large", "fake-small"]
    picker.select_option("fake-small")
    reply = start_conversation(page)
    expect(reply.locator(".reply-model")).to_have_text("fake-small")
    conversation_id = int(re.search(r"/c/(\d+)/", page.url)[1])
    assert db_rows("select model from chat_conversation where id = ?", (conversation_id,)) == [
        ("fake-small",)
    ]
    # Changed in the header: the next replies' model.
    picker = page.get_by_label("Model", exact=True)
    expect(picker).to_have_value("fake-small")
    picker.select_option("fake-large")
    wait_until(page, "document.getElementById('model-picker')?.value === 'fake-large'")
    deadline = time.monotonic() + 30
    while db_rows("select model from chat_conversation where id = ?", (conversation_id,)) != [
        ("fake-large",)
    ]:
        assert time.monotonic() < deadline, "the model picked was not stored"
        page.wait_for_timeout(100)
    page.get_by_role("textbox", name="Message").fill("And now?")
    page.get_by_role("textbox", name="Message").press("Enter")
    expect(page.locator('[data-role="assistant"]')).to_have_count(2)
    last = page.locator('[data-role="assistant"]').last
    expect(last.locator(".reply-model")).to_have_text("fake-large", timeout=30_000)
    context.close()


@pytest.mark.parametrize("viewport", WIDTHS)
def test_the_remembered_notice_shows_in_view_under_its_reply_and_aligned_with_it(
    browser, app_server, viewport, calm_upstream
):
    calm_upstream.behaviour.reply = "Noted."
    context, page = signed_in(browser, app_server, viewport)
    start_conversation(page, f"My favourite colour is teal, seen on the {viewport}.")
    notice = page.locator(".memory-notice").last
    expect(notice).to_contain_text("Remembered")
    expect(notice).to_be_in_viewport()
    reply = page.locator('[data-role="assistant"]').last.bounding_box()
    box = notice.bounding_box()
    assert abs(box["x"] - reply["x"]) <= 1
    assert box["y"] >= reply["y"] + reply["height"] - 1
    context.close()
