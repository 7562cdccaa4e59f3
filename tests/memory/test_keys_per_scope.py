"""Decisions and action items are one per user, scope and key (issue 37, memory 0017): the
same one said in two projects, or in a project and outside any, is learned in each; said
again in the same scope, it merges. A memory moved (or carried by its conversation) into a
scope where the same one already is merges into it, both histories kept."""

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from chat.services import conversation_create, message_create
from memory.models import ActionItem, Decision, Fact, MemoryState
from memory.services import memories_from_turn, memory_update
from memory.services.moves import EVERYWHERE, conversation_move, memory_move, project_empty
from projects.models import Project

pytestmark = pytest.mark.django_db


@pytest.fixture
def garden(alice):
    return Project.objects.create(user=alice, name="Garden")


@pytest.fixture
def allotment(alice):
    return Project.objects.create(user=alice, name="Allotment")


def _say(conversation, text):
    message = message_create(conversation=conversation, role="user", content=text)
    memories_from_turn(conversation=conversation, message=message)
    return message


DECIDED = "We decided to use copper tape against slugs."
TO_DO = "I need to order the seed potatoes by Friday."


def test_the_same_decision_said_in_two_projects_is_learned_in_each(alice, garden, allotment):
    in_garden = conversation_create(user=alice, project=garden)
    in_allotment = conversation_create(user=alice, project=allotment)
    outside = conversation_create(user=alice)

    _say(in_garden, DECIDED)
    _say(in_allotment, DECIDED)
    _say(outside, DECIDED)

    decisions = Decision.objects.filter(user=alice)
    assert sorted(d.project_id or 0 for d in decisions) == sorted([garden.pk, allotment.pk, 0])
    assert len({d.dedupe_key for d in decisions}) == 1


def test_the_same_action_item_said_in_two_projects_is_learned_in_each(alice, garden, allotment):
    _say(conversation_create(user=alice, project=garden), TO_DO)
    _say(conversation_create(user=alice, project=allotment), TO_DO)
    projects = set(ActionItem.objects.values_list("project_id", flat=True))
    assert projects == {garden.pk, allotment.pk}


def test_said_again_in_the_same_scope_it_merges(alice, garden):
    first = conversation_create(user=alice, project=garden)
    second = conversation_create(user=alice, project=garden)
    said = _say(first, DECIDED)
    again = _say(second, DECIDED)
    decision = Decision.objects.get(user=alice)
    assert decision.project_id == garden.pk
    assert set(decision.source_messages.values_list("pk", flat=True)) == {said.pk, again.pk}
    _say(first, TO_DO)
    _say(second, TO_DO)
    assert ActionItem.objects.filter(user=alice).count() == 1


def test_a_project_says_nothing_into_the_row_everywhere_reads(alice, garden):
    """Said first outside, then in a project with its reasons: each scope has its own row,
    and the project's reasons stay in the project's."""
    from memory.services import decision_remember

    outside = conversation_create(user=alice)
    in_garden = conversation_create(user=alice, project=garden)
    decision_remember(user=alice, conversation=outside, what="Use copper tape")
    decision_remember(
        user=alice, conversation=in_garden, what="Use copper tape", rationale="Slugs ate the kale"
    )
    everywhere = Decision.objects.get(project__isnull=True)
    assert everywhere.rationale == ""
    assert Decision.objects.get(project=garden).rationale == "Slugs ate the kale"


@pytest.mark.parametrize("model", [Decision, ActionItem])
def test_the_database_holds_one_per_user_scope_and_key(alice, bob, garden, allotment, model):
    def make(user, project):
        return model.objects.create(user=user, project=project, what="Dig", dedupe_key="dig")

    make(alice, None)
    make(alice, garden)
    make(alice, allotment)
    make(bob, None)
    for project in (None, garden):
        with pytest.raises(IntegrityError), transaction.atomic():
            make(alice, project)
    assert model.objects.filter(user=alice).count() == 3


def test_an_edit_may_not_make_two_of_one_scope_but_may_match_another(alice, garden):
    from django.core.exceptions import ValidationError

    Decision.objects.create(user=alice, what="Dig", dedupe_key="dig")
    in_garden = Decision.objects.create(user=alice, project=garden, what="Weed", dedupe_key="weed")
    edited = memory_update(memory=in_garden, actor=alice, changes={"what": "Dig"})
    assert edited.dedupe_key == "dig" and edited.project_id == garden.pk
    other = Decision.objects.create(user=alice, project=garden, what="Rake", dedupe_key="rake")
    with pytest.raises(ValidationError, match="in this project"):
        memory_update(memory=other, actor=alice, changes={"what": "dig"})


def _decision(user, project, **fields):
    fields.setdefault("what", "Use copper tape")
    return Decision.objects.create(
        user=user, project=project, dedupe_key="use copper tape", **fields
    )


def test_a_decision_moved_where_it_already_is_merges_keeping_both_histories(alice, garden):
    talk = conversation_create(user=alice)
    said = message_create(conversation=talk, role="user", content="copper tape it is")
    moved = _decision(alice, None, rationale="Slugs", alternatives=["Beer traps"])
    moved.source_messages.add(said)
    there = _decision(alice, garden, context="The kale bed", alternatives=["Pellets"])

    kept = memory_move(obj=moved, project=garden, actor=alice)

    assert kept.pk == there.pk
    assert not Decision.objects.filter(pk=moved.pk).exists()
    there.refresh_from_db()
    assert (there.context, there.rationale) == ("The kale bed", "Slugs")
    assert there.alternatives == ["Pellets", "Beer traps"]
    assert list(there.source_messages.all()) == [said]
    merged = there.history.first()
    assert merged.history_user == alice and f"merged with decision #{moved.pk}" in (
        merged.history_change_reason
    )
    gone = Decision.history.filter(id=moved.pk, history_type="-").get()
    assert f"merged into decision #{there.pk}" in gone.history_change_reason
    assert Decision.history.filter(id=moved.pk).count() == 2  # created, then merged away


def test_the_users_word_wins_a_merge(alice, garden):
    edited = _decision(alice, None, what="Use Copper tape!", state=MemoryState.EDITED)
    learned = _decision(alice, garden, state=MemoryState.LEARNED)
    kept = memory_move(obj=edited, project=garden, actor=alice)
    assert kept.pk == learned.pk
    assert (kept.what, kept.state) == ("Use Copper tape!", MemoryState.EDITED)


def test_an_action_item_merged_takes_the_newer_status_and_the_dependencies(alice, garden):
    moved = ActionItem.objects.create(user=alice, what="Order seeds", dedupe_key="order seeds")
    there = ActionItem.objects.create(
        user=alice, project=garden, what="Order seeds", dedupe_key="order seeds", owner="Sam"
    )
    first = ActionItem.objects.create(user=alice, project=garden, what="Plan", dedupe_key="plan")
    later = ActionItem.objects.create(user=alice, project=garden, what="Sow", dedupe_key="sow")
    moved.depends_on.add(first)
    later.depends_on.add(moved)
    ActionItem.objects.filter(pk=moved.pk).update(  # the newer word: done since
        status=ActionItem.Status.DONE, updated_at=timezone.now()
    )
    moved.refresh_from_db()

    kept = memory_move(obj=moved, project=garden, actor=alice)

    assert kept.pk == there.pk
    assert (kept.status, kept.owner) == (ActionItem.Status.DONE, "Sam")
    assert list(kept.depends_on.all()) == [first]
    assert list(later.depends_on.all()) == [there]


def test_a_fact_moved_where_it_already_is_merges(alice, garden):
    moved = Fact.objects.create(user=alice, text="Soil is clay", dedupe_key="soil is clay")
    there = Fact.objects.create(
        user=alice, project=garden, text="Soil is clay", dedupe_key="soil is clay", mentions=2
    )
    kept = memory_move(obj=moved, project=garden, actor=alice)
    assert kept.pk == there.pk and kept.mentions == 3
    assert Fact.objects.filter(user=alice).count() == 1


def test_a_conversation_moved_brings_its_decision_into_the_one_there(alice, garden):
    talk = conversation_create(user=alice)
    said = _say(talk, DECIDED)
    _say(conversation_create(user=alice, project=garden), DECIDED)
    assert Decision.objects.count() == 2

    moved = conversation_move(conversation=talk, project=garden, actor=alice)

    assert moved.memories["decisions"] == 1
    decision = Decision.objects.get()
    assert decision.project_id == garden.pk
    assert decision.source_messages.filter(pk=said.pk).exists()


def test_a_project_deleted_to_everywhere_merges_what_everywhere_has(alice, garden):
    _decision(alice, None)
    _decision(alice, garden, rationale="Slugs")
    project_empty(project=garden, keep=EVERYWHERE, actor=alice)
    garden.delete()
    assert Decision.objects.get().rationale == "Slugs"


def test_the_memory_page_says_when_a_move_merged(alice, alice_client, garden):
    url = lambda d: reverse("memory:move", args=["decision", d.pk])  # noqa: E731
    moved = _decision(alice, None)
    there = _decision(alice, garden)

    response = alice_client.post(url(moved), {"project": str(garden.pk)}, HTTP_HX_REQUEST="true")

    assert response.status_code == 200
    assert "“Garden” already had this decision" in response.text
    assert Decision.objects.get().pk == there.pk
    back = _decision(alice, None)  # and without JavaScript: back to the page, which says so
    response = alice_client.post(url(back), {"project": str(garden.pk)}, follow=True)
    assert response.redirect_chain[-1][0].startswith(reverse("memory:page"))
    assert "“Garden” already had this decision" in response.text
