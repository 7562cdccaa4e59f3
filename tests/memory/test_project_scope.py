"""Projects scope memory (issue 37): what is said or learned in a project's conversations
reaches that project's conversations only; what is said outside any project reaches every
conversation. Tested for every kind the memory recalls, through the turn's own read
(``memory.recall.recall_for_turn``, what the context build asks) and the context build."""

import pytest

from chat.models import Conversation
from chat.services import conversation_create, message_create
from memory import recall
from memory.context import build
from memory.models import ActionItem, Decision, Fact, Summary
from memory.search import embeddings, vectors
from projects.models import Project

pytestmark = pytest.mark.django_db

# One made-up word per kind: a hit on it can only be that item.
GARDEN = {
    "message": "My zucchetti seedlings need staking this week",
    "fact": "The greenhouse thermostat is a Quillondor model",
    "decision": "Plant the marrowfat beans in the raised bed",
    "action_item": "Order the trellvine netting for the fence",
    "summary": "The user plans a courgette spindlewort border by the shed",
}
QUERY = {
    "message": "zucchetti seedlings",
    "fact": "Quillondor thermostat",
    "decision": "marrowfat beans",
    "action_item": "trellvine netting",
    "summary": "spindlewort border",
}
EVERYWHERE_FACT = "The user is allergic to brazilnut pollen"


def _conversation(user, project=None, title="Chat"):
    conversation = conversation_create(user=user, title=title)
    if project is not None:
        Conversation.objects.filter(pk=conversation.pk).update(project=project)
        conversation.refresh_from_db()
    return conversation


def _store(kind: str, conversation: Conversation, text: str):
    """One item of ``kind`` learned or said in ``conversation``."""
    user, project = conversation.user, conversation.project
    if kind == "message":
        return message_create(conversation=conversation, role="user", content=text)
    if kind == "summary":
        return Summary.objects.create(
            conversation=conversation, version=1, is_current=True, text=text
        )
    model = {"fact": Fact, "decision": Decision, "action_item": ActionItem}[kind]
    field = "text" if kind == "fact" else "what"
    return model.objects.create(
        user=user,
        conversation=conversation,
        project=project,
        dedupe_key=text.lower(),
        **{field: text},
    )


@pytest.fixture
def world(alice):
    garden = Project.objects.create(user=alice, name="Garden")
    work = Project.objects.create(user=alice, name="Work")
    talk = _conversation(alice, garden, "Garden talk")
    items = {kind: _store(kind, talk, text) for kind, text in GARDEN.items()}
    outside = _conversation(alice, None, "General")
    general = _store("fact", outside, EVERYWHERE_FACT)
    return {
        "garden": garden,
        "items": items,
        "general": general,
        "in_garden": _conversation(alice, garden, "Another garden chat"),
        "outside": _conversation(alice, None, "Holiday"),
        "in_work": _conversation(alice, work, "Work chat"),
    }


def _recalled(conversation, query) -> set[tuple[str, int]]:
    found = recall.recall_for_turn(
        user=conversation.user, conversation=conversation, query=query, known_earlier=99
    )
    return {(item.kind, item.id) for item in found}


@pytest.mark.parametrize("kind", list(GARDEN))
def test_a_project_conversation_recalls_the_projects_items_and_everywhere(world, kind):
    found = _recalled(world["in_garden"], f"{QUERY[kind]} brazilnut pollen")
    assert (kind, world["items"][kind].pk) in found
    assert ("fact", world["general"].pk) in found


@pytest.mark.parametrize("kind", list(GARDEN))
def test_a_conversation_outside_recalls_nothing_of_the_project(world, kind):
    found = _recalled(world["outside"], f"{QUERY[kind]} brazilnut pollen")
    assert (kind, world["items"][kind].pk) not in found
    assert ("fact", world["general"].pk) in found  # what was said outside reaches it


@pytest.mark.parametrize("kind", list(GARDEN))
def test_another_projects_conversation_recalls_nothing_of_it(world, kind):
    found = _recalled(world["in_work"], f"{QUERY[kind]} brazilnut pollen")
    assert (kind, world["items"][kind].pk) not in found
    assert ("fact", world["general"].pk) in found


def test_a_new_session_resumes_with_its_projects_items_only(world, alice):
    """Session resumption (a new conversation's first turns) reads its scopes too."""
    Fact.objects.filter(pk=world["items"]["fact"].pk).update(pinned=True, importance=1.0)
    project_items = {(k, world["items"][k].pk) for k in ("fact", "decision", "action_item")}
    in_garden = recall.recall_for_turn(user=alice, conversation=world["in_garden"], query="hi")
    outside = recall.recall_for_turn(user=alice, conversation=world["outside"], query="hi")
    in_work = recall.recall_for_turn(user=alice, conversation=world["in_work"], query="hi")
    assert project_items <= {(i.kind, i.id) for i in in_garden}
    assert not project_items & {(i.kind, i.id) for i in outside}
    assert not project_items & {(i.kind, i.id) for i in in_work}
    # later in a conversation, only the pinned facts come unasked: scoped as well
    pinned = recall.pinned_facts(user=alice, scopes=(0,))
    assert world["items"]["fact"].pk not in {i.id for i in pinned}


def test_the_context_build_of_a_conversation_outside_holds_nothing_of_the_project(world):
    query = " ".join(QUERY.values())
    outside = build(conversation=world["outside"], user_text=query)
    in_garden = build(conversation=world["in_garden"], user_text=query)
    said_outside = " ".join(m["content"] for m in outside.messages)
    said_in_garden = " ".join(m["content"] for m in in_garden.messages[:-1])
    for text in ("zucchetti", "Quillondor", "marrowfat", "trellvine", "spindlewort"):
        assert text not in said_outside.replace(query, "")
        assert text in said_in_garden


@pytest.fixture
def local_vectors(settings):
    settings.MEMORYCHAT_EMBEDDINGS = "local"
    settings.OPENAI_EMBEDDING_MODEL = ""
    vectors.forget_all()
    yield
    vectors.forget_all()


def test_a_vector_hit_reaches_its_project_only(world, alice, local_vectors):
    """A question sharing no word with the project's message finds it by meaning in the
    project, and not outside it nor in another project (the vectors are held per scope)."""
    dog = message_create(
        conversation=world["in_garden"], role="user", content="My dog Rex loves the beach"
    )
    embeddings.embed_pending()
    question = "Which pet enjoys the seaside?"
    assert ("message", dog.pk) in _recalled(world["in_garden"], question)
    assert ("message", dog.pk) not in _recalled(world["outside"], question)
    assert ("message", dog.pk) not in _recalled(world["in_work"], question)
    scopes = {s for (_, _, s) in vectors._held}
    assert world["garden"].pk in scopes


def test_the_index_follows_a_conversation_into_and_out_of_a_project(world, alice):
    outside = world["outside"]
    said = message_create(
        conversation=outside, role="user", content="Our gnarlwood fence is rotten"
    )
    Summary.objects.create(conversation=outside, version=1, is_current=True, text="gnarlwood talk")
    assert ("message", said.pk) in _recalled(world["in_work"], "gnarlwood")
    Conversation.objects.filter(pk=outside.pk).update(project=world["garden"])
    assert ("message", said.pk) not in _recalled(world["in_work"], "gnarlwood")
    assert ("message", said.pk) in _recalled(world["in_garden"], "gnarlwood")
    Conversation.objects.filter(pk=outside.pk).update(project=None)
    assert ("message", said.pk) in _recalled(world["in_work"], "gnarlwood")


def test_the_index_follows_a_memory_moved_to_everywhere(world):
    fact = world["items"]["fact"]
    Fact.objects.filter(pk=fact.pk).update(project=None)
    assert ("fact", fact.pk) in _recalled(world["outside"], QUERY["fact"])
    Fact.objects.filter(pk=fact.pk).update(project=world["garden"])
    assert ("fact", fact.pk) not in _recalled(world["outside"], QUERY["fact"])


def test_what_a_project_conversation_learns_belongs_to_the_project(world, alice):
    """The turn's extractor sets the project of what it learns; outside, everywhere."""
    from memory.services import memories_from_turn

    said = message_create(
        conversation=world["in_garden"],
        role="user",
        content="I live in Lyon. We decided to use copper tape against slugs.",
    )
    memories_from_turn(conversation=world["in_garden"], message=said)
    learned = Fact.objects.filter(source_messages=said)
    assert learned and {f.project_id for f in learned} == {world["garden"].pk}
    decisions = Decision.objects.filter(source_messages=said)
    assert {d.project_id for d in decisions} <= {world["garden"].pk}
    elsewhere = message_create(
        conversation=world["outside"], role="user", content="I live in Oslo."
    )
    memories_from_turn(conversation=world["outside"], message=elsewhere)
    assert Fact.objects.get(source_messages=elsewhere).project_id is None
    # a project's fact does not retire what everywhere knows, nor the other way round
    assert Fact.objects.filter(source_messages=said, status=Fact.Status.ACTIVE).exists()


def test_a_merge_never_carries_one_projects_words_into_another(world, alice):
    """The same decision said in another project is not merged into the first one's row: it
    is learned there, in a row of its own (one per scope and key)."""
    from memory.services import decision_remember

    garden_decision = world["items"]["decision"]
    decision_remember(
        user=alice,
        conversation=world["in_work"],
        what=garden_decision.what,
        rationale="the budget at work says so",
    )
    garden_decision.refresh_from_db()
    assert garden_decision.rationale == ""
    assert garden_decision.project_id == world["garden"].pk
    at_work = Decision.objects.exclude(pk=garden_decision.pk).get(what=garden_decision.what)
    assert at_work.project_id == world["in_work"].project_id
    assert at_work.rationale == "the budget at work says so"


def test_a_project_turn_runs_one_statement_more_than_one_outside(world, alice, local_vectors):
    """The scope is matched inside the statements a turn already makes: a project
    conversation's build reads its instructions, and nothing else more (its two scopes'
    vectors are followed in one statement)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    for conversation in (world["in_garden"], world["outside"]):
        for n in range(8):  # past a new session's first turns
            message_create(conversation=conversation, role="user", content=f"Note {n} on beds")
    embeddings.embed_pending()
    counts = {}
    for name in ("in_garden", "outside"):
        conversation = world[name]
        said = message_create(conversation=conversation, role="user", content="Quillondor pollen")
        build(conversation=conversation, user_text=said.content, user_message=said)  # caches
        with CaptureQueriesContext(connection) as captured:
            build(conversation=conversation, user_text=said.content, user_message=said)
        counts[name] = len(captured.captured_queries)
    assert counts["in_garden"] == counts["outside"] + 1


def test_a_row_written_into_another_project_after_the_stats_is_still_not_read(world, alice):
    """When the scopes a conversation reads hold all of the user's rows, the index statements
    match the user alone (one posting list); a row another project gains meanwhile is left out
    by the row read, which checks the scope in its own statement."""
    from dataclasses import replace

    from memory.search import index
    from memory.search.scope import ALL, readable

    scopes = readable(world["garden"].pk)
    stats = index.user_stats(alice.pk, ["gnarlwood"], scopes)
    assert stats.matched == (ALL,)  # the Work project holds nothing yet
    said = message_create(conversation=world["in_work"], role="user", content="gnarlwood fence")
    # the term's rows read after the write, with the stats read before it
    stats = replace(stats, df={"gnarlwood": 1}, rowids={})
    found = index.candidates(alice.pk, ["gnarlwood"], stats, scopes)
    assert ("message", said.pk) not in {(r.kind, r.object_id) for r in found}
    assert index.user_stats(alice.pk, ["gnarlwood"], scopes).matched == scopes
