"""Data rights: a user's data exported as JSON and imported back, losing nothing."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.core.serializers.json import DjangoJSONEncoder
from django.urls import reverse

from audit import acting_as
from chat.models import Conversation, Message
from chat.services import conversation_create, message_create, reply_finish
from memory.models import ActionItem, Fact, Summary
from memory.services import fact_supersede, memory_update, summary_make_current
from profiles.services import profile_observe_message, profile_update_preferences
from staff.services.user_data import user_data_delete
from userdata.transfer.export import user_data_export
from userdata.transfer.importer import BadExport, user_data_import

pytestmark = pytest.mark.django_db


@pytest.fixture
def rich(world, alice, staff):
    """Everything an export holds: profile with history and snapshots, a second
    conversation (archived) with a streamed and an interrupted reply, staff edits."""
    for i in range(11):
        profile_observe_message(user=alice, text=f"Dear Sir, please review API number {i}.")
    profile_update_preferences(
        user=alice, preferences={"detail_level": "brief", "topics_of_interest": ["DB"]}
    )
    other = conversation_create(
        user=alice, title="Side chat", context_budget=4000, model="gpt-4o-mini"
    )
    question = message_create(conversation=other, role="user", content="Tell me about ünïcode ✓")
    Message.objects.filter(pk=question.pk).update(branch_title="Unicode explained")
    reply = message_create(
        conversation=other, role="assistant", content="", status="streaming", reply_to=question
    )
    reply_finish(
        reply=reply,
        content="Partial answer",
        status="interrupted",
        error="stopped by the user",
        prompt_tokens=50,
        completion_tokens=3,
        time_to_first_token=0.25,
        duration=1.5,
        model="gpt-4o-mini",
        context_report={"total_tokens": 50, "memories": [{"kind": "fact", "id": 1}]},
        system_prompt_version=1,
    )
    other.archived = True
    other.save()
    fact = world["fact"]
    memory_update(memory=fact, actor=staff, changes={"text": "Alice leads it."})
    newer = Fact.objects.create(user=alice, conversation=other, text="Alice leads the May launch.")
    newer.source_messages.add(question)
    fact_supersede(fact=Fact.objects.get(pk=fact.pk), actor=staff, by=newer)
    blocker = ActionItem.objects.create(user=alice, what="Get the budget", dedupe_key="budget")
    world["action"].depends_on.add(blocker)
    world["action"].source_messages.add(world["messages"][0])
    summary_make_current(summary=world["summaries"][0], actor=staff)
    return world


def _json(document) -> dict:
    """As the download has it (and without the export time)."""
    document = json.loads(json.dumps(document, cls=DjangoJSONEncoder))
    document.pop("exported_at")
    return document


def _as_imported(document, owner: str) -> dict:
    """``document`` as an import records its history: a record the user made stays theirs;
    anyone else's is left unnamed, its reason saying it was imported if it had none (never
    the staff member who imported it, whatever the file says)."""

    def walk(value):
        if isinstance(value, dict):
            record = "history_type" in value and "history_user" in value
            if record and value["history_user"] != owner:
                value["history_user"] = None
                value["history_change_reason"] = (
                    value["history_change_reason"] or "imported from an export"
                )
            for child in value.values():
                walk(child)
        elif isinstance(value, list):
            for child in value:
                walk(child)

    document = json.loads(json.dumps(document))
    walk(document)
    return document


def test_export_then_delete_then_import_gives_the_same_export(rich, alice, staff):
    """The round trip loses nothing: profile, conversations, messages, summaries, memories and
    their history all come back, and a second export equals the first."""
    with acting_as(alice):  # a change the user made: theirs after the import too
        profile_update_preferences(user=alice, preferences={"tone": "casual"})
    before = _json(user_data_export(user=alice))
    assert len(before["conversations"]) == 2 and before["profile"]["history"]
    assert any(f["history"] for f in before["facts"])
    user_data_delete(user=alice, actor=staff)
    emptied = _json(user_data_export(user=alice))
    assert emptied["conversations"] == [] and emptied["facts"] == [] and emptied["profile"] is None
    result = user_data_import(document=before, actor=staff)
    assert result.user == alice and not result.user_created
    entry = LogEntry.objects.filter(object_id=str(alice.pk)).latest("action_time")
    assert entry.user == staff and entry.change_message.startswith("Imported the user's data")
    after = _json(user_data_export(user=alice))
    assert after == _as_imported(before, alice.username)
    # Staff edits in the file were made (here) by the importer: still not named as theirs.
    assert any(r["history_user"] == staff.username for f in before["facts"] for r in f["history"])
    assert not any(r["history_user"] for f in after["facts"] for r in f["history"] if r)
    assert [r["history_user"] for r in after["profile"]["history"]].count("alice") == 1


def test_the_import_restores_links_between_rows(rich, alice, staff):
    """Replies, superseding facts, dependencies, sources and the current summary point at the
    new rows."""
    document = _json(user_data_export(user=alice))
    user_data_delete(user=alice, actor=staff)
    user_data_import(document=document, actor=staff)
    reply = Message.objects.get(conversation__user=alice, status="interrupted")
    assert reply.reply_to.content == "Tell me about ünïcode ✓"
    assert reply.context_report["total_tokens"] == 50 and reply.error == "stopped by the user"
    old = Fact.objects.get(user=alice, text="Alice leads it.")
    assert old.superseded_by.text == "Alice leads the May launch."
    assert old.history.latest("history_date").history_user is None
    action = ActionItem.objects.get(user=alice, what="Write the migration plan")
    assert [b.what for b in action.depends_on.all()] == ["Get the budget"]
    assert [m.content for m in action.source_messages.all()] == [
        "We chose PostgreSQL for the launch."
    ]
    current = Summary.objects.get(conversation__user=alice, is_current=True)
    covered = Message.objects.get(conversation__user=alice, content="Noted: PostgreSQL it is.")
    assert current.version == 1 and current.covered_through == covered.pk


def test_messages_are_stored_through_message_create_many(rich, alice, staff, monkeypatch):
    """The import stores messages with chat.services.message_create_many."""
    from userdata.transfer import importer

    calls = []
    real = importer.message_create_many

    def spy(**kwargs):
        calls.append(kwargs["conversation"].pk)
        return real(**kwargs)

    monkeypatch.setattr(importer, "message_create_many", spy)
    document = _json(user_data_export(user=alice))
    user_data_delete(user=alice, actor=staff)
    user_data_import(document=document, actor=staff)
    assert len(calls) == 2


def test_importing_over_existing_data_is_refused(rich, alice, staff):
    """A user who still has data would get duplicates: nothing is imported."""
    document = _json(user_data_export(user=alice))
    with pytest.raises(BadExport, match="already has data"):
        user_data_import(document=document, actor=staff)


def test_the_import_can_create_the_user_under_another_name(rich, alice, staff):
    """With a username, the data goes to that (new) user, who gets no usable password."""
    document = _json(user_data_export(user=alice))
    result = user_data_import(document=document, actor=staff, username="alice2")
    assert result.user_created and not result.user.has_usable_password()
    copy = _json(user_data_export(user=result.user))
    assert copy["user"]["username"] == "alice2"
    expected = _as_imported(document, "alice")
    assert {k: v for k, v in copy.items() if k != "user"} == {
        k: v for k, v in expected.items() if k != "user"
    }


def test_an_export_from_before_the_memory_mode_still_imports(rich, alice, staff):
    """Its memory switch (memory_enabled false) becomes the mode "off", history included."""
    from profiles.selectors import memory_mode

    document = _json(user_data_export(user=alice))
    for fields in [document["profile"]["fields"]] + [
        record["fields"] for record in document["profile"]["history"]
    ]:
        del fields["memory_mode"]
        fields["memory_enabled"] = False
    user_data_import(document=document, actor=staff, username="alice2")
    alice2 = get_user_model().objects.get(username="alice2")
    assert memory_mode(alice2) == "off"


def test_a_broken_document_imports_nothing(rich, alice, staff):
    """A bad row anywhere rolls the whole import back, with a reason."""
    document = _json(user_data_export(user=alice))
    document["facts"][0]["fields"]["created_at"] = "not a date"
    user_data_delete(user=alice, actor=staff)
    with pytest.raises(BadExport, match="could not be imported"):
        user_data_import(document=document, actor=staff)
    assert not Fact.objects.filter(user=alice).exists()
    assert not Message.objects.filter(conversation__user=alice).exists()
    with pytest.raises(BadExport, match="not a memorychat user export"):
        user_data_import(document={"hello": 1}, actor=staff)


@pytest.mark.parametrize(
    ("imported_from", "words"),
    [
        ({"source": "gemini", "id": "x"}, r"imported_from\.source: 'gemini' is not one of"),
        ({"source": "chatgpt", "id": ""}, r"imported_from\.id: the conversation's id"),
        ({"source": "chatgpt"}, "must be null or an object"),
        ("c-1", "must be null or an object"),
    ],
)
def test_a_wrong_imported_from_is_refused(rich, alice, staff, imported_from, words):
    document = _json(user_data_export(user=alice))
    document["conversations"][0]["imported_from"] = imported_from
    user_data_delete(user=alice, actor=staff)
    with pytest.raises(BadExport, match=words):
        user_data_import(document=document, actor=staff)
    assert not Conversation.objects.filter(user=alice).exists()


def test_the_same_imported_from_twice_is_refused(rich, alice, staff):
    document = _json(user_data_export(user=alice))
    for conversation in document["conversations"]:
        conversation["imported_from"] = {"source": "claude", "id": "u-1"}
    user_data_delete(user=alice, actor=staff)
    with pytest.raises(
        BadExport, match=r"conversations\[1\]\.imported_from: also conversations\[0\]'s"
    ):
        user_data_import(document=document, actor=staff)


def test_the_export_view_downloads_json(staff_client, rich, alice):
    """A JSON attachment named after the user."""
    response = staff_client.get(reverse("staff:user_export", args=[alice.pk]))
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert 'filename="memorychat-alice-' in response["Content-Disposition"]
    assert json.loads(response.content)["user"]["username"] == "alice"


def test_the_import_view_uploads_an_export(staff_client, rich, alice, staff):
    """Upload the download back into a new user; errors show on the form."""
    body = staff_client.get(reverse("staff:user_export", args=[alice.pk])).content
    upload = io.BytesIO(body)
    upload.name = "alice.json"
    response = staff_client.post(reverse("staff:import"), {"file": upload, "username": "carol"})
    carol = get_user_model().objects.get(username="carol")
    assert response.status_code == 302 and response.url == reverse("staff:user", args=[carol.pk])
    assert Fact.objects.filter(user=carol).count() == Fact.objects.filter(user=alice).count()
    again = io.BytesIO(body)
    again.name = "alice.json"
    html = staff_client.post(reverse("staff:import"), {"file": again, "username": "carol"}).content
    assert b"already has data" in html
    junk = io.BytesIO(b"{not json")
    junk.name = "junk.json"
    assert b"Not a JSON file" in staff_client.post(reverse("staff:import"), {"file": junk}).content


def test_an_import_in_chunks_of_one_restores_every_link(rich, alice, staff, monkeypatch):
    """Memories stored one per transaction: links that point forward across chunks
    (superseding facts, dependencies) still come back, and the export equals the first."""
    from userdata.transfer import importer

    monkeypatch.setattr(importer, "IMPORT_CHUNK", 1)
    before = _json(user_data_export(user=alice))
    user_data_delete(user=alice, actor=staff)
    user_data_import(document=before, actor=staff)
    assert _json(user_data_export(user=alice)) == _as_imported(before, alice.username)


def test_an_import_stopped_half_way_resumes_and_stores_nothing_twice(
    rich, alice, staff, monkeypatch
):
    """The database fails on the second conversation's step: what came before is kept, the
    staff are told to import the same file again, and doing so finishes the import without
    duplicating anything (issue 40, low 8)."""
    from django.db import OperationalError

    from userdata.models import ImportProgress
    from userdata.transfer import importer

    before = _json(user_data_export(user=alice))
    user_data_delete(user=alice, actor=staff)
    real = importer._import_conversation
    calls = []

    def flaky(data, *args, **kwargs):
        calls.append(kwargs["where"])
        if len(calls) == 2:
            raise OperationalError("database is locked")
        return real(data, *args, **kwargs)

    monkeypatch.setattr(importer, "_import_conversation", flaky)
    with pytest.raises(BadExport, match="import the same file again"):
        user_data_import(document=before, actor=staff)
    assert Conversation.objects.filter(user=alice).count() == 1
    # the profile, then the first conversation: itself, its messages, its fields and summaries
    assert ImportProgress.objects.get(user=alice).steps_done == 4
    result = user_data_import(document=before, actor=staff)
    assert calls == ["conversations[0]", "conversations[1]", "conversations[1]"]
    assert result.counts["conversations"] == 2
    assert _json(user_data_export(user=alice)) == _as_imported(before, alice.username)
    assert ImportProgress.objects.get(user=alice).finished_at is not None
    with pytest.raises(BadExport, match="already has data"):  # finished: no second copy
        user_data_import(document=before, actor=staff)


def test_a_long_conversation_is_stored_in_chunks_and_resumes_inside_one(
    rich, alice, staff, monkeypatch
):
    """A conversation's messages go in chunks of MESSAGE_CHUNK, each its own transaction: a
    failure in the middle of one conversation keeps the chunks before it, and importing the
    same file again finishes it with every message once (issue 40, low 8)."""
    from django.db import OperationalError

    from userdata.transfer import importer

    before = _json(user_data_export(user=alice))
    assert max(len(c["messages"]) for c in before["conversations"]) >= 2
    user_data_delete(user=alice, actor=staff)
    monkeypatch.setattr(importer, "MESSAGE_CHUNK", 1)
    real, chunks = importer._import_messages, []

    def flaky(data, *args, **kwargs):
        chunks.append((kwargs["where"], kwargs["start"]))
        if len(chunks) == 2:
            raise OperationalError("database is locked")
        return real(data, *args, **kwargs)

    monkeypatch.setattr(importer, "_import_messages", flaky)
    with pytest.raises(BadExport, match="import the same file again"):
        user_data_import(document=before, actor=staff)
    assert Message.objects.filter(conversation__user=alice).count() == 1  # the first chunk
    user_data_import(document=before, actor=staff)
    assert chunks[1] == chunks[2]  # the failed chunk again, not the first
    assert _json(user_data_export(user=alice)) == _as_imported(before, alice.username)


def test_an_import_over_the_size_cap_is_refused_with_the_limit(rich, alice, staff, settings):
    before = _json(user_data_export(user=alice))
    user_data_delete(user=alice, actor=staff)
    settings.MEMORYCHAT_IMPORT_MAX_ROWS = 3
    with pytest.raises(BadExport, match=r"takes at most 3 \(IMPORT_MAX_ROWS\)"):
        user_data_import(document=before, actor=staff)
    assert not Conversation.objects.filter(user=alice).exists()


def test_a_row_without_a_ref_is_matched_by_no_reference_even_after_a_resume():
    """The refs are saved with the progress (JSON) for a resume: a row without a ref, kept
    under a None key, came back as "null", which an odd file's reference could then name."""
    from userdata.transfer.importer import _Ids

    ids = _Ids()
    ids.remember(Message, None, 7)
    ids.remember(Message, "m-1", 8)
    resumed = _Ids(json.loads(json.dumps(ids.stored())))
    assert (resumed.id(Message, "null"), resumed.id(Message, "m-1")) == (None, 8)


def _renamed_refs(document: dict, names: dict[str, str]) -> dict:
    """``document`` with its references renamed by ``names`` wherever they stand (a row's
    ``ref`` and every link naming it); the exports' refs ("c1", "m3", "f2") are no other
    value of the fixture's."""

    def walk(value):
        if isinstance(value, dict):
            return {key: walk(child) for key, child in value.items()}
        if isinstance(value, list):
            return [walk(child) for child in value]
        return names.get(value, value) if isinstance(value, str) else value

    return walk(json.loads(json.dumps(document)))


def test_refs_that_look_like_places_in_the_document_stay_apart_from_them(rich, alice, staff):
    """The import finds a row again by its place in the file ("conversations[1]", "facts[0]")
    apart from the file's own refs: refs spelt like places, crossed over ("#conversations[0]"
    names the second conversation), import the same data as the plain refs did."""
    before = _json(user_data_export(user=alice))
    conversations = [c["ref"] for c in before["conversations"]]
    facts = [f["ref"] for f in before["facts"]]
    actions = [a["ref"] for a in before["action_items"]]
    assert len(conversations) == 2 and len(facts) >= 2 and len(actions) >= 2
    names = {
        conversations[0]: "#conversations[1]",
        conversations[1]: "#conversations[0]",
        # facts as the places were once spelt, action items as they are now, both crossed
        **{ref: f"#{len(facts) - 1 - n}" for n, ref in enumerate(facts)},
        **{ref: f"action_items[{len(actions) - 1 - n}]" for n, ref in enumerate(actions)},
    }
    user_data_delete(user=alice, actor=staff)
    user_data_import(document=_renamed_refs(before, names), actor=staff)
    assert _json(user_data_export(user=alice)) == _as_imported(before, alice.username)


def test_a_resume_keeps_refs_and_places_apart():
    """The saved progress keeps the two tables apart; progress saved before they were (the
    places among the refs as "#<where>") resumes with each row where it was."""
    from userdata.transfer.importer import _Ids

    ids = _Ids()
    ids.remember(Conversation, "conversations[0]", 8)
    ids.place(Conversation, "conversations[0]", 7)
    resumed = _Ids(json.loads(json.dumps(ids.stored())))
    assert resumed.made(Conversation, "conversations[0]") == 7
    assert resumed.id(Conversation, "conversations[0]") == 8
    legacy = _Ids(
        {"chat.Conversation": {"c1": 7, "#conversations[0]": 7}, "memory.Fact": {"#0": 9}}
    )
    assert legacy.made(Conversation, "conversations[0]") == 7 and legacy.id(Conversation, "c1") == 7
    assert legacy.made(Fact, "facts[0]") == 9 and legacy.id(Fact, "#0") is None


def test_a_first_questions_branch_title_comes_back(rich, alice, staff):
    """The title generated for a branch (``Message.branch_title``) is exported and restored:
    a switch back to that branch after the import shows it again, not a new one."""
    question = Message.objects.filter(conversation__user=alice, role="user").first()
    Message.objects.filter(pk=question.pk).update(branch_title="Unicode in Python")
    before = _json(user_data_export(user=alice))
    user_data_delete(user=alice, actor=staff)

    user_data_import(document=before, actor=staff)

    titles = Message.objects.filter(conversation__user=alice).values_list("branch_title", flat=True)
    assert "Unicode in Python" in titles
