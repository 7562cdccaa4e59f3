"""Screenshots of every page, as a new user and a staff member see them, at a desktop's
1366x900 and a phone's 390x844, light and dark, for a person to look at:

    .venv/bin/python -m tests.e2e.shots --out /tmp/shots     # about three minutes

Names are ``<viewport>-<scheme>-<page>.png``. Pages that scroll are taken whole."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from playwright.sync_api import expect, sync_playwright

from tests.e2e.conftest import open_report
from tests.e2e.site import (
    CHROMIUM_ARGS,
    LONG_REPLY,
    PLAIN,
    PLAIN_PASSWORD,
    SCHEMES,
    VIEWPORTS,
    Site,
    log_in,
    server_error_html,
    staff_pages,
    start_site,
    user_pages,
)
from tests.support.fake_llm import Behaviour, FakeLLM

MAX_SLICES = 5


def take(page, out: Path, name: str, *, full: bool = False) -> None:
    """The viewport; with ``full``, the whole page in screen-sized slices (-1, -2, ...), which
    the file viewer shows at their real size."""
    page.wait_for_timeout(300)  # let a transition (the drawer's is 0.2 s) end
    if not full:
        page.screenshot(path=str(out / f"{name}.png"))
        return
    size = page.viewport_size
    height = page.evaluate("document.scrollingElement.scrollHeight")
    for k in range(min(-(-height // size["height"]), MAX_SLICES)):
        top = k * size["height"]
        tall = min(size["height"], height - top)
        clip = {"x": 0, "y": top, "width": size["width"], "height": tall}
        page.screenshot(path=str(out / f"{name}-{k + 1}.png"), full_page=True, clip=clip)


def chat_shots(page, site: Site, out: Path, prefix: str, phone: bool) -> int:
    page.goto(f"{site.url}/accounts/login/")
    take(page, out, f"{prefix}-login")
    page.goto(f"{site.url}/accounts/signup/")
    take(page, out, f"{prefix}-signup", full=True)
    page.goto(f"{site.url}/account/goodbye/")  # after an account is deleted: signed out
    take(page, out, f"{prefix}-goodbye", full=True)
    log_in(page, site)
    take(page, out, f"{prefix}-chat-home")

    box = page.get_by_role("textbox", name="Message")
    box.fill("Plan a week in Lisbon for me, with a table and some code")
    box.press("Enter")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    reply = page.locator('[data-role="assistant"]').last
    expect(reply.locator(".content table")).to_be_attached()
    take(page, out, f"{prefix}-chat-streaming")
    expect(reply.locator(".context-report")).to_be_attached(timeout=60_000)
    take(page, out, f"{prefix}-chat-reply-end")
    reply.locator(".content table").scroll_into_view_if_needed()
    take(page, out, f"{prefix}-chat-reply-table")
    open_report(reply)
    reply.locator(".context-report").scroll_into_view_if_needed()
    take(page, out, f"{prefix}-chat-what-the-model-saw")
    conversation_id = int(re.search(r"/c/(\d+)/", page.url)[1])

    page.get_by_text("Settings", exact=True).click()
    take(page, out, f"{prefix}-chat-settings-menu")
    page.keyboard.press("Escape")
    if phone:
        page.get_by_role("button", name="Conversations").click()
        take(page, out, f"{prefix}-chat-drawer-open")
    page.locator(".conversation-actions summary").first.click()
    take(page, out, f"{prefix}-chat-actions-menu")
    page.keyboard.press("Escape")
    if phone:
        page.keyboard.press("Escape")
        page.get_by_role("button", name="Menu").click()
        take(page, out, f"{prefix}-chat-site-menu-open")
        page.keyboard.press("Escape")
    page.goto(f"{site.url}/?temporary=1")
    take(page, out, f"{prefix}-chat-temporary")
    return conversation_id


def other_shots(page, site: Site, out: Path, prefix: str, conversation_id: int) -> None:
    for name, path in user_pages(site, conversation_id).items():
        page.goto(site.url + path)
        take(page, out, f"{prefix}-{name}", full=True)
    for name, path in staff_pages(site, conversation_id).items():
        response = page.goto(site.url + path)
        assert response.status == 200, (name, response.status)
        take(page, out, f"{prefix}-{name}", full=True)
    page.goto(f"{site.url}/c/999999/")
    take(page, out, f"{prefix}-error-404")
    html = server_error_html(site)
    page.route(f"{site.url}/a-failing-page/", lambda route: route.fulfill(status=500, body=html))
    page.goto(f"{site.url}/a-failing-page/")
    take(page, out, f"{prefix}-error-500")


def forbidden_shot(browser, site: Site, out: Path, prefix: str, options: dict) -> None:
    context = browser.new_context(**options)
    page = context.new_page()
    log_in(page, site, PLAIN, PLAIN_PASSWORD)
    response = page.goto(f"{site.url}/staff/")
    assert response.status == 403
    take(page, out, f"{prefix}-error-403")
    context.close()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/shots"))
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    upstream = FakeLLM(Behaviour(reply=LONG_REPLY, interval=0.03)).start()
    site = start_site(upstream.base_url)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS
            )
            for viewport, size in VIEWPORTS.items():
                for scheme in SCHEMES:
                    prefix = f"{viewport}-{scheme}"
                    options = {"viewport": size, "color_scheme": scheme}
                    context = browser.new_context(**options)
                    page = context.new_page()
                    conversation_id = chat_shots(page, site, args.out, prefix, viewport == "phone")
                    other_shots(page, site, args.out, prefix, conversation_id)
                    context.close()
                    forbidden_shot(browser, site, args.out, prefix, options)
                    print(prefix, "done", flush=True)
            browser.close()
    finally:
        site.server.stop()
        upstream.stop()
    print(f"{len(list(args.out.glob('*.png')))} screenshots in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
