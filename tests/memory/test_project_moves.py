"""Moving memory between a project and everywhere (issue 37): a memory on the Memory page, a
conversation with what came only from it; the index and the vectors follow; another user's
project is refused as not found."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from chat.models import Conversation
from chat.services import conversation_create, message_create
from memory import recall
from memory.models import Embedding, Fact
from memory.search import embeddings, vectors
from memory.services.moves import conversation_move, memory_move
from projects.models import Project

pytestmark = pytest.mark.django_db


@pytest.fixture
def garden(alice):
    return Project.objects.create(user=alice, name="Garden")


@pytest.fixture
def bobs(bob):
    return Project.objects.create(user=bob, name="Bob's")


def _fact(conversation, text, message=None):
    fact = Fact.objects.create(
        user=conversation.user,
        conversation=conversation,
        project=conversation.project,
        text=text,
        dedupe_key=text.lower(),
    )
    if message is not None:
        fact.source_messages.add(message)
    return fact


def _recalls(conversation, query, kind, pk) -> bool:
    found = recall.recall_for_turn(
        user=conversation.user, conversation=conversation, query=query, known_earlier=99
    )
    return (kind, pk) in {(i.kind, i.id) for i in found}


def test_moving_a_conversation_moves_what_came_only_from_it(alice, garden):
    talk = conversation_create(user=alice, title="Beds")
    other = conversation_create(user=alice, title="Other")
    said = message_create(conversation=talk, role="user", content="The quagberry bed is east")
    only_here = _fact(talk, "The quagberry bed faces east", said)
    also_elsewhere = _fact(talk, "Quagberries like acid soil", said)
    also_elsewhere.source_messages.add(
        message_create(conversation=other, role="user", content="quagberries like acid soil")
    )
    outside = conversation_create(user=alice, title="Outside")

    moved = conversation_move(conversation=talk, project=garden, actor=alice)

    assert moved.memories["facts"] == 1
    only_here.refresh_from_db()
    also_elsewhere.refresh_from_db()
    assert only_here.project_id == garden.pk
    assert also_elsewhere.project_id is None
    assert not _recalls(outside, "quagberry bed east", "message", said.pk)
    assert not _recalls(outside, "quagberry bed faces east", "fact", only_here.pk)
    assert _recalls(outside, "quagberries acid soil", "fact", also_elsewhere.pk)
    assert only_here.history.first().history_user == alice

    conversation_move(conversation=talk, project=None, actor=alice)
    only_here.refresh_from_db()
    assert only_here.project_id is None
    assert _recalls(outside, "quagberry bed east", "message", said.pk)


def test_a_memory_moved_on_the_memory_page_follows_in_the_index(alice, alice_client, garden):
    outside = conversation_create(user=alice, title="Outside")
    fact = _fact(outside, "The loquat tree needs netting")
    url = reverse("memory:move", args=["fact", fact.pk])

    response = alice_client.post(url, {"project": str(garden.pk)})

    assert response.status_code == 302
    fact.refresh_from_db()
    assert fact.project_id == garden.pk
    assert not _recalls(outside, "loquat netting", "fact", fact.pk)
    alice_client.post(url, {"project": ""}, HTTP_HX_REQUEST="true")
    fact.refresh_from_db()
    assert fact.project_id is None
    assert _recalls(outside, "loquat netting", "fact", fact.pk)


def test_the_memory_page_offers_the_users_projects(alice, alice_client, garden, bobs):
    _fact(conversation_create(user=alice), "The medlar fruit ripens late")
    page = alice_client.get(reverse("memory:page")).content.decode()
    assert "Only in Garden" in page and "Bob&#x27;s" not in page and "Bob's" not in page


@pytest.mark.parametrize("value", ["bobs", "999999999", "x", "-1"])
def test_another_users_or_no_project_is_not_found(alice, alice_client, bobs, value):
    fact = _fact(conversation_create(user=alice), "The medlar fruit ripens late")
    project = str(bobs.pk) if value == "bobs" else value
    response = alice_client.post(
        reverse("memory:move", args=["fact", fact.pk]), {"project": project}
    )
    assert response.status_code == 404
    fact.refresh_from_db()
    assert fact.project_id is None


def test_the_services_refuse_another_users_project(alice, bobs):
    talk = conversation_create(user=alice)
    with pytest.raises(ValidationError):
        conversation_move(conversation=talk, project=bobs, actor=alice)
    with pytest.raises(ValidationError):
        memory_move(obj=_fact(talk, "x y z"), project=bobs, actor=alice)
    assert Conversation.objects.get(pk=talk.pk).project_id is None


def test_a_temporary_chat_stays_outside_every_project(alice, garden):
    temporary = conversation_create(user=alice, temporary=True)
    with pytest.raises(ValidationError):
        conversation_move(conversation=temporary, project=garden, actor=alice)


def test_vectors_follow_a_moved_conversation(alice, garden, settings):
    settings.MEMORYCHAT_EMBEDDINGS = "local"
    settings.OPENAI_EMBEDDING_MODEL = ""
    vectors.forget_all()
    talk = conversation_create(user=alice, title="Pets")
    dog = message_create(conversation=talk, role="user", content="My dog Rex loves the beach")
    embeddings.embed_pending()
    outside = conversation_create(user=alice, title="Outside")
    question = "Which pet enjoys the seaside?"
    assert _recalls(outside, question, "message", dog.pk)

    conversation_move(conversation=talk, project=garden, actor=alice)

    vector = Embedding.objects.get(kind="message", object_id=dog.pk)
    assert vector.scope == garden.pk  # carried over, not computed again
    assert not _recalls(outside, question, "message", dog.pk)
    in_garden = conversation_create(user=alice)
    Conversation.objects.filter(pk=in_garden.pk).update(project=garden)
    in_garden.refresh_from_db()
    assert _recalls(in_garden, question, "message", dog.pk)
    vectors.forget_all()


def _project_world(alice, garden):
    talk = conversation_create(user=alice, title="Beds")
    Conversation.objects.filter(pk=talk.pk).update(project=garden)
    talk.refresh_from_db()
    said = message_create(conversation=talk, role="user", content="The quagberry bed is east")
    fact = _fact(talk, "The quagberry bed faces east", said)
    loose = Fact.objects.create(user=alice, project=garden, text="Quagberries fruit in June")
    return talk, said, fact, loose


def test_deleting_a_project_can_move_everything_to_everywhere(alice, garden):
    from memory.services.moves import EVERYWHERE, project_empty

    talk, said, _, loose = _project_world(alice, garden)
    project_empty(project=garden, keep=EVERYWHERE, actor=alice)
    garden.delete()  # nothing points at it any more
    talk.refresh_from_db()
    assert talk.project_id is None
    assert set(Fact.objects.values_list("project_id", flat=True)) == {None}
    outside = conversation_create(user=alice)
    assert _recalls(outside, "quagberry bed east", "message", said.pk)
    assert _recalls(outside, "quagberries fruit june", "fact", loose.pk)


def test_deleting_a_project_can_delete_its_conversations_and_memories(alice, garden):
    from memory.services.moves import DELETE, project_empty

    talk, _said, fact, _loose = _project_world(alice, garden)
    kept = _fact(conversation_create(user=alice), "Likes Porto")
    project_empty(project=garden, keep=DELETE, actor=alice)
    garden.delete()
    assert not Conversation.objects.filter(pk=talk.pk).exists()
    assert list(Fact.objects.values_list("pk", flat=True)) == [kept.pk]
    assert fact.history.filter(history_type="-").get().history_user == alice


def test_forgetting_a_projects_learning_asks_delete_or_everywhere(alice, garden):
    from memory.services.moves import DELETE, EVERYWHERE, project_learning_forget

    talk, *_ = _project_world(alice, garden)
    project_learning_forget(project=garden, keep=EVERYWHERE, actor=alice)
    assert set(Fact.objects.values_list("project_id", flat=True)) == {None}
    talk.refresh_from_db()
    assert talk.project_id == garden.pk  # the conversation stays in the project
    _fact(talk, "Quagberry netting is green")
    project_learning_forget(project=garden, keep=DELETE, actor=alice)
    assert not Fact.objects.filter(project=garden).exists()
    with pytest.raises(ValidationError):
        project_learning_forget(project=garden, keep="maybe", actor=alice)


def test_a_moved_conversations_memories_have_their_vectors_read_once(alice, garden):
    """Not a read of the vectors per memory: one for the conversation's messages and summary,
    one per kind of memory it taught."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    talk = conversation_create(user=alice, title="Beds")
    said = message_create(conversation=talk, role="user", content="Raised beds, six of them")
    facts = [_fact(talk, f"Bed {n} is raised", said) for n in range(6)]
    with CaptureQueriesContext(connection) as captured:
        moved = conversation_move(conversation=talk, project=garden, actor=alice)
    assert moved.memories["facts"] == len(facts)
    reads = [
        q["sql"] for q in captured.captured_queries
        if q["sql"].startswith("SELECT") and 'FROM "memory_embedding"' in q["sql"]
    ]  # fmt: skip
    assert len(reads) == 1 + 1  # the conversation's, the facts'


def _release_queries(alice, garden, n: int) -> int:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from memory.services.moves import EVERYWHERE, project_empty

    for i in range(n):
        text = f"{garden.name} row {i}"  # none already everywhere: no merge
        Fact.objects.create(user=alice, project=garden, text=text, dedupe_key=text.lower())
    with CaptureQueriesContext(connection) as captured:
        project_empty(project=garden, keep=EVERYWHERE, actor=alice)
    assert not Fact.objects.filter(project=garden).exists()
    return len(captured.captured_queries)


def test_deleting_a_project_moves_its_memories_in_batches(alice, garden):
    """Not a transaction, a read of vectors and an insert per memory: the queries do not
    grow with the project's memories."""
    few = _release_queries(alice, garden, 3)
    other = Project.objects.create(user=alice, name="Orchard")
    assert _release_queries(alice, other, 12) == few
    moved = Fact.objects.get(text="Orchard row 11", project=None)
    record = moved.history.latest("history_id")
    assert (record.history_type, record.history_user, record.project_id) == ("~", alice, None)
    assert record.history_change_reason == "moved to everywhere"


def test_a_released_memory_already_everywhere_merges_into_it(alice, garden):
    from memory.services.moves import EVERYWHERE, project_empty

    there = Fact.objects.create(user=alice, text="Likes figs", dedupe_key="likes figs")
    here = Fact.objects.create(
        user=alice, project=garden, text="Likes figs", dedupe_key="likes figs", mentions=2
    )
    alone = Fact.objects.create(user=alice, project=garden, text="Has a pond", dedupe_key="pond")
    project_empty(project=garden, keep=EVERYWHERE, actor=alice)
    assert set(Fact.objects.values_list("pk", "project_id")) == {(there.pk, None), (alone.pk, None)}
    there.refresh_from_db()
    assert there.mentions == 1 + 2
    assert here.history.filter(history_type="-").exists()
