"""A memory added by hand on the Memory page: validated, the user's own, found at once by
search and the context, its vector made by a background task (and redone after an edit)."""

import pytest
from django.test import Client
from django.urls import reverse
from django_tasks_db.models import DBTaskResult

from chat.services import conversation_create
from memory import context
from memory.models import ActionItem, Decision, Embedding, Fact, MemoryState
from memory.search import search
from memory.services import fact_remember, memory_keep
from profiles.services import profile_set_memory_mode
from tests.support.tasks import run_pending_tasks

pytestmark = pytest.mark.django_db(transaction=True)
ADD = "memory:add"


def add(client, kind="fact", text="I am allergic to peanuts.", **more):
    return client.post(reverse(ADD), {"kind": kind, "text": text, **more})


def test_a_fact_added_by_hand_is_listed_marked_and_the_users_own(alice_client, alice):
    response = add(alice_client, category="personal")
    fact = Fact.objects.get(user=alice)
    assert response.status_code == 302
    assert response["Location"] == f"/memory/?added=fact-{fact.pk}#fact-{fact.pk}"
    assert (fact.text, fact.category, fact.state) == (
        "I am allergic to peanuts.",
        "personal",
        MemoryState.ADDED,
    )
    assert fact.protected and fact.conversation is None
    assert fact.history.latest().history_user == alice
    page = alice_client.get(response["Location"]).content.decode()
    assert "Added by you" in page and "Saved." in page and "just-saved" in page
    assert "changed" not in page.split(f'id="fact-{fact.pk}"')[1].split("</li>")[0]


def test_each_kind_can_be_added(alice_client, alice):
    add(alice_client, kind="decision", text="Go to Porto in August")
    add(alice_client, kind="action_item", text="Fix the fence")
    assert Decision.objects.get(user=alice).state == MemoryState.ADDED
    assert ActionItem.objects.get(user=alice).status == ActionItem.Status.OPEN


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"kind": "fact", "text": "   "}, "Write what the assistant should remember."),
        ({"kind": "fact"}, "Write what the assistant should remember."),
        ({"kind": "summary", "text": "x y"}, "Choose a fact, a decision or an action item."),
        ({"kind": "fact", "text": "a" * 2001}, "At most 2000 characters."),
        ({"kind": "fact", "text": "Tea", "category": "nope"}, "Choose one of the categories."),
        ({"kind": "fact", "text": "?!"}, "Write words, not only punctuation."),
    ],
)
def test_a_bad_memory_is_refused_with_a_clear_error(alice_client, alice, data, error):
    response = alice_client.post(reverse(ADD), data)
    assert response.status_code == 400
    assert error in response.content.decode()
    assert not Fact.objects.filter(user=alice).exists()


def test_one_already_there_is_refused(alice_client, alice):
    add(alice_client)
    response = add(alice_client, text="i am allergic to  peanuts")
    assert response.status_code == 400
    assert "You already have this fact." in response.content.decode()
    assert Fact.objects.filter(user=alice).count() == 1


def test_adding_needs_a_signed_in_user_and_csrf(client, alice):
    response = client.post(reverse(ADD), {"kind": "fact", "text": "Tea"})
    assert response.status_code == 302 and "/login" in response["Location"]
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(alice)
    assert strict.post(reverse(ADD), {"kind": "fact", "text": "Tea"}).status_code == 403
    assert strict.get(reverse(ADD)).status_code == 405
    assert not Fact.objects.exists()


def test_a_memory_added_is_alices_only(alice_client, alice, bob):
    add(alice_client)
    assert not search(user=bob, query="peanut allergy")
    assert search(user=alice, query="peanut allergy")


def test_search_and_the_context_find_it_at_once(alice_client, alice):
    """The next reply's context, in a new conversation, quotes it."""
    add(alice_client, text="My blood type is O negative.")
    page = alice_client.get(reverse("memory:page"), {"q": "blood"}).content.decode()
    assert "O negative" in page
    conversation = conversation_create(user=alice)
    built = context.build(conversation=conversation, user_text="What is my blood type?")
    assert any("O negative" in m["text"] for m in built.report["memories"])


@pytest.fixture
def local(settings):
    settings.MEMORYCHAT_EMBEDDINGS = "local"
    settings.OPENAI_EMBEDDING_MODEL = ""


def queued():
    """The embedding jobs waiting for a worker: their arguments."""
    rows = DBTaskResult.objects.filter(task_path="memory.tasks.embed_memories", status="READY")
    return [row.args_kwargs["args"][0] for row in rows.order_by("enqueued_at")]


def vector(kind, pk):
    row = Embedding.objects.filter(kind=kind, object_id=pk).first()
    return row.vector if row else None


def test_its_embedding_is_made_by_a_background_task(alice_client, alice, local):
    """Not in the request: queued, then the worker makes it."""
    add(alice_client)
    fact = Fact.objects.get(user=alice)
    assert queued() == [[["fact", fact.pk]]]
    assert vector("fact", fact.pk) is None
    run_pending_tasks()
    assert vector("fact", fact.pk) is not None and queued() == []


def test_an_edited_memorys_embedding_is_redone_the_same_way(alice_client, alice, local):
    add(alice_client, text="The user likes tea.")
    fact = Fact.objects.get(user=alice)
    run_pending_tasks()
    before = vector("fact", fact.pk)
    alice_client.post(reverse("memory:edit", args=["fact", fact.pk]), {"text": "I ski."})
    assert vector("fact", fact.pk) is None  # the old text's vector is gone at once
    assert queued() == [[["fact", fact.pk]]]
    run_pending_tasks()
    assert vector("fact", fact.pk) not in (None, before)


def test_a_kept_suggestion_is_embedded_when_it_enters_the_index(alice, local):
    conversation = conversation_create(user=alice)
    profile_set_memory_mode(user=alice, mode="ask")
    fact_remember(
        user=alice, conversation=conversation, category="personal", subject="",
        text="The user likes tea.", importance=0.6, suggest=True,
    )  # fmt: skip
    fact = Fact.objects.get(user=alice)
    assert queued() == []  # a suggestion is not indexed: nothing to embed
    memory_keep(memory=fact, actor=alice)
    assert queued() == [[["fact", fact.pk]]]
    run_pending_tasks()
    assert vector("fact", fact.pk) is not None
