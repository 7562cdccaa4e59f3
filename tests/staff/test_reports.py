"""Reports: meeting minutes, executive briefing, progress update — shown and downloadable."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from memory.models import ActionItem, Decision
from staff.reports import REPORTS, md
from staff.selectors.reports import report_data_for_conversation, report_data_for_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(world, alice):
    conversation = world["conversation"]
    today = timezone.localdate()
    Decision.objects.create(
        user=alice,
        conversation=conversation,
        what="Launch in May",
        status="proposed",
        dedupe_key="m",
    )
    late = ActionItem.objects.create(
        user=alice,
        conversation=conversation,
        what="Book the venue",
        owner="Bob",
        due_date=today - timedelta(days=2),
        dedupe_key="v",
    )
    done = ActionItem.objects.create(
        user=alice, conversation=conversation, what="Pick a date", status="done", dedupe_key="d"
    )
    world["action"].depends_on.add(late)
    return {"late": late, "done": done, **world}


def test_minutes_list_summary_decisions_actions_and_topics(project):
    """Minutes hold the current summary, decisions with rationale, an action table."""
    text = REPORTS["minutes"].build(
        report_data_for_conversation(conversation=project["conversation"])
    )
    assert text.startswith("# Meeting minutes: Launch planning")
    assert "The team chose PostgreSQL for the launch." in text
    assert "1. **Use PostgreSQL** (Decided)" in text and "Rationale: it scales" in text
    assert "| Book the venue | Bob |" in text and "| Pick a date | — | — | Done |" in text
    assert "- launch" in text


def test_the_briefing_flags_what_needs_attention(project):
    """Overdue items and decisions awaiting a decision are called out."""
    text = REPORTS["briefing"].build(
        report_data_for_conversation(conversation=project["conversation"])
    )
    assert "Decisions taken: 1; awaiting a decision: 1" in text
    assert "Action items open: 2 (overdue: 1); done: 1" in text
    assert "- Overdue: Book the venue — owner: Bob" in text
    assert "- Awaiting a decision: Launch in May" in text


def test_the_progress_update_groups_by_status_and_shows_blockers(project):
    """Completed, open, and what waits on unfinished work."""
    text = REPORTS["progress"].build(
        report_data_for_conversation(conversation=project["conversation"])
    )
    completed = text.split("## Completed")[1].split("##")[0]
    assert "Pick a date" in completed
    blockers = text.split("## Blockers and delays")[1].split("##")[0]
    assert "Write the migration plan" in blockers and "waiting on: Book the venue" in blockers


def test_a_user_report_covers_all_their_conversations(project, alice):
    """The user scope lists each conversation's summary under its title."""
    text = REPORTS["minutes"].build(report_data_for_user(user=alice))
    assert "### Launch planning" in text and "All 1 conversation of alice" in text


def test_markdown_in_memories_is_escaped():
    """Memory text cannot inject Markdown structure."""
    assert md("**bold** | [link](x) <b>") == r"\*\*bold\*\* \| \[link\](x) \<b\>"


def test_the_page_renders_sanitised_html(staff_client, project, alice):
    """Viewable in the page; HTML from a memory is not passed through."""
    Decision.objects.create(
        user=alice,
        conversation=project["conversation"],
        what='<img src=x onerror="alert(1)">',
        dedupe_key="x",
    )
    url = reverse("staff:conversation_report", args=[project["conversation"].pk, "minutes"])
    html = staff_client.get(url).content.decode()
    assert "<h1>Meeting minutes: Launch planning</h1>" in html
    assert "<table>" in html
    assert "<img" not in html.split('<article class="card report">')[1].split("</article>")[0]


@pytest.mark.parametrize("report", ["minutes", "briefing", "progress"])
def test_reports_download_as_markdown(staff_client, project, alice, report):
    """The download is a text/markdown attachment, for a conversation and for a user."""
    for url in (
        reverse("staff:conversation_report_download", args=[project["conversation"].pk, report]),
        reverse("staff:user_report_download", args=[alice.pk, report]),
    ):
        response = staff_client.get(url)
        assert response["Content-Type"] == "text/markdown; charset=utf-8"
        assert response["Content-Disposition"].startswith(f'attachment; filename="{report}-')
        assert response.content.decode().startswith("# ")


def test_an_unknown_report_is_404(staff_client, project):
    """Only the three kinds."""
    url = reverse("staff:conversation_report", args=[project["conversation"].pk, "gossip"])
    assert staff_client.get(url).status_code == 404


def test_a_conversation_without_summary_still_reports(staff_client, alice):
    """No summary, no decisions: the report says so instead of failing."""
    from chat.services import conversation_create

    conversation = conversation_create(user=alice, title="Empty")
    text = REPORTS["briefing"].build(report_data_for_conversation(conversation=conversation))
    assert "No summary has been made yet." in text and "None planned." in text


def test_summary_bullets_stay_bullets_and_numbers_stay_text():
    """A summary's "- " lines are list items; a line starting "1." is not turned into a list."""
    from staff.reports import _paragraphs

    text = _paragraphs("- first point\n- second point\n1. Main topics: launch.\nPlain line.")
    assert text == "- first point\n- second point\n\n1\\. Main topics: launch.\n\nPlain line."
