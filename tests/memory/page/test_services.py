"""The user's own memory: notices of what a turn learned, Undo, ask first, protection, edits."""

import pytest
from django.core.exceptions import ValidationError

from memory import search
from memory.models import Fact, MemoryEvent, MemoryState
from memory.recall import recall_for_turn
from memory.services import (
    action_item_remember,
    action_item_set_done,
    fact_set_pinned,
    memory_discard,
    memory_edit_text,
    memory_event_undo,
    memory_keep,
)
from profiles.services import profile_set_memory_mode

pytestmark = pytest.mark.django_db(transaction=True)


def found(user, query):
    """The memories search finds (the messages themselves stay searchable: they were said)."""
    hits = search.search(user=user, query=query, k=10)
    return [(hit.kind, hit.id) for hit in hits if hit.kind != "message"]


def test_a_fact_told_in_a_turn_is_noted_under_the_reply(alice, tell):
    """The light extractor's fact becomes a MemoryEvent under the reply, listing it."""
    _said, reply = tell("My daughter's name is Ada.")
    event = MemoryEvent.objects.get()
    fact = Fact.objects.get(user=alice)
    assert event.message == reply and event.user == alice
    assert [(i["kind"], i["id"], i["action"]) for i in event.items] == [("fact", fact.pk, "added")]
    assert ("fact", fact.pk) in found(alice, "daughter Ada")


def test_undo_deletes_what_was_added_and_the_index_follows(alice, tell):
    """Undo leaves nothing behind in retrieval; the history names alice."""
    tell("My daughter's name is Ada.")
    fact = Fact.objects.get(user=alice)
    memory_event_undo(event=MemoryEvent.objects.get(), actor=alice)
    assert not Fact.objects.filter(pk=fact.pk).exists()
    assert found(alice, "daughter Ada") == []
    last = Fact.history.filter(id=fact.pk).latest("history_id")
    assert last.history_type == "-" and last.history_user == alice
    assert MemoryEvent.objects.get().undone_at is not None


def test_undo_restores_the_fact_a_new_one_replaced(alice, tell):
    """A contradicting fact superseded the old one; Undo brings the old one back."""
    tell("I live in Lyon.")
    old = Fact.objects.get(user=alice)
    tell("I live in Paris.")
    assert Fact.objects.get(pk=old.pk).status == Fact.Status.SUPERSEDED
    memory_event_undo(event=MemoryEvent.objects.order_by("-id").first(), actor=alice)
    old.refresh_from_db()
    assert old.status == Fact.Status.ACTIVE and old.superseded_by_id is None
    assert list(Fact.objects.filter(user=alice)) == [old]
    assert ("fact", old.pk) in found(alice, "live Lyon")


def test_undo_leaves_what_the_user_changed_since(alice, tell):
    """An edit after the notice is the user's word: Undo does not delete it."""
    tell("My daughter's name is Ada.")
    fact = Fact.objects.get(user=alice)
    memory_edit_text(memory=fact, actor=alice, text="My daughter is called Ada Lovelace")
    memory_event_undo(event=MemoryEvent.objects.get(), actor=alice)
    assert Fact.objects.get(pk=fact.pk).text == "My daughter is called Ada Lovelace"


def test_ask_first_keeps_a_suggestion_out_of_retrieval_until_it_is_kept(alice, conversation, tell):
    """Suggested: not searched, not recalled; kept: both."""
    profile_set_memory_mode(user=alice, mode="ask")
    tell("My daughter's name is Ada.")
    fact = Fact.objects.get(user=alice)
    assert fact.state == MemoryState.SUGGESTED
    assert MemoryEvent.objects.get().items[0]["action"] == "suggested"
    assert found(alice, "daughter Ada") == []
    recalled = recall_for_turn(user=alice, conversation=conversation, query="daughter Ada")
    assert ("fact", fact.pk) not in [(r.kind, r.id) for r in recalled]
    memory_keep(memory=fact, actor=alice)
    assert Fact.objects.get(pk=fact.pk).state == MemoryState.KEPT
    assert ("fact", fact.pk) in found(alice, "daughter Ada")


def test_a_discarded_suggestion_is_gone(alice, tell):
    """Discard deletes it (history keeps who did it); only a suggestion can be discarded."""
    profile_set_memory_mode(user=alice, mode="ask")
    tell("My daughter's name is Ada.")
    fact = Fact.objects.get(user=alice)
    pk = fact.pk
    memory_discard(memory=fact, actor=alice)
    assert not Fact.objects.filter(pk=pk).exists()
    assert Fact.history.filter(id=pk).latest("history_id").history_user == alice
    kept = Fact.objects.create(user=alice, text="Kept", state=MemoryState.KEPT)
    with pytest.raises(ValidationError):
        memory_discard(memory=kept, actor=alice)


def test_extraction_never_touches_a_pinned_or_edited_fact(alice, tell):
    """Told again: a pinned fact keeps its mentions; a contradiction waits as a suggestion."""
    tell("I live in Lyon.")
    lyon = Fact.objects.get(user=alice)
    fact_set_pinned(fact=lyon, pinned=True, actor=alice, by="by the user")
    tell("I live in Lyon.")
    assert Fact.objects.get(pk=lyon.pk).mentions == 1
    tell("I live in Paris.")
    lyon.refresh_from_db()
    paris = Fact.objects.exclude(pk=lyon.pk).get(user=alice)
    assert lyon.status == Fact.Status.ACTIVE
    assert paris.state == MemoryState.SUGGESTED


def test_the_users_edits_are_history_records_naming_them(alice, conversation):
    """Edit text and done/reopen: history with alice as actor; state edited."""
    action_item_remember(user=alice, conversation=conversation, what="Book the flights")
    from memory.models import ActionItem

    item = ActionItem.objects.get()
    item = action_item_set_done(item=item, actor=alice, done=True)
    assert item.status == "done" and item.state == MemoryState.EDITED
    item = action_item_set_done(item=item, actor=alice, done=False)
    assert item.status == "open"
    records = list(ActionItem.history.filter(id=item.pk).order_by("history_id"))
    assert [r.history_user for r in records[1:]] == [alice, alice]
    assert "by the user" in records[-1].history_change_reason


def test_saving_a_memory_unchanged_writes_no_history(alice, conversation):
    """The user saves the same text, or marks done what is done: nothing changes, no history
    record, the memory stays as extraction left it (issue 40, informational)."""
    from memory.models import ActionItem
    from memory.services import memory_edit_text

    action_item_remember(user=alice, conversation=conversation, what="Book the flights")
    item = ActionItem.objects.get()
    before = item.history.count()
    same = memory_edit_text(memory=item, actor=alice, text="  Book the flights ")
    assert same.state == item.state and item.history.count() == before
    done = action_item_set_done(item=item, actor=alice, done=True)
    assert done.history.count() == before + 1
    action_item_set_done(item=done, actor=alice, done=True)
    assert item.history.count() == before + 1
