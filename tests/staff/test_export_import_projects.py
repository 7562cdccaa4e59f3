"""Projects in the user's export and the staff import (issue 37): a round trip keeps each
project, which conversations and memories belong to it, and its scope in the index; a file
naming a project it does not hold is refused, as is a temporary chat in a project."""

from __future__ import annotations

import copy
import json

import pytest
from django.core.serializers.json import DjangoJSONEncoder

from chat.models import Conversation
from chat.services import conversation_create, message_create
from memory import recall
from memory.models import Decision, Fact
from projects.models import Project
from staff.services.user_data import user_data_delete
from userdata.services import account_delete
from userdata.transfer.export import user_data_export
from userdata.transfer.importer import BadExport, user_data_import

pytestmark = pytest.mark.django_db


@pytest.fixture
def garden(alice):
    project = Project.objects.create(
        user=alice, name="Garden", description="Beds", instructions="Answer as a gardener."
    )
    Project.objects.create(user=alice, name="Empty")
    talk = conversation_create(user=alice, title="Tomatoes")
    Conversation.objects.filter(pk=talk.pk).update(project=project)
    talk.refresh_from_db()
    said = message_create(conversation=talk, role="user", content="The zorblat tomatoes wilt")
    fact = Fact.objects.create(
        user=alice, conversation=talk, project=project, text="Zorblat tomatoes need shade"
    )
    fact.source_messages.add(said)
    Decision.objects.create(
        user=alice, conversation=talk, project=project, what="Water at dawn", dedupe_key="w"
    )
    outside = conversation_create(user=alice, title="Holiday")
    message_create(conversation=outside, role="user", content="Flights to Porto")
    Fact.objects.create(user=alice, conversation=outside, text="Likes Porto")
    # The same decision outside the project too: one per scope (memory 0017).
    Decision.objects.create(user=alice, conversation=outside, what="Water at dawn", dedupe_key="w")
    return project


def _json(document) -> dict:
    document = json.loads(json.dumps(document, cls=DjangoJSONEncoder))
    document.pop("exported_at")
    return document


def test_the_export_names_each_conversations_and_memorys_project(garden, alice):
    document = _json(user_data_export(user=alice, for_the_user=True))
    assert [p["fields"]["name"] for p in document["projects"]] == ["Garden", "Empty"]
    ref = document["projects"][0]["ref"]
    assert [c["fields"]["project"] for c in document["conversations"]] == [ref, None]
    assert {f["fields"]["text"]: f["fields"]["project"] for f in document["facts"]} == {
        "Zorblat tomatoes need shade": ref,
        "Likes Porto": None,
    }


def test_a_round_trip_keeps_the_projects_and_their_scope(garden, alice, staff):
    before = _json(user_data_export(user=alice))
    user_data_delete(user=alice, actor=staff)
    assert not Project.objects.filter(user=alice).exists()
    result = user_data_import(document=before, actor=staff)
    assert result.counts["projects"] == 2
    after = _json(user_data_export(user=alice))
    assert after["projects"] == before["projects"]
    assert [c["fields"]["project"] for c in after["conversations"]] == ["p1", None]
    assert [f["fields"]["project"] for f in after["facts"]] == ["p1", None]
    assert sorted(str(d["fields"]["project"]) for d in after["decisions"]) == ["None", "p1"]
    # the index holds the imported rows in the project's scope
    project = Project.objects.get(user=alice, name="Garden")
    holiday = Conversation.objects.get(user=alice, title="Holiday")
    found = recall.recall_for_turn(user=alice, conversation=holiday, query="zorblat tomatoes")
    assert not [item for item in found if "orblat" in item.text]
    inside = conversation_create(user=alice)
    Conversation.objects.filter(pk=inside.pk).update(project=project)
    inside.refresh_from_db()
    found = recall.recall_for_turn(user=alice, conversation=inside, query="zorblat tomatoes")
    assert any("orblat" in item.text for item in found)


def test_a_file_naming_a_project_it_does_not_hold_is_refused(garden, alice, bob, staff):
    """Another user's project (by its id, or any reference the file does not define) is not
    found: the import stores nothing."""
    document = _json(user_data_export(user=alice))
    user_data_delete(user=alice, actor=staff)
    bobs = Project.objects.create(user=bob, name="Bob's")
    for forged in (str(bobs.pk), "p99"):
        changed = copy.deepcopy(document)
        changed["facts"][0]["fields"]["project"] = forged
        with pytest.raises(BadExport, match="no project"):
            user_data_import(document=changed, actor=staff)
        assert not Conversation.objects.filter(user=alice).exists()
        assert not Fact.objects.filter(project=bobs).exists()


def test_a_temporary_chat_in_a_project_is_refused(garden, alice, staff):
    document = _json(user_data_export(user=alice))
    user_data_delete(user=alice, actor=staff)
    document["conversations"][0]["fields"]["temporary"] = True
    with pytest.raises(BadExport, match="temporary"):
        user_data_import(document=document, actor=staff)


def test_deleting_the_account_removes_its_projects(garden, alice):
    alice_id = alice.pk
    account_delete(user=alice)
    assert not Project.objects.filter(user_id=alice_id).exists()


def test_a_file_with_the_same_decision_twice_in_one_scope_is_refused(garden, alice, staff):
    """Once in the project and once outside is fine (the round trip above); twice in one
    scope cannot be stored: refused before anything is, saying which."""
    document = _json(user_data_export(user=alice))
    user_data_delete(user=alice, actor=staff)
    twice = copy.deepcopy(document)
    inside = next(d for d in twice["decisions"] if d["fields"]["project"])
    twice["decisions"].append(copy.deepcopy(inside))
    twice["decisions"][-1]["ref"] = "d99"
    with pytest.raises(BadExport, match=r"decisions\[2\].fields.dedupe_key: the same decision"):
        user_data_import(document=twice, actor=staff)
    assert not Conversation.objects.filter(user=alice).exists()
