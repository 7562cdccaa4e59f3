"""Deleting one's account leaves no row of the user anywhere."""

from __future__ import annotations

import pytest
from axes.models import AccessLog
from django.apps import apps
from django.contrib.auth import get_user_model
from django.db import connection
from django.utils import timezone

from chat.models import Conversation, Message
from memory.models import Fact
from memory.services import memory_update
from userdata.services import account_delete

pytestmark = pytest.mark.django_db


def rows_of(user_id: int, conversation_ids: set[int], message_ids: set[int]) -> list[str]:
    """Every row of every model (history tables included) that points at the user, one of
    their conversations or one of their messages; and their rows in the search index."""
    targets = {
        get_user_model(): {user_id},
        Conversation: conversation_ids,
        Message: message_ids,
    }
    found = []
    for model in apps.get_models(include_auto_created=True):
        for field in model._meta.concrete_fields:
            ids = targets.get(field.related_model) if field.is_relation else None
            if ids and model.objects.filter(**{f"{field.attname}__in": ids}).exists():
                found.append(f"{model._meta.label}.{field.name}")
    if model_rows := get_user_model().objects.filter(pk=user_id).exists():
        found.append(f"the user ({model_rows})")
    with connection.cursor() as cursor:
        for table in ("memory_search", "memory_search_stats"):
            cursor.execute(f"SELECT count(*) FROM {table} WHERE user_id = %s", [user_id])  # noqa: S608
            if cursor.fetchone()[0]:
                found.append(table)
    return found


def test_it_leaves_no_row_of_the_user(alice, bob, staff, data):
    """Alice's conversations, messages, memories, summaries, profile, history and index
    rows all go (also the history of a fact deleted before); Bob's stay."""
    memory_update(memory=data["city"], actor=alice, changes={"text": "Alice lives in Lyon."})
    data["daughter"].delete()  # deleted before: its history names her still
    AccessLog.objects.create(username="alice", attempt_time=timezone.now(), ip_address="::1")
    conversation_ids = set(Conversation.objects.filter(user=alice).values_list("pk", flat=True))
    message_ids = set(Message.objects.filter(conversation__user=alice).values_list("pk", flat=True))
    alice_id = alice.pk
    assert rows_of(alice_id, conversation_ids, message_ids)  # the walk finds her rows
    account_delete(user=alice)
    assert rows_of(alice_id, conversation_ids, message_ids) == []
    assert not AccessLog.objects.filter(username="alice").exists()
    assert Fact.objects.filter(user=bob).count() == 1
    assert Fact.history.filter(user_id=bob.pk).exists()
