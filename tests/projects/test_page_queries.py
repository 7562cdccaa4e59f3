"""A project's pages read a fixed number of times whatever it holds: its page's counts and its
knowledge page do not read again per row nor per kind."""

from datetime import date, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from chat.services import conversation_create, message_create
from memory.models import ActionItem, Decision, Fact
from memory.services import action_item_set_done
from projects.selectors import project_knowledge, project_memory_counts

pytestmark = pytest.mark.django_db


def _learn(alice, project, n):
    """``n`` more of each kind in the project, each from a message, the tasks chained and
    one done."""
    talk = conversation_create(user=alice, title=f"Talk {n}", project=project)
    said = message_create(conversation=talk, role="user", content="We talked.")
    previous = None
    for i in range(n):
        key = f"{talk.pk}-{i}"
        decision = Decision.objects.create(
            user=alice, conversation=talk, project=project, what=f"Decide {key}", dedupe_key=key
        )
        decision.source_messages.add(said)
        fact = Fact.objects.create(
            user=alice, conversation=talk, project=project, text=f"Fact {key}", dedupe_key=key
        )
        fact.source_messages.add(said)
        item = ActionItem.objects.create(
            user=alice, conversation=talk, project=project, what=f"Do {key}", dedupe_key=key,
            due_date=date.today() + timedelta(days=i),
        )  # fmt: skip
        item.source_messages.add(said)
        if previous is not None:
            item.depends_on.add(previous)
        previous = item
    action_item_set_done(item=previous, actor=alice, done=True)


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


@pytest.mark.parametrize("page", ["projects:detail", "projects:knowledge", "projects:briefing"])
def test_a_project_page_reads_as_often_with_many_rows_as_with_few(
    alice, alice_client, garden, page
):
    url = reverse(page, args=[garden.pk])
    _learn(alice, garden, 1)
    few = _queries(alice_client, url)
    _learn(alice, garden, 6)
    assert _queries(alice_client, url) == few


def test_the_counts_of_a_project_are_one_statement(alice, garden, django_assert_num_queries):
    _learn(alice, garden, 3)
    with django_assert_num_queries(1):
        counts = project_memory_counts(project=garden)
    assert counts == {"facts": 3, "decisions": 3, "open_items": 2}


def test_what_a_project_knows_reads_each_kind_once(alice, garden, django_assert_num_queries):
    """Per kind: its rows (with their conversation and project), their sources, their
    channels; then the tasks' dependencies and status histories. No kind read twice."""
    _learn(alice, garden, 3)
    with django_assert_num_queries(3 * 3 + 2):
        knowledge = project_knowledge(project=garden)
    assert [len(knowledge.decisions), len(knowledge.open_items), len(knowledge.facts)] == [3, 2, 3]
