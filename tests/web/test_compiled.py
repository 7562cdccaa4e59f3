"""Reads compiled once (web.compiled) give what the queryset gives, for every call's values."""

from datetime import UTC, datetime

import pytest

from chat import services as chat_services
from memory.models import Summary
from memory.selectors import summary_current, summary_runs_active_for
from memory.services import summary_run_start
from profiles.models import UserProfile
from profiles.selectors import profile_get, profiles_get_many
from web.compiled import CompiledRead

pytestmark = pytest.mark.django_db


def _fields(instance) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def test_a_profile_read_equals_the_orms_with_every_type_converted(alice, bob):
    """JSON, datetimes (aware), floats, choices and counts come back as the ORM gives them, and
    each call reads its own user's row, not the first call's."""
    stamp = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    UserProfile.objects.create(
        user=alice,
        formality=0.25,
        formality_count=7,
        style_updated_at=stamp,
        tone=UserProfile.Tone.CASUAL,
        topics_of_interest=["rust", "sailing"],
        memory_mode=UserProfile.MemoryMode.OFF,
    )
    UserProfile.objects.create(user=bob, topics_of_interest={"nested": [1, 2]})

    for user in (alice, bob, alice):
        read = profile_get(user=user)
        assert _fields(read) == _fields(UserProfile.objects.get(user=user))
        assert not read._state.adding  # a saved row: saving it again updates, not inserts
    assert profile_get(user=alice).style_updated_at == stamp
    assert profile_get(user=alice).topics_of_interest == ["rust", "sailing"]


def test_a_user_without_a_profile_gets_unsaved_defaults(alice):
    profile = profile_get(user=alice)
    assert profile.pk is None and profile.user_id == alice.pk
    assert profile.memory_mode == UserProfile.MemoryMode.AUTOMATIC


def test_the_current_summary_is_the_current_version_of_that_conversation(alice):
    """Only the fields asked for are read; the rest still load when touched."""
    first = chat_services.conversation_create(user=alice)
    second = chat_services.conversation_create(user=alice)
    Summary.objects.create(conversation=first, version=1, text="old", is_current=False)
    current = Summary.objects.create(conversation=first, version=2, text="new", is_current=True)

    found = summary_current(first)
    assert (found.pk, found.text, found.version) == (current.pk, "new", 2)
    assert "model" in found.get_deferred_fields()
    assert found.model == Summary.objects.get(pk=current.pk).model  # loads on access
    assert summary_current(second) is None


def test_values_of_the_wrong_type_are_refused(alice):
    with pytest.raises(TypeError):
        profile_get(user=type("U", (), {"pk": "1"})())
    with pytest.raises(TypeError):
        CompiledRead(lambda when: UserProfile.objects.filter(style_updated_at=when), datetime)


def test_only_plain_querysets_are_compiled(alice):
    related = CompiledRead(
        lambda user_id: UserProfile.objects.select_related("user").filter(user_id=user_id), int
    )
    with pytest.raises(ValueError, match="plain queryset"):
        related.read(alice.pk)
    lost = CompiledRead(lambda user_id: UserProfile.objects.filter(user_id=1), int)
    with pytest.raises(ValueError, match="every value"):
        lost.read(alice.pk)


def test_list_values_read_every_row_asked_for_whatever_their_number(alice, bob, staff):
    """A plan per list length: one user, two, the same user twice, then one again."""
    for user in (alice, bob):
        UserProfile.objects.create(user=user)
    assert set(profiles_get_many([alice])) == {alice.pk}
    assert set(profiles_get_many([alice, bob, staff])) == {alice.pk, bob.pk}
    assert set(profiles_get_many([bob, bob])) == {bob.pk}
    assert set(profiles_get_many([staff])) == set()
    assert profiles_get_many([]) == {}
    with pytest.raises(TypeError):
        CompiledRead(lambda ids: UserProfile.objects.filter(user_id__in=ids), list).read([])


def test_active_runs_of_several_conversations(alice):
    idle, busy = (chat_services.conversation_create(user=alice) for _ in range(2))
    chat_services.message_create(conversation=busy, role="user", content="hello there")
    summary_run_start(conversation=busy)
    assert summary_runs_active_for(conversations=[idle, busy]) == {busy.pk}
    assert summary_runs_active_for(conversations=[idle]) == set()


def test_a_plain_update_writes_what_the_orms_would_under_the_same_conditions(alice, bob):
    """Values prepared by their fields (an aware datetime reads back equal), equality and
    inequality conditions honoured, a list of ids, the rows counted."""
    from web.compiled import plain_update

    first = UserProfile.objects.create(user=alice, formality=0.25)
    second = UserProfile.objects.create(user=bob, formality=0.25)
    stamp = datetime(2026, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)
    assert (
        plain_update(UserProfile, {"formality": 0.5}, where={"pk": first.pk, "formality": 0.3}) == 0
    )
    assert UserProfile.objects.get(pk=first.pk).formality == 0.25  # the condition did not hold
    changed = {"formality": 0.5, "formality_count": 3, "style_updated_at": stamp}
    assert plain_update(UserProfile, changed, where={"pk": first.pk, "formality": 0.25}) == 1
    first.refresh_from_db()
    assert (first.formality, first.formality_count, first.style_updated_at) == (0.5, 3, stamp)
    off = UserProfile.MemoryMode.OFF
    UserProfile.objects.filter(pk=second.pk).update(memory_mode=off)
    assert (
        plain_update(
            UserProfile,
            {"tone": "casual"},
            ids=[first.pk, second.pk],
            where_not={"memory_mode": off},
        )
        == 1
    )
    assert UserProfile.objects.get(pk=second.pk).tone == ""
    assert plain_update(UserProfile, {"tone": "formal"}, ids=[]) == 0
    with pytest.raises(ValueError):
        plain_update(UserProfile, {"tone": "formal"})
    with pytest.raises(ValueError):
        plain_update(UserProfile, {}, where={"pk": first.pk})


def test_a_plain_insert_stores_what_the_orms_save_would(alice):
    """Every field as the ORM stores it (defaults, JSON, an aware datetime, a foreign key),
    the key set and the instance marked saved, so that saving it again updates it."""
    from chat.models import Message
    from web.compiled import plain_insert

    conversation = chat_services.conversation_create(user=alice)
    stamp = datetime(2026, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)

    def new(**fields):
        return Message(conversation=conversation, role="user", content="hello", **fields)

    fields = {
        "created_at": stamp,
        "client_id": "c-1",
        "context_report": {"blocks": [{"name": "history", "tokens": 12}], "note": "é"},
        "lease_expires_at": stamp,
    }
    ours, theirs = new(**fields), new(**{**fields, "client_id": "c-2"})
    plain_insert(ours)
    theirs.save()
    assert ours.pk is not None and ours.pk != theirs.pk
    assert not ours._state.adding
    stored = {k: v for k, v in _fields(Message.objects.get(pk=ours.pk)).items() if k != "id"}
    expected = {k: v for k, v in _fields(Message.objects.get(pk=theirs.pk)).items() if k != "id"}
    assert stored == {**expected, "client_id": "c-1"}
    assert stored["context_report"]["note"] == "é" and stored["created_at"] == stamp

    reply = plain_insert(
        Message(conversation=conversation, role="assistant", content="", reply_to=ours)
    )
    assert Message.objects.get(pk=reply.pk).reply_to_id == ours.pk
    ours.content = "changed"
    ours.save()
    assert Message.objects.filter(conversation=conversation).count() == 3


def test_a_plain_insert_keeps_the_databases_constraints(alice):
    from django.db import IntegrityError, transaction

    from chat.models import Message
    from web.compiled import plain_insert

    conversation = chat_services.conversation_create(user=alice)
    plain_insert(Message(conversation=conversation, role="user", content="a", client_id="same"))
    with pytest.raises(IntegrityError), transaction.atomic():
        plain_insert(Message(conversation=conversation, role="user", content="b", client_id="same"))
    saved = Message.objects.get(client_id="same")
    with pytest.raises(ValueError, match="new row"):
        plain_insert(saved)


def test_a_plain_insert_refuses_a_model_with_save_receivers(alice):
    """It sends no signals, so a model something listens to is saved by the ORM instead."""
    from django.db.models.signals import post_save

    from chat.models import Message
    from web.compiled import plain_insert

    def heard(**kwargs):
        pass

    post_save.connect(heard, sender=Message)
    try:
        conversation = chat_services.conversation_create(user=alice)
        with pytest.raises(ValueError, match="receivers"):
            plain_insert(Message(conversation=conversation, role="user", content="a"))
    finally:
        post_save.disconnect(heard, sender=Message)
    assert not Message.objects.exists()
