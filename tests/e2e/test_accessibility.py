"""Every page, at a desktop's 1366x900 and a phone's 390x844, light and dark: an axe-core
audit (vendored: tests/e2e/vendor/) with no serious or critical violation, and nothing wider
than the screen (wide staff tables scroll inside their own box)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in, open_report
from tests.support.live_server import create_user, manage

pytestmark = pytest.mark.e2e

AXE = (Path(__file__).parent / "vendor" / "axe.min.js").read_text(encoding="utf-8")
VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
PASSWORD = "audit-password-1"
REPLY = """Here is a plan:

1. **Book** the flights
2. Find a hotel near `Alfama`

| Day | Plan |
|:----|-----:|
| Mon | Museum |

> Remember the tram.

```python
def total(prices):
    # the sum
    return sum(p * 1.2 for p in prices)
```
"""


@pytest.fixture(scope="module")
def auditor(live_env):
    """A staff user with a conversation of their own and a remembered fact."""
    env = live_env["env"]
    create_user(env, "audrey", PASSWORD, staff=True)
    manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; from memory.models import Fact; "
        "u = get_user_model().objects.get(username='audrey'); "
        "Fact.objects.get_or_create(user=u, text='Audrey lives in Porto.', "
        "defaults={'category': 'personal'})",
        env=env,
    )
    return "audrey"


SCROLLABLES_REACHABLE = """() => [...document.querySelectorAll('table, .code-block pre')]
    .every((box) => box.scrollWidth <= box.clientWidth + 1 || box.hasAttribute('tabindex'))"""


def audit(page, where: str) -> list[str]:
    """Serious and critical axe violations on the page, as readable lines."""
    # ui.js gives a scrolling table or code block its tabindex when the browser is next idle
    # (up to a second after the page): the audit waits for that, as a keyboard user would.
    page.wait_for_function(SCROLLABLES_REACHABLE, timeout=5000)
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.evaluate(AXE)  # evaluated by the driver: the page's CSP does not apply
    result = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".filter(v => v.impact === 'serious' || v.impact === 'critical')"
        ".map(v => v.id + ': ' + v.help + ' @ ' + v.nodes.slice(0, 3)"
        ".map(n => n.target.join(' ')).join(' | '))"
    )
    return [f"{where}: {line}" for line in result]


def overflow(page, where: str) -> list[str]:
    wide = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    return [f"{where}: the page is {wide}px wider than the screen"] if wide > 0 else []


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("viewport", sorted(VIEWPORTS))
def test_every_page_passes_the_audit(browser, app_server, fake_upstream, auditor, viewport, scheme):
    fake_upstream.behaviour.reply = REPLY
    fake_upstream.behaviour.interval = 0.0
    context = browser.new_context(viewport=VIEWPORTS[viewport], color_scheme=scheme)
    page = context.new_page()
    problems: list[str] = []

    page.goto(f"{app_server.url}/accounts/login/")
    problems += audit(page, "login")
    log_in(page, app_server, username=auditor, password=PASSWORD)
    problems += audit(page, "chat, blank") + overflow(page, "chat, blank")

    box = page.get_by_role("textbox", name="Message")
    box.fill("Plan a trip to Lisbon")
    box.press("Enter")
    page.wait_for_url(re.compile(r"/c/\d+/$"))
    reply = page.locator('[data-role="assistant"]').last
    expect(reply.locator(".context-report")).to_be_attached()
    open_report(reply)
    problems += audit(page, "chat, a reply") + overflow(page, "chat, a reply")
    conversation_url = page.url
    if viewport == "phone":
        page.get_by_role("button", name="Conversations").click()
        expect(page.get_by_role("complementary", name="Conversations")).to_be_visible()
        problems += audit(page, "chat, the list open")
        page.keyboard.press("Escape")
        page.get_by_role("button", name="Menu").click()
        problems += audit(page, "chat, the menu open")
        page.keyboard.press("Escape")

    # A memory notice under a reply, and a suggestion waiting on the Memory page (ask first).
    page.goto(f"{app_server.url}/profile/")
    page.get_by_label(re.compile("Ask first")).check()
    page.get_by_role("button", name="Save memory mode").click()
    expect(page.locator("#memory")).to_contain_text("asks first")
    page.goto(conversation_url)
    expect(page.locator('[data-role="assistant"] .context-report').last).to_be_attached()
    box = page.get_by_role("textbox", name="Message")
    # One name per run (viewport, scheme): told again, a fact is no news.
    daughter = {"desktop": "Ada", "phone": "Bea"}[viewport] + {"light": "", "dark": "ta"}[scheme]
    box.fill(f"My daughter's name is {daughter}.")
    box.press("Enter")
    expect(page.locator(".memory-notice").last).to_contain_text("Remember this?")
    problems += audit(page, "chat, a memory notice") + overflow(page, "chat, a memory notice")

    conversation_id = re.search(r"/c/(\d+)/", conversation_url).group(1)
    pages = {
        "memory": "/memory/",
        "profile": "/profile/",
        "delete a conversation": f"/c/{conversation_id}/delete/",
        "forget a conversation": f"/c/{conversation_id}/forget/",
        "forget everything": "/account/forget/",
        "delete the account": "/account/delete/",
        "goodbye": "/account/goodbye/",
        "staff home": "/staff/",
        "staff users": "/staff/users/",
        "staff memories": "/staff/memories/",
        "staff conversation": f"/staff/conversations/{conversation_id}/",
        "search": "/search/?q=trip+Lisbon",
        "share a conversation": f"/c/{conversation_id}/share/",
        "reset a password": "/accounts/password_reset/",
        "reset link sent": "/accounts/password_reset/done/",
    }  # the 404 page: not here, the live server runs with DEBUG on (Django's own page)
    for where, path in pages.items():
        response = page.goto(f"{app_server.url}{path}")
        assert response.status == 200, (where, path)
        problems += audit(page, where) + overflow(page, where)
    page.goto(f"{app_server.url}/memory/")  # the add form open, with an error
    page.get_by_text("Add a memory", exact=True).click()
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.locator("#add-text-error")).to_be_visible()
    problems += audit(page, "memory, add form") + overflow(page, "memory, add form")
    page.goto(f"{app_server.url}/c/{conversation_id}/share/")
    page.get_by_role("button", name=re.compile("Create a link|Update")).first.click()
    problems += audit(page, "shared, its link")
    page.goto(page.locator("#share-link").input_value())
    problems += audit(page, "the shared copy") + overflow(page, "the shared copy")
    page.keyboard.press("Control+k")
    page.locator("#palette-q").fill("Lisbon")
    expect(page.locator("#palette-results mark").first).to_be_visible()
    problems += audit(page, "the search palette")
    page.keyboard.press("Escape")
    page.goto(f"{app_server.url}/staff/users/?q={auditor}")
    page.locator("#user-table").get_by_role("link", name=auditor, exact=True).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text(auditor)
    problems += audit(page, "staff user") + overflow(page, "staff user")
    context.close()
    assert problems == [], "\n".join(problems)
