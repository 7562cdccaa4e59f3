"""Edit any question (issue 39 item 5), in a real browser at a desktop's and a phone's width:
the first question of a three-exchange conversation edited in place starts a new branch;
"1 / 2" switches the question and everything after it; a reload keeps the branch shown;
another user's ids are refused.

With BRANCH_SHOTS=<dir> set, screenshots of the branch in light and dark go there."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in
from tests.support.live_server import create_user

pytestmark = pytest.mark.e2e

VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
EXCHANGES = (
    ("Plan a trip to Lisbon", "Lisbon in spring is lovely."),
    ("What about the trams?", "Tram 28 crosses the old town."),
    ("And pastries?", "Try a pastel de nata."),
)


def send(page, fake_upstream, question: str, answer: str) -> None:
    fake_upstream.behaviour.reply = answer
    box = page.get_by_role("textbox", name="Message")
    box.fill(question)
    box.press("Enter")
    # A shared, busy machine: a first turn (a set-up process starting) can take a while.
    expect(page.locator('[data-role="assistant"]').last).to_contain_text(answer, timeout=60_000)
    expect(page.locator('[data-role="assistant"].status-streaming')).to_have_count(0)


def texts(page) -> list[str]:
    return [t.strip() for t in page.locator("#messages article .content").all_inner_texts()]


def three_exchanges(browser, app_server, fake_upstream, viewport: str):
    """A new browser context signed in, on a conversation of the three EXCHANGES."""
    fake_upstream.behaviour.interval = 0.0
    context = browser.new_context(viewport=VIEWPORTS[viewport])
    page = context.new_page()
    log_in(page, app_server)
    page.wait_for_load_state("load")
    for question, answer in EXCHANGES:
        send(page, fake_upstream, question, answer)
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    return context, page


def shoot(page, name: str) -> None:
    out = os.environ.get("BRANCH_SHOTS")
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        page.wait_for_timeout(300)
        page.screenshot(path=str(Path(out) / f"{name}.png"))


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_edit_the_first_question_and_switch_between_the_branches(
    browser, app_server, fake_upstream, viewport
):
    context, page = three_exchanges(browser, app_server, fake_upstream, viewport)

    first = page.locator('#messages article[data-role="user"]').first
    first.hover()
    first.get_by_role("button", name="Edit").click()
    editor = first.get_by_role("textbox", name="Edit your message")
    expect(editor).to_have_value("Plan a trip to Lisbon")
    editor.fill("Plan a trip to Porto")
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        shoot(page, f"{viewport}-{scheme}-branch-editing")
    fake_upstream.behaviour.reply = "Porto has port wine."
    first.get_by_role("button", name="Send").click()

    expect(page.locator('#messages [data-role="assistant"]').last).to_contain_text("Porto has")
    expect(page.locator('[data-role="assistant"].status-streaming')).to_have_count(0)
    assert texts(page) == ["Plan a trip to Porto", "Porto has port wine."]
    question = page.locator('#messages article[data-role="user"]').first
    expect(question.locator(".version-count")).to_have_text("2 / 2")
    expect(page.locator("#conversation-title")).to_have_text("Plan a trip to Porto")
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        shoot(page, f"{viewport}-{scheme}-branch-2")

    question.get_by_role("button", name="Previous branch").click()
    expect(page.locator("#messages article")).to_have_count(6)
    assert texts(page)[::2] == [q for q, _ in EXCHANGES]
    question = page.locator('#messages article[data-role="user"]').first
    expect(question.locator(".version-count")).to_have_text("1 / 2")
    expect(page.locator("#conversation-title")).to_have_text("Plan a trip to Lisbon")
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        shoot(page, f"{viewport}-{scheme}-branch-1")

    question.get_by_role("button", name="Next branch").click()
    expect(page.locator("#messages article")).to_have_count(2)
    page.reload()
    assert texts(page) == ["Plan a trip to Porto", "Porto has port wine."]
    expect(page.locator('#messages article[data-role="user"] .version-count')).to_have_text("2 / 2")

    page.locator('#messages article[data-role="user"]').first.get_by_role(
        "button", name="Previous branch"
    ).click()
    expect(page.locator("#messages article")).to_have_count(6)
    page.reload()
    expect(page.locator("#messages article")).to_have_count(6)
    assert texts(page)[-1] == "Try a pastel de nata."

    page.locator('#messages article[data-role="user"]').first.get_by_role(
        "link", name="Forget branch…"
    ).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Plan a trip to Lisbon")
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        shoot(page, f"{viewport}-{scheme}-branch-forget")
    context.close()


def test_another_users_question_is_refused(browser, app_server, fake_upstream, live_env):
    fake_upstream.behaviour.interval = 0.0
    alice = browser.new_context()
    page = alice.new_page()
    log_in(page, app_server)
    send(page, fake_upstream, "Alice's own question", "Alice's answer.")
    question_id = int(
        page.locator('#messages article[data-role="user"]').first.get_attribute("data-id")
    )
    alice.close()

    create_user(live_env["env"], "bob", "bob-password-1")
    bob = browser.new_context()
    page = bob.new_page()
    log_in(page, app_server, "bob", "bob-password-1")
    send(page, fake_upstream, "Bob's question", "Bob's answer.")
    conversation = re.search(r"/c/(\d+)/$", page.url).group(1)
    errors = page.evaluate(
        """([conversation, id]) => new Promise((resolve) => {
          const socket = new WebSocket(`ws://${location.host}/ws/chat/${conversation}/`);
          const codes = [];
          socket.onmessage = (event) => {
            const frame = JSON.parse(event.data);
            if (frame.type === "ready") {
              socket.send(JSON.stringify({ type: "switch_branch", message_id: id }));
              socket.send(JSON.stringify({ type: "edit", message_id: id, text: "Mine" }));
            }
            if (frame.type === "error") codes.push(frame.code);
            if (codes.length === 2) { socket.close(); resolve(codes); }
          };
        })""",
        [conversation, question_id],
    )
    assert errors == ["not_found", "not_found"]
    bob.close()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_a_link_into_a_hidden_branch_shows_it_until_the_user_keeps_it(
    browser, app_server, fake_upstream, viewport
):
    """A memory's source in the branch the user left: the link shows that branch with "Keep
    this branch" in the composer's place; another tab stays on the branch shown until the
    user keeps it, then swaps it in."""
    context, page = three_exchanges(browser, app_server, fake_upstream, viewport)
    url = page.url
    tram = page.locator('#messages [data-role="assistant"]').nth(1).get_attribute("data-id")
    first = page.locator('#messages article[data-role="user"]').first
    first.hover()
    first.get_by_role("button", name="Edit").click()
    first.get_by_role("textbox", name="Edit your message").fill("Plan a trip to Porto")
    fake_upstream.behaviour.reply = "Porto has port wine."
    first.get_by_role("button", name="Send").click()
    expect(page.locator("#messages article")).to_have_count(2)
    expect(page.locator('[data-role="assistant"].status-streaming')).to_have_count(0)
    other = context.new_page()  # a second tab on the conversation, on the Porto branch
    other.goto(url)
    other.wait_for_timeout(2000)  # its socket open: no frame marks it, the page stays as is

    page.goto(f"{url}?highlight={tram}#m{tram}")

    expect(page.locator("#messages article")).to_have_count(6)
    expect(page.locator(f"#m{tram}")).to_have_class(re.compile(r"\bis-source\b"))
    expect(page.get_by_role("button", name="Keep this branch")).to_be_visible()
    expect(page.get_by_role("textbox", name="Message")).to_be_hidden()
    for button in page.get_by_role("button", name="Edit").all():
        expect(button).to_be_hidden()
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        shoot(page, f"{viewport}-{scheme}-branch-link")
    assert texts(other) == ["Plan a trip to Porto", "Porto has port wine."]

    page.get_by_role("button", name="Keep this branch").click()

    expect(page.get_by_role("button", name="Keep this branch")).to_have_count(0)
    expect(page.get_by_role("textbox", name="Message")).to_be_visible()
    assert texts(page)[::2] == [q for q, _ in EXCHANGES]
    expect(other.locator("#messages article")).to_have_count(6, timeout=20_000)  # swapped in
    context.close()
