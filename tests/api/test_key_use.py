"""A /v1 key before the first token: one indexed read that brings its user along, no write;
its last use is written after the turn has started, at most once a minute."""

import asyncio
from datetime import timedelta

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from api import views
from profiles.keys import key_mark_used, key_owner, key_use_claim
from profiles.models import ApiKey
from tests.api.conftest import client


@pytest.mark.django_db
def test_the_lookup_is_one_read_of_the_user_and_writes_nothing(alice, alice_key):
    with CaptureQueriesContext(connection) as queries:
        assert key_owner(alice_key) == alice
    [read] = queries.captured_queries
    assert read["sql"].lstrip().upper().startswith("SELECT")
    assert ApiKey.objects.get(user=alice).last_used_at is None


@pytest.mark.django_db
def test_a_revoked_key_or_an_inactive_user_opens_nothing_at_once(alice, alice_key):
    assert key_owner(alice_key) == alice
    ApiKey.objects.filter(user=alice).update(revoked_at=timezone.now())
    assert key_owner(alice_key) is None
    ApiKey.objects.filter(user=alice).update(revoked_at=None)
    alice.is_active = False
    alice.save()
    assert key_owner(alice_key) is None


@pytest.mark.django_db
def test_last_use_is_written_at_most_once_a_minute(alice, alice_key):
    assert key_use_claim(alice_key) and not key_use_claim(alice_key)  # this process's trips
    key_mark_used(alice_key)
    first = ApiKey.objects.get(user=alice).last_used_at
    assert first is not None
    key_mark_used(alice_key)  # another process's, within the minute: no write
    assert ApiKey.objects.get(user=alice).last_used_at == first
    ApiKey.objects.filter(user=alice).update(last_used_at=first - timedelta(minutes=2))
    key_mark_used(alice_key)
    assert ApiKey.objects.get(user=alice).last_used_at > first - timedelta(minutes=1)


@pytest.mark.django_db(transaction=True)
async def test_a_v1_turn_marks_its_key_used_after_it_started(alice, alice_key, fake_llm):
    before = timezone.now()
    await client(alice_key).chat.completions.create(
        model=settings.OPENAI_MODEL, messages=[{"role": "user", "content": "Hi"}]
    )
    await asyncio.gather(*views._marking)
    key = await ApiKey.objects.aget(user=alice)
    assert key.last_used_at is not None and key.last_used_at >= before
