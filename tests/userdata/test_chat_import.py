"""Importing ChatGPT and Claude exports from "Your data": the upload, the background job, the
memory built after it, and what the page shows."""

from __future__ import annotations

import io
import json
import zlib
from datetime import UTC, datetime
from itertools import islice

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from chat.models import Conversation, Message
from chat.services import conversation_create
from memory import context
from memory.models import Fact, Summary
from profiles.services import profile_set_memory_mode
from staff.services.user_data import user_data_delete
from tests.support.tasks import run_pending_tasks
from tests.userdata.exports import (
    T0,
    as_json,
    as_zip,
    chatgpt_conversation,
    claude_conversation,
)
from userdata import chat_import
from userdata.models import ChatImport, ImportedConversation
from userdata.services import data_export
from userdata.transfer.external import BadFile
from userdata.transfer.importer import user_data_import

pytestmark = pytest.mark.django_db(transaction=True)
URL = "/account/import/"


def upload(client, data: bytes, name="export.json"):
    return client.post(URL, {"file": SimpleUploadedFile(name, data)})


def two_chatgpt_conversations():
    return [
        chatgpt_conversation(),
        chatgpt_conversation(
            ident="c-2",
            title="Work",
            start=T0 + 86400,
            turns=[
                ("user", "I live in Grenoble and I work as a luthier."),
                ("assistant", "A luthier in Grenoble: noted."),
                ("user", "We decided to move the workshop to Annecy."),
                ("assistant", "Annecy it is."),
            ],
        ),
    ]


def test_a_chatgpt_export_becomes_the_users_conversations(alice_client, alice):
    """Titles, dates and messages as in the export; the memory is then built from them."""
    response = upload(alice_client, as_json(two_chatgpt_conversations()))
    assert response.status_code == 302
    assert ChatImport.objects.get(user=alice).status == ChatImport.Status.QUEUED
    run_pending_tasks()

    done = ChatImport.objects.get(user=alice)
    assert done.status == ChatImport.Status.DONE, done.error
    assert (done.imported, done.messages, done.already) == (2, 6, 0)
    assert done.payload in (b"", memoryview(b""))
    trip = Conversation.objects.get(user=alice, title="Trip to Lyon")
    assert trip.created_at == datetime.fromtimestamp(T0, tz=UTC)
    assert trip.updated_at == datetime.fromtimestamp(T0 + 120, tz=UTC)  # its update_time
    assert list(trip.messages.values_list("role", "content")) == [
        ("user", "My daughter's name is Zenobia."),
        ("assistant", "Noted: Zenobia."),
    ]
    assert trip.messages.first().token_count > 0
    assert ImportedConversation.objects.get(conversation=trip).source_id == "c-1"
    # Built as any conversation's memory: a summary each, facts from what the user said.
    assert Summary.objects.filter(conversation__user=alice, is_current=True).count() == 2
    assert Fact.objects.filter(user=alice, text__icontains="Zenobia").exists()
    assert (done.memory_done, done.memory_total) == (2, 2)


def test_the_conversations_appear_in_the_sidebar(alice_client, alice):
    upload(alice_client, as_json(two_chatgpt_conversations()))
    alice_client.get(URL)  # the notice "export received" shown
    run_pending_tasks()
    page = alice_client.get(reverse("chat:home")).content.decode()
    assert "Trip to Lyon" in page and "Work" in page


def test_a_claude_export_in_its_zip(alice_client, alice):
    response = upload(alice_client, as_zip([claude_conversation()]), name="data-2024.zip")
    assert response.status_code == 302
    run_pending_tasks()
    item = ChatImport.objects.get(user=alice)
    assert (item.source, item.status, item.imported) == ("claude", "done", 1)
    garden = Conversation.objects.get(user=alice, title="Garden plans")
    assert garden.created_at == datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
    assert garden.messages.first().content == "I live in Grenoble and grow tomatoes."


def test_a_chatgpt_zip(alice_client, alice):
    upload(alice_client, as_zip(two_chatgpt_conversations()), name="export.zip")
    run_pending_tasks()
    assert Conversation.objects.filter(user=alice).count() == 2


@override_settings(FILE_UPLOAD_MAX_MEMORY_SIZE=1_000)
def test_a_large_upload_is_read_from_its_temporary_file(alice_client, alice):
    """Django spools an upload over FILE_UPLOAD_MAX_MEMORY_SIZE to disk: the import reads it
    there, zip and all, as a stream."""
    many = [
        chatgpt_conversation(
            ident=f"c-{n}", title=f"Chat {n}", turns=[("user", f"Note {n}. " * 50)]
        )
        for n in range(60)
    ]
    data = as_zip(many)
    assert len(data) > 1_000
    response = upload(alice_client, data, name="export.zip")
    assert response.status_code == 302
    run_pending_tasks()
    item = ChatImport.objects.get(user=alice)
    assert (item.imported, item.status) == (60, "done")
    assert Conversation.objects.filter(user=alice, title="Chat 59").exists()


@override_settings(MEMORYCHAT_IMPORT_MAX_ROWS=5)
def test_an_export_over_the_row_limit_is_refused_and_nothing_is_stored(alice_client, alice):
    response = upload(alice_client, as_json(two_chatgpt_conversations()))
    assert response.status_code == 400
    assert "holds more than 5 conversations and messages" in response.content.decode()
    assert not ChatImport.objects.exists()


def test_a_payload_kept_by_the_earlier_version_is_still_imported(alice):
    """An import queued before an upgrade kept its conversations as one JSON list."""
    rows = [
        [
            "c-1",
            "Old",
            "2024-01-01T00:00:00+00:00",
            "2024-01-01T00:01:00+00:00",
            [["user", "I keep bees.", "2024-01-01T00:00:00+00:00"]],
        ],
    ]
    kept = ChatImport.objects.create(
        user=alice,
        source="chatgpt",
        payload=zlib.compress(json.dumps(rows).encode()),
        total=1,
    )
    chat_import.chat_import_run(import_id=kept.pk)
    conversation = Conversation.objects.get(user=alice, title="Old")
    assert conversation.messages.get().content == "I keep bees."


def test_a_second_import_adds_only_what_is_new(alice_client, alice):
    """The same export again stores nothing; a later export adds only its new conversation."""
    first = two_chatgpt_conversations()
    upload(alice_client, as_json(first))
    run_pending_tasks()
    upload(alice_client, as_json(first))
    run_pending_tasks()
    later = [*first, chatgpt_conversation(ident="c-3", title="Later", start=T0 + 2 * 86400)]
    upload(alice_client, as_json(later))
    run_pending_tasks()

    assert Conversation.objects.filter(user=alice).count() == 3
    assert Message.objects.filter(conversation__user=alice).count() == 8
    second, third = ChatImport.objects.filter(user=alice).order_by("pk")[1:]
    assert (second.imported, second.already, second.status) == (0, 2, "done")
    assert (third.imported, third.already) == (1, 2)


def test_an_export_imported_back_by_staff_keeps_the_import_idempotent(alice_client, alice, staff):
    """The user's download carries each conversation's id in its ChatGPT export; after the
    account is emptied and the download imported back by staff, the same ChatGPT file adds
    nothing: no conversation twice."""
    export = two_chatgpt_conversations()
    upload(alice_client, as_json(export))
    run_pending_tasks()
    download = json.loads(data_export(user=alice).body)
    assert sorted(c["imported_from"]["id"] for c in download["conversations"]) == ["c-1", "c-2"]
    assert all(c["imported_from"]["source"] == "chatgpt" for c in download["conversations"])

    user_data_delete(user=alice, actor=staff)
    assert not ImportedConversation.objects.filter(user=alice).exists()
    user_data_import(document=download, actor=staff)
    assert set(
        ImportedConversation.objects.filter(user=alice).values_list("source", "source_id")
    ) == {("chatgpt", "c-1"), ("chatgpt", "c-2")}

    upload(alice_client, as_json([*export, chatgpt_conversation(ident="c-3", title="New")]))
    run_pending_tasks()
    again = ChatImport.objects.filter(user=alice).latest("pk")
    assert (again.imported, again.already, again.status) == (1, 2, "done")
    titles = sorted(Conversation.objects.filter(user=alice).values_list("title", flat=True))
    assert titles == ["New", "Trip to Lyon", "Work"]


def test_the_same_export_in_another_account_is_imported_there_too(alice_client, alice, bob):
    upload(alice_client, as_json([chatgpt_conversation()]))
    alice_client.force_login(bob)
    upload(alice_client, as_json([chatgpt_conversation()]))
    run_pending_tasks()
    assert Conversation.objects.filter(user=alice).count() == 1
    assert Conversation.objects.filter(user=bob).count() == 1


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b'[{"title": "cut off', "not valid JSON"),
        (as_json({"format": "memorychat-user-export"}), "not a ChatGPT or Claude export"),
        (as_zip([], name="chat.html"), "The zip holds no conversations.json"),
        (as_json([chatgpt_conversation(start=T0 * 1000)]), "is not a plausible date"),
        (as_json([{"uuid": "x", "name": "n", "chat_messages": "no"}]), "must be a date"),
    ],
)
def test_a_broken_file_is_refused_and_nothing_is_stored(alice_client, alice, data, words):
    response = upload(alice_client, data)
    assert response.status_code == 400
    assert words in response.content.decode()
    assert not ChatImport.objects.exists()
    assert not Conversation.objects.filter(user=alice).exists()


def test_a_wrong_shape_deep_in_the_file_names_the_conversation(alice_client, alice):
    bad = chatgpt_conversation(ident="c-9", title="Taxes")
    bad["mapping"]["c-9-n1"]["message"]["author"] = "assistant"
    response = upload(alice_client, as_json([*two_chatgpt_conversations(), bad]))
    assert "conversation 3 (“Taxes”), message &#x27;c-9-n1&#x27;: has no author" in (
        response.content.decode()
    )
    assert not Conversation.objects.filter(user=alice).exists()


@override_settings(MEMORYCHAT_CHAT_IMPORT_MAX_MB=1)
def test_a_file_over_the_size_limit_is_refused_saying_the_limit(alice_client, alice):
    response = upload(alice_client, b" " * 1_200_000)
    assert response.status_code == 400
    assert "The file is 1.2 MB; an import takes at most 1 MB" in response.content.decode()
    assert not ChatImport.objects.exists()


def test_a_stopped_import_goes_on_when_the_file_is_uploaded_again(alice, alice_client):
    """Stopped after its first chunk (a worker lost): the conversations stored are whole;
    uploading the file again stores the rest, none twice, and builds the memory of all."""
    conversations = [
        chatgpt_conversation(ident=f"c-{n}", title=f"Chat {n}", start=T0 + n)
        for n in range(chat_import.CHUNK + 5)
    ]
    data = as_json(conversations)
    started = chat_import.chat_import_start(user=alice, filename="c.json", file=io.BytesIO(data))
    first = list(islice(chat_import._unpack(bytes(started.payload)), chat_import.CHUNK))
    chat_import._store_chunk(started, first, 0)
    ChatImport.objects.filter(pk=started.pk).update(status="failed", error="The worker died.")
    assert Conversation.objects.filter(user=alice).count() == chat_import.CHUNK

    upload(alice_client, data)
    run_pending_tasks()
    again = ChatImport.objects.filter(user=alice).latest("pk")
    assert (again.imported, again.already, again.status) == (5, chat_import.CHUNK, "done")
    assert Conversation.objects.filter(user=alice).count() == chat_import.CHUNK + 5
    assert again.memory_total == chat_import.CHUNK + 5
    assert Summary.objects.filter(conversation__user=alice).count() == chat_import.CHUNK + 5


def test_a_second_upload_waits_for_the_first(alice_client, alice):
    upload(alice_client, as_json([chatgpt_conversation()]))
    response = upload(alice_client, as_json([claude_conversation()]))
    assert response.status_code == 400
    assert "An import is already under way" in response.content.decode()


class _UploadReadWhileAnotherStarts(io.BytesIO):
    """A file whose reading lets another upload of the user queue its import first, as two
    uploads sent at once do."""

    def __init__(self, data: bytes, user) -> None:
        super().__init__(data)
        self.user, self.other = user, None

    def read(self, *args):
        if self.other is None:
            self.other = ChatImport.objects.create(
                user=self.user, source="chatgpt", filename="other.json", payload=b"", total=1
            )
        return super().read(*args)


def test_of_two_uploads_read_at_once_the_second_is_refused(alice):
    file = _UploadReadWhileAnotherStarts(as_json([chatgpt_conversation()]), alice)
    with pytest.raises(BadFile, match="An import is already under way"):
        chat_import.chat_import_start(user=alice, filename="c.json", file=file)
    assert list(ChatImport.objects.filter(user=alice)) == [file.other]
    file.other.refresh_from_db()
    assert file.other.status == "queued"


def test_the_conversations_to_build_are_counted_not_loaded(alice):
    data = as_json(two_chatgpt_conversations())
    started = chat_import.chat_import_start(user=alice, filename="c.json", file=io.BytesIO(data))
    chat_import._store_chunk(started, list(chat_import._unpack(bytes(started.payload))), 0)
    with CaptureQueriesContext(connection) as queries:
        chat_import._after_storing(started.pk)
    reads = [q["sql"] for q in queries if 'FROM "chat_conversation"' in q["sql"]]
    assert reads and all("COUNT(" in sql for sql in reads)
    assert ChatImport.objects.get(pk=started.pk).memory_total == 2


def test_with_memory_off_nothing_is_learned(alice_client, alice):
    profile_set_memory_mode(user=alice, mode="off")
    upload(alice_client, as_json(two_chatgpt_conversations()))
    run_pending_tasks()
    item = ChatImport.objects.get(user=alice)
    assert (item.status, item.imported, item.memory_total) == ("done", 2, 0)
    assert not Summary.objects.filter(conversation__user=alice).exists()
    assert not Fact.objects.filter(user=alice).exists()


def test_the_page_polls_while_importing_and_stops_when_done(alice_client, alice):
    upload(alice_client, as_json(two_chatgpt_conversations()))
    item = ChatImport.objects.get(user=alice)
    progress = reverse("userdata:chat_import_progress", args=[item.pk])
    page = alice_client.get(URL).content.decode()
    assert f'hx-get="{progress}"' in page and "Waiting for the background worker" in page
    ChatImport.objects.filter(pk=item.pk).update(status="importing", processed=1)
    fragment = alice_client.get(progress).content.decode()
    assert "Importing: 1 of 2 conversations" in fragment and "every 2s" in fragment
    assert "<html" not in fragment
    ChatImport.objects.filter(pk=item.pk).update(status="queued", processed=0)
    run_pending_tasks()
    fragment = alice_client.get(progress).content.decode()
    assert "2 conversations imported (6 messages)" in fragment
    assert "hx-trigger" not in fragment


def test_another_users_import_is_not_visible(alice_client, alice, bob):
    upload(alice_client, as_json([chatgpt_conversation(title="Alice's secret trip")]))
    item = ChatImport.objects.get(user=alice)
    progress = reverse("userdata:chat_import_progress", args=[item.pk])
    bob_client = Client()
    bob_client.force_login(bob)
    assert bob_client.get(progress).status_code == 404
    page = bob_client.get(URL).content.decode()
    assert "export.json" not in page and "Your imports" not in page


def test_the_profile_links_to_the_import(alice_client):
    page = alice_client.get(reverse("profiles:profile")).content.decode()
    assert f'href="{URL}"' in page


def test_a_fact_from_the_export_is_recalled_in_a_new_conversation(alice_client, alice):
    """Issue 38's "done when": what the user told ChatGPT is in the memory of a new chat here.
    The real jobs run (import, then memory), the offline extractor learns the fact."""
    export = [
        chatgpt_conversation(
            ident="c-pet",
            title="Pets",
            turns=[
                ("user", "My tortoise is named Bartholomew and he is 43 years old."),
                ("assistant", "Bartholomew sounds like a wise tortoise."),
            ],
        )
    ]
    upload(alice_client, as_json(export))
    run_pending_tasks()
    done = ChatImport.objects.get(user=alice)
    assert done.status == ChatImport.Status.DONE, done.error
    assert (done.memory_done, done.memory_total) == (1, 1)

    later = conversation_create(user=alice)  # a web conversation, not imported
    assert not ImportedConversation.objects.filter(conversation=later).exists()
    built = context.build(conversation=later, user_text="What is my tortoise called?")
    recalled = [m["text"] for m in built.report["memories"]]
    assert any("Bartholomew" in text for text in recalled), recalled
    memory_block = next(m["content"] for m in built.messages if "<memory>" in m["content"])
    assert "Bartholomew" in memory_block.split("<memory>", 1)[1]


def test_an_import_that_fails_says_so_without_the_errors_own_words(alice, caplog):
    """The page shows the import's error: not the exception's text (a database's message may
    name its tables and constraints), which goes to the log."""
    from userdata.chat_import import chat_import_run

    broken = ChatImport.objects.create(user=alice, source="chatgpt", total=1, payload=b"bad")
    assert chat_import_run(import_id=broken.pk) == "failed"
    broken.refresh_from_db()
    assert broken.status == ChatImport.Status.FAILED
    assert "upload the same file again" in broken.error
    assert "decompress" not in broken.error and "error:" not in broken.error.lower()
    assert "decompress" in caplog.text
