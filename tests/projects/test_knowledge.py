"""The project's knowledge page and its Markdown briefing (issue 37 item 4)."""

import html
from datetime import date, timedelta
from urllib.parse import quote

import pytest
from django.urls import reverse
from django.utils import timezone

from chat.services import conversation_create, message_create
from memory.models import ActionItem, Decision, Fact
from memory.services import action_item_set_done

pytestmark = pytest.mark.django_db


@pytest.fixture
def known(alice, garden):
    """The Garden project's talk: a decision, two tasks (one waiting on the other, one done),
    a fact; and a fact outside the project."""
    talk = conversation_create(user=alice, title="Beds", project=garden)
    said = message_create(conversation=talk, role="user", content="We go with raised beds.")
    decision = Decision.objects.create(
        user=alice, conversation=talk, project=garden, what="Build raised beds",
        context="Clay soil", rationale="Better drainage", alternatives=["Rows", "Pots"],
        stakeholders=["Alice", "Sam"], decided_at=timezone.now() - timedelta(days=3),
        dedupe_key="beds",
    )  # fmt: skip
    decision.source_messages.add(said)
    wood = ActionItem.objects.create(
        user=alice, conversation=talk, project=garden, what="Buy timber", owner="Sam",
        due_date=date.today() + timedelta(days=5), dedupe_key="wood",
    )  # fmt: skip
    build = ActionItem.objects.create(
        user=alice, conversation=talk, project=garden, what="Assemble the beds", owner="Alice",
        due_date=date.today() + timedelta(days=10), dedupe_key="build",
    )  # fmt: skip
    build.depends_on.add(wood)
    soil = ActionItem.objects.create(
        user=alice, conversation=talk, project=garden, what="Test the soil", dedupe_key="soil"
    )
    action_item_set_done(item=soil, actor=alice, done=True)
    fact = Fact.objects.create(
        user=alice, conversation=talk, project=garden, text="The soil is heavy clay",
        dedupe_key="clay",
    )  # fmt: skip
    fact.source_messages.add(said)
    Fact.objects.create(user=alice, text="Lives in Porto", dedupe_key="porto")
    Fact.objects.create(
        user=alice, project=garden, text="Waiting for a yes", state="suggested", dedupe_key="s"
    )
    return {"said": said, "decision": decision, "wood": wood, "build": build, "soil": soil}


def test_the_knowledge_page_shows_decisions_tasks_timeline_and_facts(alice_client, garden, known):
    page = alice_client.get(reverse("projects:knowledge", args=[garden.pk])).text
    for text in (
        "Build raised beds", "Clay soil", "Better drainage", "Rows; Pots", "Alice, Sam",
        "Buy timber", "Assemble the beds", "Test the soil", "The soil is heavy clay",
    ):  # fmt: skip
        assert text in page, text
    assert "Lives in Porto" not in page  # not the project's
    assert "Waiting for a yes" not in page  # a suggestion waits on the Memory page
    open_part = page[page.index('id="open-items"') : page.index('id="done-items"')]
    done_part = page[page.index('id="done-items"') : page.index('id="timeline"')]
    assert "Buy timber" in open_part and "Test the soil" not in open_part
    assert "Test the soil" in done_part
    # Dependencies and the status history (simple-history) of each task.
    assert f'href="#action_item-{known["wood"].pk}"' in open_part
    assert "Open" in done_part and "Done" in done_part and f"by {garden.user.username}" in done_part


def test_each_item_links_to_its_source_message_and_can_be_edited(alice_client, garden, known):
    page = alice_client.get(reverse("projects:knowledge", args=[garden.pk])).text
    said = known["said"]
    assert f"?highlight={said.pk}#m{said.pk}" in page
    assert reverse("memory:edit", args=["decision", known["decision"].pk]) in page
    assert reverse("memory:done", args=["action_item", known["wood"].pk]) in page


def test_the_timeline_lists_decisions_and_milestones_by_date(alice_client, garden, known):
    page = alice_client.get(reverse("projects:knowledge", args=[garden.pk])).text
    timeline = page[page.index('id="timeline"') : page.index('id="facts"')]
    order = [timeline.index(t) for t in ("Build raised beds", "Buy timber", "Assemble the beds")]
    assert order == sorted(order)
    assert "Test the soil" in timeline  # done today: a milestone


def test_the_briefing_downloads_as_markdown(alice_client, garden, known):
    response = alice_client.get(reverse("projects:briefing", args=[garden.pk]))
    assert response["Content-Type"].startswith("text/markdown")
    assert 'filename="briefing-Garden.md"' in response["Content-Disposition"]
    text = response.content.decode()
    assert text.startswith("# Project briefing: Garden\n")
    assert "1. **Build raised beds** (Decided)" in text
    assert "   - Rationale: Better drainage" in text
    assert "| Buy timber | Sam |" in text
    assert "## Timeline" in text and "## Facts" in text and "- The soil is heavy clay" in text
    assert "Lives in Porto" not in text


def test_the_briefing_escapes_markdown_in_stored_text(alice_client, alice, garden):
    Fact.objects.create(
        user=alice, project=garden, text="[click](javascript:alert(1)) # not a heading",
        dedupe_key="x",
    )  # fmt: skip
    text = alice_client.get(reverse("projects:briefing", args=[garden.pk])).content.decode()
    assert r"- \[click\](javascript:alert(1)) \# not a heading" in text


def test_an_empty_project_says_it_knows_nothing_yet(alice_client, garden):
    page = alice_client.get(reverse("projects:knowledge", args=[garden.pk])).text
    assert "Nothing learned yet" in page
    text = alice_client.get(reverse("projects:briefing", args=[garden.pk])).content.decode()
    assert "None recorded." in text and "no messages yet" in text


def test_each_row_of_the_knowledge_page_says_it_is_only_in_its_project(alice_client, garden, known):
    """The row's select (as on the Memory page) names the project it is in, selected: not
    "Everywhere" alone, which would misstate where the assistant uses it."""
    page = alice_client.get(reverse("projects:knowledge", args=[garden.pk])).text
    decision = known["decision"]
    select = page.split(f'id="move-decision-{decision.pk}"')[1].split("</select>")[0]
    assert f'<option value="{garden.pk}" selected>Only in Garden</option>' in select


def _form_next(page: str, action: str) -> str:
    """The ``next`` a plain form posting to ``action`` sends (the page it comes back to)."""
    form = page[page.index(f'action="{action}"') :]
    form = form[: form.index("</form>")]
    marker = 'name="next" value="'
    start = form.index(marker) + len(marker)
    return html.unescape(form[start : form.index('"', start)])


def test_without_javascript_an_edit_comes_back_to_the_knowledge_page(alice_client, garden, known):
    """Edit (a page of its own without JS), save: back on the knowledge page at that row."""
    here = reverse("projects:knowledge", args=[garden.pk])
    decision = known["decision"]
    edit = reverse("memory:edit", args=["decision", decision.pk])
    page = alice_client.get(here).text
    assert f'href="{edit}?next={quote(here, safe="")}"' in page

    form = alice_client.get(edit, {"next": here}).text
    assert _form_next(form, edit) == here
    assert f'href="{here}"' in form  # Cancel goes back too
    response = alice_client.post(edit, {"text": "Build two raised beds", "next": here})

    assert response.status_code == 302
    assert response["Location"] == f"{here}#decision-{decision.pk}"
    decision.refresh_from_db()
    assert decision.what == "Build two raised beds"


def test_without_javascript_every_row_action_comes_back_to_the_knowledge_page(
    alice_client, garden, known
):
    here = reverse("projects:knowledge", args=[garden.pk])
    page = alice_client.get(here).text
    done = reverse("memory:done", args=["action_item", known["wood"].pk])
    assert _form_next(page, done) == here
    response = alice_client.post(done, {"done": "1", "next": here})
    assert response["Location"] == f"{here}#action_item-{known['wood'].pk}"
    delete = reverse("memory:delete", args=["action_item", known["build"].pk])
    confirm = alice_client.get(delete, {"next": here}).text
    assert _form_next(confirm, delete) == here
    assert alice_client.post(delete, {"next": here})["Location"] == here


@pytest.mark.parametrize(
    "unsafe", ["https://evil.example/", "//evil.example/", "javascript:alert(1)", "/\\evil"]
)
def test_a_next_to_another_site_is_never_followed_nor_linked(alice_client, known, unsafe):
    decision = known["decision"]
    edit = reverse("memory:edit", args=["decision", decision.pk])
    form = alice_client.get(edit, {"next": unsafe}).text
    assert "evil" not in form and "javascript:" not in form
    response = alice_client.post(edit, {"text": "Build raised beds now", "next": unsafe})
    assert response["Location"] == f"{reverse('memory:page')}#decision-{decision.pk}"


def test_each_rows_move_select_shows_the_project_it_is_in(alice_client, garden, known):
    """The select says where the memory is used now ("Only in Garden"), as on the Memory
    page: not "Everywhere", which a Move would then make true."""
    page = alice_client.get(reverse("projects:knowledge", args=[garden.pk])).text
    select = page[page.index(f'id="move-decision-{known["decision"].pk}"') :]
    select = select[: select.index("</select>")]
    assert f'<option value="{garden.pk}" selected>Only in Garden</option>' in select
    assert '<option value="">Everywhere</option>' in select


def test_a_task_the_user_took_on_names_them_as_you(alice_client, alice, garden):
    """The extractor writes "user" for the person chatting: the page says "you"."""
    ActionItem.objects.create(
        user=alice, project=garden, what="Buy netting", owner="user", dedupe_key="netting"
    )
    page = alice_client.get(reverse("projects:knowledge", args=[garden.pk])).text
    assert "<dt>Owner</dt><dd>you</dd>" in page
    assert "<dd>user</dd>" not in page
