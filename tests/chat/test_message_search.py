"""Search in messages: every conversation of the user (archived ones marked), word forms,
snippets escaped with the matched words marked; nobody else's messages."""

import pytest
from django.urls import reverse

from chat.search import message_search, snippet
from chat.services import conversation_create, message_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def chats(alice, bob):
    food = conversation_create(user=alice, title="Food")
    message_create(conversation=food, role="user", content="I am allergic to peanuts <b>x</b>")
    old = conversation_create(user=alice, title="Old trip")
    message_create(conversation=old, role="assistant", content="Bring a peanut butter sandwich.")
    old.archived = True
    old.save()
    secret = conversation_create(user=bob, title="Bob's")
    message_create(conversation=secret, role="user", content="peanut secrets of bob")
    temporary = conversation_create(user=alice, title="Temp", temporary=True)
    message_create(conversation=temporary, role="user", content="peanut in a temporary chat")
    return {"food": food, "old": old}


@pytest.mark.parametrize("query", ["peanut", "peanuts", "PEANUT", "pean"])
def test_word_forms_find_both_messages(alice, chats, query):
    hits = message_search(user=alice, query=query)
    assert [h.title for h in hits] == ["Old trip", "Food"]  # newest first
    assert [h.archived for h in hits] == [True, False]


def test_every_word_must_be_there(alice, chats):
    assert [h.title for h in message_search(user=alice, query="peanut butter")] == ["Old trip"]
    assert message_search(user=alice, query="peanut caviar") == []


def test_the_snippet_is_escaped_with_the_words_marked(alice, chats):
    hit = message_search(user=alice, query="allergic peanut")[0]
    assert str(hit.snippet) == (
        "I am <mark>allergic</mark> to <mark>peanuts</mark> &lt;b&gt;x&lt;/b&gt;"
    )


def test_a_long_text_is_cut_around_the_match():
    text = "word " * 100 + "needle <script> " + "tail " * 100
    shown = str(snippet(text, "needle"))
    assert shown.startswith("…") and shown.endswith("…")
    assert "<mark>needle</mark> &lt;script&gt;" in shown and len(shown) < 260


def test_stopwords_only_match_as_a_substring(alice, chats):
    assert [h.title for h in message_search(user=alice, query="to")] == ["Food"]


def test_nobody_finds_anothers_messages(bob, alice, chats, client):
    assert [h.title for h in message_search(user=bob, query="peanut")] == ["Bob's"]
    client.force_login(bob)
    page = client.get(reverse("chat:search"), {"q": "allergic"}).content.decode()
    assert "Nothing matches" in page and "Food" not in page


def test_the_search_page_and_the_palette_fragment(alice_client, chats):
    page = alice_client.get(reverse("chat:search"), {"q": "peanuts"}).content.decode()
    assert "<h1>Search your conversations</h1>" in page
    assert '<span class="badge archived">archived</span>' in page
    food = chats["food"]
    assert f'href="/c/{food.pk}/?found=' in page
    fragment = alice_client.get(
        reverse("chat:search"), {"q": "trip"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "<html" not in fragment and "Old trip" in fragment and "Conversations" in fragment


def test_the_sidebar_lists_message_hits(alice_client, chats):
    page = alice_client.get(reverse("chat:home"), {"q": "sandwich"}).content.decode()
    assert "In messages" in page and "<mark>sandwich</mark>" in page
    assert "No conversation title matches" in page


def test_a_found_message_is_shown_without_the_memory_note(alice_client, chats):
    food = chats["food"]
    hit = message_search(user=food.user, query="allergic")[0]
    page = alice_client.get(hit.url.split("#")[0]).content.decode()
    assert f'id="m{hit.message_id}"' in page and "is-source" in page
    assert "What the assistant remembered came from this message" not in page


def test_a_snippet_reads_as_text_not_markdown():
    text = "## A week\n\nHere **is** a `plan`\n1. **Book** x *first*\n- item\n> quote\n"
    text += "```python\npi = 3.14 * 2\n```"
    shown = str(snippet(text, "plan"))
    assert shown == "A week Here is a <mark>plan</mark> Book x first item quote pi = 3.14 * 2"
