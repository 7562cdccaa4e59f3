"""A new user's first minutes on `make run`'s defaults (no model: offline), at a desktop's and
a phone's width, light and dark: sign up with an email and land in the chat with the notice
about the link; the top bar fits the screen beside the offline badge, its Menu reachable."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.site import VIEWPORTS
from tests.support.live_server import ServerProcess, manage, project_env

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def offline_server(tmp_path_factory):
    db = tmp_path_factory.mktemp("offline") / "db.sqlite3"
    env = project_env(DATABASE_URL=f"sqlite:///{db}")  # no OPENAI_*: the offline provider
    manage("migrate", "--noinput", env=env)
    server = ServerProcess(env).start()
    yield server
    server.stop()


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_sign_up_lands_in_the_chat_and_the_top_bar_fits(browser, offline_server, viewport, scheme):
    size = VIEWPORTS[viewport]
    context = browser.new_context(viewport=size, color_scheme=scheme)
    page = context.new_page()
    page.goto(f"{offline_server.url}/accounts/signup/")
    name = f"new-{viewport}-{scheme}"
    page.get_by_label("Username").fill(name)
    page.get_by_label("Email address (optional)").fill(f"{name}@example.org")
    page.get_by_label("Password:", exact=True).fill("a-long-pass-phrase-9")
    page.get_by_label("Password confirmation").fill("a-long-pass-phrase-9")
    page.get_by_role("button", name="Create account").click()

    page.wait_for_url(f"{offline_server.url}/")
    expect(page.locator("#page-notice")).to_contain_text(f"We sent a link to {name}@example.org")
    expect(page.get_by_role("textbox", name="Message")).to_be_visible()
    expect(page.locator(".topbar .badge.offline")).to_be_visible()
    # Every control of the top bar inside the screen; the mark keeps the link's name.
    for control in page.locator(".topbar > a, .topbar > button, .topbar > .badge").all():
        if control.is_visible():
            box = control.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= size["width"], control
    expect(page.get_by_role("link", name="memorychat")).to_be_visible()
    if viewport == "phone":
        page.get_by_role("button", name="Menu").click()
        expect(page.get_by_role("link", name="Memory", exact=True)).to_be_visible()
    context.close()
