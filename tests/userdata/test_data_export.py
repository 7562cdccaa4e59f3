"""The user's download is the staff import's format: it round-trips through the import."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model

from memory.models import Fact
from userdata.services import account_delete, data_export
from userdata.transfer import FORMAT
from userdata.transfer.export import user_data_export
from userdata.transfer.importer import user_data_import

pytestmark = pytest.mark.django_db


def _without_time(document: dict) -> dict:
    document = dict(document)
    document.pop("exported_at")
    return document


def test_the_export_round_trips_through_the_staff_import(alice, staff, data):
    """Export as alice, delete her account, import the file for a new user: the new user's
    export is alice's, field for field (but the username)."""
    download = data_export(user=alice)
    exported = json.loads(download.body)
    assert exported["format"] == FORMAT and exported["user"]["username"] == "alice"
    assert len(exported["conversations"]) == 2 and len(exported["facts"]) == 2
    levels = {row["domain"]: row for row in exported["profile"]["domains"]}
    assert levels["cooking"]["level"] == "expert" and levels["cooking"]["evidence"] == 8
    assert levels["music"]["explicit_level"] == "beginner" and levels["law"]["hidden"] is True
    assert exported["profile"]["domain_snapshots"]
    account_delete(user=alice)
    result = user_data_import(document=exported, actor=staff, username="alice-again")
    assert result.counts["conversations"] == 2 and result.counts["facts"] == 2
    again = json.loads(json.dumps(user_data_export(user=result.user), default=str))
    expected = _without_time(exported)
    expected["user"] = {**expected["user"], "username": "alice-again"}
    got = _without_time(again)
    # The import makes a new account (its own join date); a history record's author is the
    # user or nobody, its reason saying it was imported (a file cannot name another account).
    for document in (expected, got):
        document["user"].pop("date_joined")
    assert _strip_authors(got) == _strip_authors(expected)
    city = Fact.objects.get(user=result.user, text__icontains="Grenoble")
    assert city.source_messages.count() == 2


def _strip_authors(value):
    if isinstance(value, dict):
        authorship = {"history_user", "history_change_reason"}
        return {k: _strip_authors(v) for k, v in value.items() if k not in authorship}
    if isinstance(value, list):
        return [_strip_authors(v) for v in value]
    return value


def test_the_file_name_is_safe(db):
    """Whatever the username, the name is ASCII letters, digits and dashes."""
    user = get_user_model().objects.create_user('zoë+"x/..', password="zoe-password-1")
    name = data_export(user=user).filename
    assert name.startswith("memorychat-zoe-x-") and name.endswith(".json")
    assert all(c.isalnum() or c in "-." for c in name)


def test_the_users_own_copy_says_staff_for_the_staff_who_edited_it(alice, staff, data):
    """Staff edited one of alice's memories: her own download says "staff", never the staff
    account's name (issue 40, low 5); the staff's export still names them."""
    from memory.services.edits import memory_update

    fact = Fact.objects.filter(user=alice).first()
    memory_update(memory=fact, actor=staff, changes={"text": "Lives in Grenoble, France"})
    own = data_export(user=alice).body
    assert '"history_user": "staff"' in own and f'"{staff.username}"' not in own
    assert f'"{staff.username}"' in json.dumps(user_data_export(user=alice), default=str)
