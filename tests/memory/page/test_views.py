"""The Memory page and its actions over HTTP: alice may, bob gets 404; CSRF is enforced."""

import pytest
from django.test import Client
from django.urls import reverse

from memory.models import ActionItem, Fact, MemoryEvent, MemoryState
from memory.services import action_item_remember
from profiles.services import profile_set_memory_mode

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def bob_client(bob):
    client = Client()
    client.force_login(bob)
    return client


@pytest.fixture
def ada(alice, tell):
    tell("My daughter's name is Ada.")
    return Fact.objects.get(user=alice)


def url(name, memory, kind="fact"):
    return reverse(f"memory:{name}", args=[kind, memory.pk])


def test_the_page_lists_the_users_memories_with_their_source(alice_client, ada):
    """Newest first, with a link to the source message, highlighted."""
    page = alice_client.get(reverse("memory:page")).content.decode()
    said = ada.source_messages.get()
    assert "daughter" in page and "Ada" in page
    link = f"/c/{said.conversation_id}/?highlight={said.pk}#m{said.pk}"
    assert link in page
    source = alice_client.get(link.split("#")[0]).content.decode()
    assert f'id="m{said.pk}"' in source and "is-source" in source


def test_the_header_links_the_memory_page(alice_client):
    """Next to the profile link."""
    page = alice_client.get(reverse("chat:home")).content.decode()
    assert f'href="{reverse("memory:page")}"' in page


def test_search_and_filters(alice_client, ada, alice, conversation):
    """Search by words (the index), filter by kind and category."""
    action_item_remember(user=alice, conversation=conversation, what="Book the dentist")
    page = alice_client.get(reverse("memory:page"), {"q": "dentist"}).content.decode()
    assert "Book the dentist" in page and "Ada" not in page
    page = alice_client.get(reverse("memory:page"), {"kind": "fact"}).content.decode()
    assert "Ada" in page and "Book the dentist" not in page
    page = alice_client.get(reverse("memory:page"), {"category": "project"}).content.decode()
    assert "Ada" not in page
    fragment = alice_client.get(
        reverse("memory:page"), {"q": "ada"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="memory-list"
    ).content.decode()
    assert fragment.lstrip().startswith('<div id="memory-list">') and "Ada" in fragment


def test_bob_sees_none_of_alices_memories(bob_client, ada):
    """Not on his page, and every action on her memory is a 404 for him."""
    assert "Ada" not in bob_client.get(reverse("memory:page")).content.decode()
    assert bob_client.get(url("edit", ada)).status_code == 404
    for name, data in [
        ("edit", {"text": "Bob was here"}),
        ("pin", {"pinned": "1"}),
        ("delete", {}),
        ("keep", {}),
        ("discard", {}),
    ]:
        assert bob_client.post(url(name, ada), data).status_code == 404, name
    event = MemoryEvent.objects.get()
    assert bob_client.post(reverse("memory:event_undo", args=[event.pk])).status_code == 404
    ada.refresh_from_db()
    assert ada.text != "Bob was here" and not ada.pinned
    assert MemoryEvent.objects.get().undone_at is None


def test_alice_edits_pins_and_deletes(alice_client, alice, ada):
    """Each a history record naming her; the staff history page shows her edit."""
    response = alice_client.post(url("edit", ada), {"text": "My daughter is Ada, aged 7"})
    assert response.status_code == 302
    ada.refresh_from_db()
    assert ada.text == "My daughter is Ada, aged 7" and ada.state == MemoryState.EDITED
    alice_client.post(url("pin", ada), {"pinned": "1"})
    assert Fact.objects.get(pk=ada.pk).pinned
    records = Fact.history.filter(id=ada.pk).order_by("history_id")
    assert [r.history_user for r in records][1:] == [alice, alice]
    row = alice_client.post(url("pin", ada), {"pinned": "0"}, HTTP_HX_REQUEST="true")
    assert row.content.decode().lstrip().startswith('<li class="memory-item kind-fact')
    pk = ada.pk
    assert alice_client.post(url("delete", ada)).status_code == 302
    assert not Fact.objects.filter(pk=pk).exists()


def test_the_staff_history_shows_the_users_edit(alice_client, staff, ada):
    """Who: alice; state: edited by the user, with a filter for it."""
    alice_client.post(url("edit", ada), {"text": "My daughter is Ada, aged 7"})
    staff_client = Client()
    staff_client.force_login(staff)
    history = staff_client.get(reverse("staff:memory_history", args=["fact", ada.pk]))
    assert "alice" in history.content.decode() and "edited by the user" in history.content.decode()
    listed = staff_client.get(reverse("staff:memories"), {"kind": "fact", "state": "edited"})
    assert "aged 7" in listed.content.decode() and "Edited by the user" in listed.content.decode()
    other = staff_client.get(reverse("staff:memories"), {"kind": "fact", "state": "suggested"})
    assert "aged 7" not in other.content.decode()


def test_an_empty_edit_is_refused_and_loses_nothing(alice_client, ada):
    """A clear error; the text stays."""
    response = alice_client.post(url("edit", ada), {"text": "   "})
    assert response.status_code == 400 and "cannot be empty" in response.content.decode()
    assert Fact.objects.get(pk=ada.pk).text == ada.text


def test_done_and_reopen(alice_client, alice, conversation):
    action_item_remember(user=alice, conversation=conversation, what="Book the dentist")
    item = ActionItem.objects.get()
    alice_client.post(url("done", item, "action_item"), {"done": "1"})
    assert ActionItem.objects.get().status == "done"
    alice_client.post(url("done", item, "action_item"), {"done": "0"})
    assert ActionItem.objects.get().status == "open"


def test_keep_and_discard_from_a_notice(alice_client, alice, tell):
    """Ask first: the notice's Keep answers with the notice as it now is."""
    profile_set_memory_mode(user=alice, mode="ask")
    tell("My daughter's name is Ada.")
    fact, event = Fact.objects.get(), MemoryEvent.objects.get()
    page = alice_client.get(reverse("memory:page")).content.decode()
    assert 'id="suggested"' in page and "Remember this?" not in page
    response = alice_client.post(url("keep", fact), {"event": event.pk}, HTTP_HX_REQUEST="true")
    assert response.content.decode().startswith(
        f'<aside class="memory-notice" data-event="{event.pk}"'
    )
    assert "(kept)" in response.content.decode()
    assert Fact.objects.get().state == MemoryState.KEPT


def test_undo_over_http_goes_back_to_the_conversation(alice_client, ada):
    event = MemoryEvent.objects.get()
    response = alice_client.post(reverse("memory:event_undo", args=[event.pk]))
    assert response.status_code == 302 and response.url.endswith(f"#m{event.message_id}")
    assert not Fact.objects.filter(pk=ada.pk).exists()


def test_forms_need_csrf(alice, ada):
    """A post without the token is refused."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    assert client.post(url("pin", ada), {"pinned": "1"}).status_code == 403


def test_the_chat_shows_the_notice_under_the_reply_after_a_reload(alice_client, tell):
    said, reply = tell("My daughter's name is Ada.")
    page = alice_client.get(reverse("chat:conversation", args=[said.conversation_id]))
    html = page.content.decode()
    assert f'class="memory-notices" data-for="{reply.pk}"' in html and "Remembered:" in html


def test_anonymous_visitors_are_sent_to_log_in(client):
    response = client.get(reverse("memory:page"))
    assert response.status_code == 302 and reverse("login") in response.url
