"""After forgetting, no table but the history keeps a copy of a forgotten memory's text: the
"Remembered" notices and the "What the model saw" reports are blanked (issue 40, low 10)."""

from __future__ import annotations

import pytest
from django.apps import apps
from django.db import models

from chat.models import Message, ReplyVersion
from chat.services import message_create
from memory.models import MemoryEvent
from memory.services import conversation_forget
from memory.services.events import memory_event_record, note
from userdata.services import forget_everything

pytestmark = pytest.mark.django_db


def tables_holding(text: str) -> list[str]:
    """Every (non-history) model and field whose stored text or JSON contains ``text``."""
    found = []
    for model in apps.get_models():
        if model.__name__.startswith("Historical"):
            continue
        for field in model._meta.concrete_fields:
            if isinstance(field, models.TextField | models.CharField):
                lookup = {f"{field.attname}__contains": text}
            else:
                continue
            if model._base_manager.filter(**lookup).exists():
                found.append(f"{model.__name__}.{field.name}")
        json_fields = [f for f in model._meta.concrete_fields if isinstance(f, models.JSONField)]
        for field in json_fields:
            for value in model._base_manager.values_list(field.attname, flat=True):
                if value is not None and text in str(value):
                    found.append(f"{model.__name__}.{field.name}")
                    break
    return found


@pytest.fixture
def copies(alice, bob, data):
    """The daughter fact (learned in "trip") shown in a notice and sent to the model in a
    reply of "work", with the trip's summary, as a turn would have it. Bob, who said the same
    sentence, is gone: the walk of every table then looks at alice's rows only."""
    bob.delete()
    daughter = data["daughter"]
    changes = []
    note(changes, daughter, "added")
    told = data["trip"].messages.filter(role="user").first()
    memory_event_record(conversation=data["trip"], message=told, items=changes)
    question = message_create(conversation=data["work"], role="user", content="Who is she?")
    summary = data["trip"].summaries.get()
    report = {
        "total_tokens": 9,
        "memories": [
            {"kind": "fact", "id": daughter.pk, "text": daughter.text, "why": "name",
             "source": "Lyon trip", "score": 1.0, "date": "", "message_ids": [told.pk]},
        ],
        "summary": {"id": summary.pk, "version": 1, "tokens": 3, "covered_through": 0,
                    "text": summary.text},
    }  # fmt: skip
    reply = message_create(
        conversation=data["work"], role="assistant", content="Zoe.", reply_to=question
    )
    Message.objects.filter(pk=reply.pk).update(context_report=report)
    ReplyVersion.objects.create(
        reply=reply, number=1, content="Earlier.", status="complete", context_report=report,
        created_at=reply.created_at,
    )  # fmt: skip
    assert MemoryEvent.objects.filter(user=alice).exists()
    return daughter.text, summary.text


def test_forgetting_a_conversation_leaves_no_copy_of_what_it_taught(alice, data, copies):
    fact_text, summary_text = copies
    assert "MemoryEvent.items" in tables_holding(fact_text)
    conversation_forget(conversation=data["trip"], actor=alice)
    assert tables_holding(fact_text) == []
    assert tables_holding(summary_text) == []
    reply = Message.objects.get(conversation=data["work"], role="assistant", content="Zoe.")
    assert reply.context_report["memories"][0]["text"] == "(forgotten)"


def test_forgetting_everything_leaves_no_copy_either(alice, data, copies):
    fact_text, summary_text = copies
    forget_everything(user=alice, reset_style=False, clear_preferences=False)
    assert tables_holding(fact_text) == [] and tables_holding(summary_text) == []


def test_deleting_a_memory_removes_it_from_the_notices(alice, data):
    """The memory page's delete (one or several): no "Remembered" notice keeps offering it."""
    from memory.models import Fact
    from memory.services import memories_delete, memory_delete

    daughter, told = data["daughter"], data["trip"].messages.filter(role="user").first()
    city = Fact.objects.filter(user=alice).exclude(pk=daughter.pk).first()
    changes = []
    for fact in (daughter, city):
        note(changes, fact, "added")
    memory_event_record(conversation=data["trip"], message=told, items=changes)
    ours = MemoryEvent.objects.filter(user=alice).latest("pk").pk

    def offered():
        return [
            (item["kind"], item["id"])
            for event in MemoryEvent.objects.filter(user=alice)
            for item in event.items
        ]

    memory_delete(memory=daughter, actor=alice)
    assert ("fact", daughter.pk) not in offered() and ("fact", city.pk) in offered()
    assert [i["id"] for i in MemoryEvent.objects.get(pk=ours).items] == [city.pk]
    memories_delete(model=Fact, ids=[city.pk], actor=alice)
    assert ("fact", city.pk) not in offered()
    assert not MemoryEvent.objects.filter(pk=ours).exists()  # left empty: gone
