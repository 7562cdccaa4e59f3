"""Edit → history → restore: any recorded version can be brought back, and the restore is
itself recorded."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.models import ActionItem, Fact

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _edit(client, fact, text):
    prefix = f"fact-{fact.pk}-"
    return client.post(
        reverse("staff:memory_edit", args=["fact", fact.pk]),
        {
            prefix + "text": text,
            prefix + "category": fact.category,
            prefix + "importance": fact.importance,
            prefix + "status": fact.status,
        },
        **HTMX,
    )


def test_the_history_page_shows_who_changed_what(staff_client, staff, world):
    """Each version with its author and the fields it changed, before and after."""
    fact = world["fact"]
    _edit(staff_client, fact, "Alice runs the launch.")
    html = staff_client.get(
        reverse("staff:memory_history", args=["fact", fact.pk])
    ).content.decode()
    assert "by <strong>sam</strong>" in html and "edited by staff: text" in html
    assert "<del>Alice leads the launch.</del>" in html
    assert "<ins>Alice runs the launch.</ins>" in html
    assert "dedupe_key" not in html  # kept by the code, not a field a person edits


def test_edit_then_restore_the_earlier_version(staff_client, staff, world):
    """Restoring the first version undoes the edit; the restore is a new record by staff."""
    fact = world["fact"]
    first = fact.history.earliest("history_date")
    _edit(staff_client, fact, "Alice runs the launch.")
    fact.refresh_from_db()
    assert fact.text == "Alice runs the launch."
    response = staff_client.post(
        reverse("staff:memory_restore", args=["fact", fact.pk, first.history_id])
    )
    assert response.status_code == 302
    fact.refresh_from_db()
    assert fact.text == "Alice leads the launch."
    records = list(fact.history.order_by("history_date"))
    assert len(records) == 3
    assert records[-1].history_user == staff
    assert records[-1].history_change_reason.startswith("restored to the version of")


def test_a_deleted_memory_can_be_restored(staff_client, staff, world):
    """After a delete the history page still opens, and restoring brings the row back."""
    fact = world["fact"]
    staff_client.post(reverse("staff:memory_delete", args=["fact", fact.pk]), **HTMX)
    assert not Fact.objects.filter(pk=fact.pk).exists()
    page = staff_client.get(reverse("staff:memory_history", args=["fact", fact.pk]))
    assert b"is deleted" in page.content
    deleted = Fact.history.filter(id=fact.pk).latest("history_date")
    staff_client.post(reverse("staff:memory_restore", args=["fact", fact.pk, deleted.history_id]))
    restored = Fact.objects.get(pk=fact.pk)
    assert restored.text == "Alice leads the launch." and restored.user_id == fact.user_id
    assert Fact.history.filter(id=fact.pk).latest("history_date").history_type == "+"


def test_a_restore_that_would_duplicate_a_decision_is_refused(staff_client, alice, world):
    """Restoring a deleted decision whose text another decision now has says why."""
    decision = world["decision"]
    staff_client.post(reverse("staff:memory_delete", args=["decision", decision.pk]), **HTMX)
    type(decision).objects.create(user=alice, what="Use PostgreSQL", dedupe_key=decision.dedupe_key)
    deleted = type(decision).history.filter(id=decision.pk).latest("history_date")
    response = staff_client.post(
        reverse("staff:memory_restore", args=["decision", decision.pk, deleted.history_id]),
        follow=True,
    )
    assert b"already has that decision" in response.content


def test_restore_drops_links_to_rows_that_are_gone(staff_client, alice, world):
    """A fact superseded by a fact since deleted comes back without the dangling link."""
    fact, newer = world["fact"], Fact.objects.create(user=alice, text="Newer")
    staff_client.post(reverse("staff:fact_supersede", args=[fact.pk]), {"by": newer.pk}, **HTMX)
    superseded = fact.history.latest("history_date")
    staff_client.post(reverse("staff:memory_delete", args=["fact", newer.pk]), **HTMX)
    staff_client.post(
        reverse("staff:memory_restore", args=["fact", fact.pk, superseded.history_id])
    )
    fact.refresh_from_db()
    assert fact.status == "superseded" and fact.superseded_by is None


def test_unknown_versions_are_404(staff_client, world):
    """A history id of another memory is not accepted."""
    other = world["bob_fact"].history.first()
    url = reverse("staff:memory_restore", args=["fact", world["fact"].pk, other.history_id])
    assert staff_client.post(url).status_code == 404
    assert (
        staff_client.get(reverse("staff:memory_history", args=["fact", 999999])).status_code == 404
    )


def test_the_change_list_shows_recent_changes_across_kinds(staff_client, staff, world):
    """Edits of facts and action items appear newest first, with their authors."""
    _edit(staff_client, world["fact"], "Alice runs the launch.")
    action = world["action"]
    prefix = f"action_item-{action.pk}-"
    staff_client.post(
        reverse("staff:memory_edit", args=["action_item", action.pk]),
        {prefix + "what": action.what, prefix + "owner": "Alice", prefix + "status": "done"},
        **HTMX,
    )
    html = staff_client.get(reverse("staff:changes")).content.decode()
    assert html.index("Action item changed") < html.index("Fact changed")
    assert "edited by staff: status" in html
    only_facts = staff_client.get(reverse("staff:changes"), {"kind": "fact"}).content.decode()
    assert "Action item changed" not in only_facts
    assert ActionItem.objects.get(pk=action.pk).status == "done"


def test_the_change_list_pages_by_date(staff_client, alice):
    """Older changes are reached through a keyset link."""
    for i in range(60):
        Fact.objects.create(user=alice, text=f"fact {i}")
    first = staff_client.get(reverse("staff:changes"))
    assert len(first.context["entries"]) == 50 and first.context["older"]
    older = staff_client.get(reverse("staff:changes") + first.context["older"])
    assert len(older.context["entries"]) == 10
