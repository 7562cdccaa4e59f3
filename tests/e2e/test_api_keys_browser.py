"""As a new user would: make a key on the profile (its secret shown once, the section passing
the audit at both sizes), point the real openai client at /v1 of a live server and tell it
something, and find that conversation in the web UI."""

from __future__ import annotations

import re

import openai
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import PASSWORD, log_in
from tests.e2e.test_accessibility import VIEWPORTS, audit, overflow

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_a_key_made_on_the_profile_chats_through_v1(browser, app_server, fake_upstream, viewport):
    fake_upstream.behaviour.reply = "Noted, Miso it is."
    fake_upstream.behaviour.interval = 0.0
    context = browser.new_context(viewport=VIEWPORTS[viewport])
    page = context.new_page()
    log_in(page, app_server, password=PASSWORD)
    page.goto(f"{app_server.url}/profile/")
    page.get_by_label("Key name").fill(f"Script on the {viewport}")
    page.get_by_role("button", name="Create key").click()
    secret_box = page.get_by_label("Secret of the new key")
    expect(secret_box).to_be_visible()
    secret = secret_box.input_value()
    assert re.fullmatch(r"mc-[A-Za-z0-9_-]{40,}", secret)
    problems = audit(page, "profile, a new key") + overflow(page, "profile, a new key")
    assert problems == []

    api = openai.OpenAI(base_url=f"{app_server.url}/v1", api_key=secret, max_retries=0)
    model = api.models.list().data[0].id
    text = f"My cat is called Miso ({viewport})."
    pieces = [
        chunk.choices[0].delta.content or ""
        for chunk in api.chat.completions.create(
            model=model, messages=[{"role": "user", "content": text}], stream=True
        )
        if chunk.choices
    ]
    assert "".join(pieces) == "Noted, Miso it is."

    page.goto(f"{app_server.url}/")
    link = page.locator("a", has_text=text)  # on a phone, in the closed drawer
    expect(link.first).to_be_attached()
    link.first.evaluate("a => a.click()")
    expect(page.locator('[data-role="assistant"]').last).to_contain_text("Noted, Miso it is.")

    # Revoked, the key stops working at once.
    page.goto(f"{app_server.url}/profile/")
    row = page.locator("#api-keys tr", has_text=f"Script on the {viewport}")
    row.get_by_role("button", name="Revoke…").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke").click()  # the page's own
    expect(page.locator("#api-keys")).to_contain_text("Revoked")
    with pytest.raises(openai.AuthenticationError):
        api.models.list()
    context.close()
