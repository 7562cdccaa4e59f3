"""Every page at a desktop's 1366x900 and a phone's 390x844, light and dark, on a production-like
server (DEBUG off: the real 403/404/500 pages): nothing wider than the screen, the top bar
inside it, the theme applied, wide tables scrolling in their own box, the composer in view,
the phone's drawer and menu reachable, and no serious or critical axe violation."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import open_report
from tests.e2e.site import (
    LONG_REPLY,
    PLAIN,
    PLAIN_PASSWORD,
    SCHEMES,
    VIEWPORTS,
    log_in,
    server_error_html,
    staff_pages,
    start_site,
    user_pages,
)
from tests.e2e.test_accessibility import audit

pytestmark = pytest.mark.e2e

# --bg of each theme (static/css/app.css), as the browser reports it.
BACKGROUND = {"light": "rgb(245, 246, 248)", "dark": "rgb(15, 19, 24)"}

LAYOUT = """() => {
  const width = window.innerWidth, problems = [];
  const wide = document.scrollingElement.scrollWidth - width;
  if (wide > 0) problems.push(`the page is ${wide}px wider than the screen`);
  for (const el of document.querySelectorAll('.topbar > *, .topbar .site-nav > *')) {
    const box = el.getBoundingClientRect();
    const name = el.className || el.tagName;
    if (box.width && box.right > width + 0.5)
      problems.push(`top bar: ${name} ends at ${Math.round(box.right)}px`);
  }
  for (const table of document.querySelectorAll('table')) {
    const style = getComputedStyle(table);
    if (table.scrollWidth > table.clientWidth + 1 && !['auto', 'scroll'].includes(style.overflowX))
      problems.push(`a table ${table.scrollWidth}px wide does not scroll in its box`);
  }
  return problems;
}"""


@pytest.fixture(scope="module")
def site(fake_upstream):
    site = start_site(fake_upstream.base_url)
    yield site
    site.server.stop()


def check(page, where: str, scheme: str) -> list[str]:
    """Layout, theme and audit problems of the page as it is now."""
    problems = [f"{where}: {p}" for p in page.evaluate(LAYOUT)]
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    if background != BACKGROUND[scheme]:
        problems.append(f"{where}: background {background}, not the {scheme} theme's")
    return problems + audit(page, where)


def in_view(page, locator) -> bool:
    box = locator.bounding_box()
    size = page.viewport_size
    return (
        bool(box)
        and box["x"] >= 0
        and box["y"] >= 0
        and (
            box["x"] + box["width"] <= size["width"] + 0.5
            and box["y"] + box["height"] <= size["height"] + 0.5
        )
    )


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_every_page_fits_the_screen_in_both_themes(browser, site, fake_upstream, viewport, scheme):
    """Chat (blank, a long streamed Markdown reply, menus, drawer), profile, staff pages and
    the error pages: fitted, themed, scrolling tables in their box, and audited."""
    fake_upstream.behaviour.reply = LONG_REPLY
    fake_upstream.behaviour.interval = 0.0
    phone = viewport == "phone"
    context = browser.new_context(viewport=VIEWPORTS[viewport], color_scheme=scheme)
    page = context.new_page()
    problems: list[str] = []

    page.goto(f"{site.url}/accounts/login/")
    problems += check(page, "login", scheme)
    page.goto(f"{site.url}/accounts/signup/")
    problems += check(page, "signup", scheme)
    page.goto(f"{site.url}/account/goodbye/")  # after an account is deleted: signed out
    problems += check(page, "goodbye", scheme)
    log_in(page, site)
    box = page.get_by_role("textbox", name="Message")
    assert in_view(page, box), "the composer is out of view on the blank page"
    problems += check(page, "chat, blank", scheme)

    box.fill("Plan a week in Lisbon")
    box.press("Enter")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    reply = page.locator('[data-role="assistant"]').last
    expect(reply.locator(".context-report")).to_be_attached()
    # The header fetched for the new conversation keeps the title that came by the socket.
    expect(page.locator("#conversation-title")).to_have_text("Plan a week in Lisbon")
    assert in_view(page, box), "the composer is out of view under a long reply"
    open_report(reply)
    problems += check(page, "chat, a long reply", scheme)
    conversation_id = int(re.search(r"/c/(\d+)/", page.url)[1])

    page.get_by_text("Settings", exact=True).click()
    assert in_view(page, page.locator(".conversation-settings-panel .menu"))
    problems += check(page, "chat, settings open", scheme)
    page.keyboard.press("Escape")
    if phone:
        page.get_by_role("button", name="Conversations").click()
        drawer = page.get_by_role("complementary", name="Conversations")
        expect(drawer).to_be_visible()
        expect(drawer.locator(".conversation-link").first).to_be_visible()
        page.wait_for_timeout(300)  # the slide
        assert in_view(page, drawer.locator(".conversation-link").first)
    page.locator(".conversation-actions summary").first.click()
    expect(page.locator(".actions-panel").first).to_be_visible()
    problems += check(page, "chat, actions open", scheme)
    page.keyboard.press("Escape")
    if phone:
        page.keyboard.press("Escape")
        expect(page.get_by_role("complementary", name="Conversations")).to_be_hidden()
        page.get_by_role("button", name="Menu").click()
        for name in ("Chat", "Profile", "Memory dashboard"):
            assert in_view(page, page.get_by_role("link", name=name, exact=True)), name
        assert in_view(page, page.get_by_role("button", name="Log out"))
        problems += check(page, "chat, menu open", scheme)
        page.keyboard.press("Escape")
    else:
        assert in_view(page, page.get_by_role("button", name="Log out"))

    pages = {**user_pages(site, conversation_id), **staff_pages(site, conversation_id)}
    for where, path in pages.items():
        response = page.goto(site.url + path)
        assert response.status == 200, (where, response.status)
        problems += check(page, where, scheme)
    response = page.goto(f"{site.url}/c/999999/")
    assert response.status == 404
    expect(page.get_by_role("heading", level=1)).to_have_text("This page is not here")
    problems += check(page, "404", scheme)
    html = server_error_html(site)
    page.route(f"{site.url}/a-failing-page/", lambda route: route.fulfill(status=500, body=html))
    page.goto(f"{site.url}/a-failing-page/")
    expect(page.get_by_role("heading", level=1)).to_have_text("Something went wrong on our side")
    problems += check(page, "500", scheme)
    context.close()

    context = browser.new_context(viewport=VIEWPORTS[viewport], color_scheme=scheme)
    page = context.new_page()
    log_in(page, site, PLAIN, PLAIN_PASSWORD)
    assert page.goto(f"{site.url}/staff/").status == 403
    problems += check(page, "403", scheme)
    context.close()
    assert problems == [], "\n".join(problems)


def test_the_choice_overrides_the_system_theme_on_every_page(browser, site):
    """Dark chosen on a light system stays dark on the next page, and back."""
    context = browser.new_context(viewport=VIEWPORTS["phone"], color_scheme="light")
    page = context.new_page()
    log_in(page, site)
    page.get_by_role("button", name="Menu").click()
    page.get_by_label("Theme").select_option("dark")
    for path in ("/profile/", "/staff/users/"):
        page.goto(site.url + path)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == BACKGROUND["dark"], path
    page.get_by_role("button", name="Menu").click()
    page.get_by_label("Theme").select_option("light")
    page.goto(f"{site.url}/")
    assert page.evaluate("getComputedStyle(document.body).backgroundColor") == BACKGROUND["light"]
    context.close()


def test_the_sign_up_form_shows_each_fields_help_under_its_box(page, app_server):
    """Django renders the help between a label and its box; the page shows it under the box,
    so each label sits on its box (the password rules used to part them)."""
    page.goto(f"{app_server.url}/accounts/signup/")
    for name in ("username", "password1"):
        label = page.locator(f"label[for=id_{name}]").bounding_box()
        box = page.locator(f"#id_{name}").bounding_box()
        help_text = page.locator(f"#id_{name}_helptext").bounding_box()
        assert box["y"] - (label["y"] + label["height"]) < 8, name
        assert help_text["y"] >= box["y"] + box["height"], name


def test_the_learned_style_reads_on_a_phone_without_scrolling_sideways(browser, site):
    """Each metric of the profile's learned style is a card on a phone: every value, the last
    column's ("In the prompt") too, is on the screen under its column's name."""
    context = browser.new_context(viewport=VIEWPORTS["phone"])
    page = context.new_page()
    log_in(page, site)
    page.goto(f"{site.url}/profile/")
    table = page.locator("#learned-style table.metrics")
    assert table.evaluate("t => t.scrollWidth <= t.clientWidth + 1"), "the table scrolls sideways"
    rows = table.locator("tbody tr")
    assert rows.count() >= 3
    width = page.viewport_size["width"]
    for i in range(rows.count()):
        cell = rows.nth(i).locator("td").last
        expect(cell).to_be_visible()
        box = cell.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, (i, box)
        label = cell.evaluate("td => getComputedStyle(td, '::before').content")
        assert label == '"In the prompt: "', label
    assert page.evaluate("document.scrollingElement.scrollWidth") <= width
    context.close()
