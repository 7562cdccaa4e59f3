"""The staff memory list in a real browser: an inline edit swaps the row in place, shows
validation errors in the row, and records who made the change."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import log_in
from tests.support.live_server import create_user, manage

pytestmark = pytest.mark.e2e

STAFF_PASSWORD = "sam-password-1"


@pytest.fixture(scope="module")
def staff_world(live_env):
    """Sam (staff) and Dora, who has one remembered fact, on the shared live server."""
    env = live_env["env"]
    create_user(env, "sam", STAFF_PASSWORD, staff=True)
    create_user(env, "dora", "dora-password-1")
    manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model; from memory.models import Fact; "
        "dora = get_user_model().objects.get(username='dora'); "
        "Fact.objects.get_or_create(user=dora, text='Dora prefers tea.', "
        "defaults={'category': 'preference'})",
        env=env,
    )
    return env


def test_an_inline_edit_saves_in_place(page, app_server, staff_world, db_rows):
    """Edit swaps the row for a form; an invalid save shows the error in the row; a valid save
    swaps the updated row back without a reload, and the history names the staff member."""
    log_in(page, app_server, username="sam", password=STAFF_PASSWORD)
    page.goto(f"{app_server.url}/staff/memories/?user=dora")
    page.evaluate("window.notReloaded = true")

    row = page.locator("tr.memory-row", has_text="Dora prefers tea.")
    row.get_by_role("link", name="Edit").click()
    text = page.get_by_label("Text:", exact=True)
    expect(text).to_have_value("Dora prefers tea.")

    text.fill("   ")
    page.get_by_role("button", name="Save").click()
    expect(page.locator("tr.editing .errorlist")).to_contain_text("This field is required.")

    page.get_by_label("Text:", exact=True).fill("Dora prefers green tea.")
    page.get_by_role("button", name="Save").click()
    saved = page.locator("tr.memory-row", has_text="Dora prefers green tea.")
    expect(saved).to_contain_text("Saved.")
    expect(page.locator("tr.editing")).to_have_count(0)
    assert page.evaluate("window.notReloaded") is True

    assert db_rows("SELECT text FROM memory_fact WHERE text LIKE 'Dora%'") == [
        ("Dora prefers green tea.",)
    ]
    editors = db_rows(
        "SELECT u.username, h.history_change_reason FROM memory_historicalfact h "
        "JOIN auth_user u ON u.id = h.history_user_id WHERE h.text = 'Dora prefers green tea.'"
    )
    assert editors == [("sam", "edited by staff: text")]


def test_cancel_puts_the_row_back(page, app_server, staff_world):
    """Cancel swaps the unchanged row back in place of the form."""
    log_in(page, app_server, username="sam", password=STAFF_PASSWORD)
    page.goto(f"{app_server.url}/staff/memories/?user=dora")
    row = page.locator("tr.memory-row", has_text="Dora prefers")
    row.get_by_role("link", name="Edit").click()
    page.get_by_role("link", name="Cancel").click()
    expect(page.locator("tr.editing")).to_have_count(0)
    expect(page.locator("tr.memory-row", has_text="Dora prefers")).to_be_visible()
