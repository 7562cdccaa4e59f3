"""Inline edit, pin, supersede and delete (one or many), every change recorded with its author."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.extraction import normalise_key
from memory.models import ActionItem, Decision, Fact

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _edit_url(kind, pk):
    return reverse("staff:memory_edit", args=[kind, pk])


def _fact_data(fact, **changes):
    prefix = f"fact-{fact.pk}-"
    data = {
        "text": fact.text,
        "subject": fact.subject,
        "category": fact.category,
        "importance": fact.importance,
        "status": fact.status,
        **changes,
    }
    if fact.pinned and "pinned" not in changes:
        data["pinned"] = "on"
    return {prefix + k: v for k, v in data.items()}


def test_edit_returns_a_form_row_for_htmx(staff_client, world):
    """Clicking Edit swaps the row for a form row with the current values."""
    fact = world["fact"]
    html = staff_client.get(_edit_url("fact", fact.pk), **HTMX).content.decode()
    assert html.lstrip().startswith(f'<tr id="fact-{fact.pk}" class="memory-row editing">')
    assert "Alice leads the launch." in html and "<html" not in html


def test_saving_swaps_the_row_back_and_records_the_editor(staff_client, staff, world):
    """A valid save returns the row; history names the staff member and the fields."""
    fact = world["fact"]
    response = staff_client.post(
        _edit_url("fact", fact.pk), _fact_data(fact, text="Alice leads the launch team."), **HTMX
    )
    html = response.content.decode()
    assert html.lstrip().startswith(f'<tr id="fact-{fact.pk}" class="memory-row just-saved">')
    assert "Alice leads the launch team." in html
    fact.refresh_from_db()
    assert fact.text == "Alice leads the launch team."
    assert fact.dedupe_key == normalise_key("Alice leads the launch team.")
    record = fact.history.latest("history_date")
    assert record.history_user == staff and record.history_type == "~"
    assert record.history_change_reason == "edited by staff: text"


def test_validation_errors_show_inline_and_nothing_is_saved(staff_client, world):
    """Empty text and an importance above 1 come back in the form row."""
    fact = world["fact"]
    before = fact.history.count()
    response = staff_client.post(
        _edit_url("fact", fact.pk), _fact_data(fact, text="  ", importance=4), **HTMX
    )
    html = response.content.decode()
    assert "memory-row editing" in html
    assert "This field is required." in html or "A fact needs some text." in html
    assert "less than or equal to 1" in html
    fact.refresh_from_db()
    assert fact.text == "Alice leads the launch." and fact.history.count() == before


def test_an_edit_that_changes_nothing_records_nothing(staff_client, world):
    """Saving the same values adds no history."""
    fact = world["fact"]
    before = fact.history.count()
    staff_client.post(_edit_url("fact", fact.pk), _fact_data(fact), **HTMX)
    assert fact.history.count() == before


def test_a_decision_cannot_be_edited_into_a_duplicate(staff_client, alice, world):
    """Decisions are unique per user by their text: the clash is an inline error."""
    other = Decision.objects.create(user=alice, what="Use Redis", dedupe_key="use redis")
    prefix = f"decision-{other.pk}-"
    response = staff_client.post(
        _edit_url("decision", other.pk),
        {prefix + "what": "Use  PostgreSQL", prefix + "status": "decided"},
        **HTMX,
    )
    assert "already has that decision" in response.content.decode()
    other.refresh_from_db()
    assert other.what == "Use Redis"


def test_decision_lists_are_split_on_commas(staff_client, world):
    """Alternatives and stakeholders are typed as comma-separated lists."""
    decision = world["decision"]
    prefix = f"decision-{decision.pk}-"
    staff_client.post(
        _edit_url("decision", decision.pk),
        {
            prefix + "what": "Use PostgreSQL",
            prefix + "alternatives": "MySQL, SQLite,  MySQL",
            prefix + "stakeholders": "Alice",
            prefix + "status": "revisited",
        },
        **HTMX,
    )
    decision.refresh_from_db()
    assert decision.alternatives == ["MySQL", "SQLite"] and decision.status == "revisited"


def test_action_item_due_dates_are_edited(staff_client, world):
    """An action item's owner, due date and status."""
    action = world["action"]
    prefix = f"action_item-{action.pk}-"
    staff_client.post(
        _edit_url("action_item", action.pk),
        {
            prefix + "what": action.what,
            prefix + "owner": "Bob",
            prefix + "due_date": "2030-01-31",
            prefix + "status": "in_progress",
        },
        **HTMX,
    )
    action.refresh_from_db()
    assert (action.owner, str(action.due_date), action.status) == (
        "Bob",
        "2030-01-31",
        "in_progress",
    )


def test_without_javascript_the_edit_is_a_page_that_redirects(staff_client, world):
    """GET gives a page with the form; POST saves and redirects to the list."""
    fact = world["fact"]
    page = staff_client.get(_edit_url("fact", fact.pk))
    assert b"<html" in page.content and b"Edit fact" in page.content
    response = staff_client.post(_edit_url("fact", fact.pk), _fact_data(fact, text="Changed."))
    assert response.status_code == 302 and response.url.startswith(reverse("staff:memories"))


def test_cancel_returns_the_unchanged_row(staff_client, world):
    """The row URL gives the row back (what Cancel swaps in)."""
    fact = world["fact"]
    html = staff_client.get(reverse("staff:memory_row", args=["fact", fact.pk]), **HTMX).content
    assert html.decode().lstrip().startswith(f'<tr id="fact-{fact.pk}" class="memory-row">')


def test_pin_and_unpin(staff_client, staff, world):
    """Pinning flips the flag, returns the row, and is recorded."""
    fact = world["fact"]
    html = staff_client.post(reverse("staff:fact_pin", args=[fact.pk]), {"pinned": "1"}, **HTMX)
    assert b"Unpin" in html.content
    fact.refresh_from_db()
    assert fact.pinned
    assert fact.history.latest("history_date").history_change_reason == "pinned by staff"
    staff_client.post(reverse("staff:fact_pin", args=[fact.pk]), {"pinned": "0"}, **HTMX)
    fact.refresh_from_db()
    assert not fact.pinned


def test_supersede_with_and_without_a_replacement(staff_client, staff, alice, bob, world):
    """A fact can be retired, optionally by another fact of the same user (not of another)."""
    fact = world["fact"]
    newer = Fact.objects.create(user=alice, text="Bob leads the launch.")
    url = reverse("staff:fact_supersede", args=[fact.pk])
    html = staff_client.post(url, {"by": world["bob_fact"].pk}, **HTMX).content.decode()
    assert "same user" in html
    html = staff_client.post(url, {"by": 99999}, **HTMX).content.decode()
    assert "no fact #99999" in html
    staff_client.post(url, {"by": newer.pk}, **HTMX)
    fact.refresh_from_db()
    assert fact.status == "superseded" and fact.superseded_by == newer
    record = fact.history.latest("history_date")
    assert record.history_user == staff and record.history_change_reason == "superseded by staff"
    lone = Fact.objects.create(user=alice, text="Retire me.")
    staff_client.post(reverse("staff:fact_supersede", args=[lone.pk]), {}, **HTMX)
    lone.refresh_from_db()
    assert lone.status == "superseded" and lone.superseded_by is None


def test_delete_asks_then_removes_the_row_and_keeps_history(staff_client, staff, world):
    """GET is a confirmation page; the HTMX POST empties the row; history records who."""
    fact = world["fact"]
    url = reverse("staff:memory_delete", args=["fact", fact.pk])
    assert b"Delete fact" in staff_client.get(url).content
    response = staff_client.post(url, **HTMX)
    assert response.status_code == 200 and response.content == b""
    assert not Fact.objects.filter(pk=fact.pk).exists()
    record = Fact.history.filter(id=fact.pk).latest("history_date")
    assert record.history_type == "-" and record.history_user == staff


def test_bulk_delete_confirms_without_javascript(staff_client, world):
    """Without confirm the selection is listed on a confirmation page and nothing goes."""
    ids = [world["fact"].pk, world["bob_fact"].pk]
    response = staff_client.post(reverse("staff:memory_bulk_delete", args=["fact"]), {"ids": ids})
    assert b"Delete 2 facts?" in response.content
    assert Fact.objects.filter(pk__in=ids).count() == 2
    response = staff_client.post(
        reverse("staff:memory_bulk_delete", args=["fact"]), {"ids": ids, "confirm": "1"}
    )
    assert response.status_code == 302 and not Fact.objects.filter(pk__in=ids).exists()


def test_bulk_delete_records_history_for_each(staff_client, staff, alice, world):
    """Each deleted memory gets its own deletion record naming the staff member; the
    HTMX answer is the table, with the list's filters applied."""
    facts = [Fact.objects.create(user=alice, text=f"bulk {i}") for i in range(5)]
    keep = Fact.objects.create(user=alice, text="keep me")
    response = staff_client.post(
        reverse("staff:memory_bulk_delete", args=["fact"]),
        {"ids": [f.pk for f in facts], "confirm": "1", "kind": "fact", "q": "keep"},
        **HTMX,
    )
    html = response.content.decode()
    assert "Deleted 5 facts." in html and "keep me" in html and "bulk 0" not in html
    records = Fact.history.filter(id__in=[f.pk for f in facts], history_type="-")
    assert records.count() == 5
    assert {r.history_user_id for r in records} == {staff.pk}
    assert Fact.objects.filter(pk=keep.pk).exists()


def test_bulk_delete_of_nothing_says_so(staff_client, world):
    """No selection: an inline error in the table."""
    response = staff_client.post(
        reverse("staff:memory_bulk_delete", args=["fact"]), {"confirm": "1"}, **HTMX
    )
    assert b"Select at least one memory." in response.content


def test_bulk_delete_only_touches_the_kind_named(staff_client, world):
    """Ids of another kind are not deleted by a fact bulk delete."""
    action = world["action"]
    staff_client.post(
        reverse("staff:memory_bulk_delete", args=["fact"]), {"ids": [action.pk], "confirm": "1"}
    )
    assert ActionItem.objects.filter(pk=action.pk).exists()
