"""A memory held both everywhere and in the project, in other words, reaches a project
conversation's memory block once: the project's own (``memory.duplicates``), and "What the model
saw" says which was left out as saying the same."""

import pytest
from django.template.loader import render_to_string

from chat.models import Conversation
from chat.services import conversation_create, message_create
from chat.templatetags.chat_tags import report_view
from memory import recall
from memory.context import build
from memory.duplicates import same, signature
from memory.models import ActionItem, Decision, Fact
from projects.models import Project


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Use raised beds for the vegetables", "We decided to use raised beds for vegetables"),
        ("Buy tomato seeds", "Buy the tomato seeds."),
        ("Order netting for the fence by Friday", "order NETTING for fence by friday"),
    ],
)
def test_the_same_in_other_words_is_the_same(a, b):
    assert same(signature(a), signature(b))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Plant tomatoes in the south bed", "Plant tomatoes in the north bed"),
        ("Ada is my daughter", "Ada is not my daughter"),
        ("The deadline is March 3", "The deadline is March 5"),
        ("Use PostgreSQL", "Use SQLite"),
        # the longer one says much more: both are worth their line
        ("Use raised beds", "Use raised beds of larch boards lined with copper tape"),
    ],
)
def test_a_changed_word_number_or_negation_is_not(a, b):
    assert not same(signature(a), signature(b))


pytestmark = pytest.mark.django_db

PROJECT_SAYS = "Use raised beds of larch for the vegetables"
EVERYWHERE_SAYS = "We decided to use raised beds of larch for vegetables"


@pytest.fixture
def garden(alice):
    return Project.objects.create(user=alice, name="Garden")


def _conversation(user, project, title):
    conversation = conversation_create(user=user, title=title)
    Conversation.objects.filter(pk=conversation.pk).update(project=project)
    conversation.refresh_from_db()
    return conversation


def _held_twice(model, field, alice, garden):
    """The same memory in the project and everywhere, each learned in its own conversation."""
    inside = _conversation(alice, garden, "Beds")
    outside = _conversation(alice, None, "Notes")
    own = model.objects.create(
        user=alice, conversation=inside, project=garden, dedupe_key="p", **{field: PROJECT_SAYS}
    )
    general = model.objects.create(
        user=alice, conversation=outside, dedupe_key="e", **{field: EVERYWHERE_SAYS}
    )
    return own, general


KINDS = [
    (Decision, "what", "decision"),
    (ActionItem, "what", "action_item"),
    (Fact, "text", "fact"),
]


@pytest.mark.parametrize(("model", "field", "kind"), KINDS)
@pytest.mark.parametrize("known_earlier", [0, 99])  # a new session's resume items, or later
def test_a_project_conversation_recalls_the_projects_own_once(
    alice, garden, model, field, kind, known_earlier
):
    own, general = _held_twice(model, field, alice, garden)
    asking = _conversation(alice, garden, "Planning")
    found = recall.recall_for_turn(
        user=alice,
        conversation=asking,
        query="raised beds larch vegetables",
        known_earlier=known_earlier,
    )
    of_kind = [item for item in found if item.kind == kind]
    assert [item.id for item in of_kind] == [own.pk]
    assert [item.id for item in of_kind[0].duplicates] == [general.pk]


def test_outside_the_project_the_general_one_is_recalled(alice, garden):
    _own, general = _held_twice(Decision, "what", alice, garden)
    elsewhere = _conversation(alice, None, "Holiday")
    found = recall.recall_for_turn(
        user=alice, conversation=elsewhere, query="raised beds larch", known_earlier=99
    )
    assert [(i.kind, i.id) for i in found if i.kind == "decision"] == [("decision", general.pk)]


def test_different_memories_of_the_project_and_everywhere_are_both_recalled(alice, garden):
    inside = _conversation(alice, garden, "Beds")
    north = Decision.objects.create(
        user=alice, conversation=inside, project=garden, dedupe_key="n",
        what="Put the larch raised bed on the north side",
    )  # fmt: skip
    south = Decision.objects.create(
        user=alice, dedupe_key="s", what="Put the larch raised bed on the south side"
    )
    found = recall.recall_for_turn(
        user=alice, conversation=inside, query="larch raised bed side", known_earlier=99
    )
    assert {north.pk, south.pk} <= {i.id for i in found if i.kind == "decision"}


def test_the_block_carries_one_and_the_report_says_which_was_left_out(alice, garden):
    own, general = _held_twice(Decision, "what", alice, garden)
    asking = _conversation(alice, garden, "Planning")
    said = message_create(conversation=asking, role="user", content="Which raised beds of larch?")
    built = build(conversation=asking, user_text=said.content, user_message=said)
    block = next(m["content"] for m in built.messages if "<memory>" in m["content"])
    assert PROJECT_SAYS in block
    assert EVERYWHERE_SAYS not in block
    sent = [(m["kind"], m["id"]) for m in built.report["memories"]]
    assert ("decision", own.pk) in sent and ("decision", general.pk) not in sent
    (dropped,) = [m for m in built.report["memories_left_out"] if m["left_out"] == "duplicate"]
    assert (dropped["id"], dropped["same_as"], dropped["same_as_project"]) == (
        general.pk,
        PROJECT_SAYS,
        True,
    )
    html = render_to_string("chat/_context_report_body.html", report_view(built.report))
    assert "says the same as “Use raised beds of larch for the vegetables”, sent instead" in html
    assert "(this project's own)" in html
