"""Staff review shows what the user saw: replies rendered as in the chat, the summary versions
as a table, the memory mode and suggestions apart from the memories in use."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.urls import reverse

from chat.rendering import render_stored
from chat.services import message_create
from memory.models import Fact, MemoryState
from profiles.services import profile_set_memory_mode

pytestmark = pytest.mark.django_db
CODE = (
    "Here:\n\n```python\ndef f():\n    if x:\n        return 1\n```\n\n"
    "**done** <script>alert(1)</script>"
)


def test_a_reply_is_rendered_as_in_the_chat(staff_client, world, alice):
    conversation = world["conversation"]
    question = message_create(conversation=conversation, role="user", content="<b>hi</b>\n  two")
    message_create(conversation=conversation, role="assistant", content=CODE, reply_to=question)
    html = staff_client.get(reverse("staff:conversation", args=[conversation.pk])).content.decode()
    chat = alice_view(alice, conversation)
    # The same HTML for the reply in both pages: Markdown, highlighting, kept indentation.
    reply = render_stored(CODE, conversation.pk)
    assert f'<div class="content markdown">{reply}</div>' in chat
    assert f'<div class="content markdown">{reply}</div>' in html
    assert "<strong>done</strong>" in html and "<script>alert" not in html
    assert "        " in reply and 'class="k"' in reply  # indentation and a highlighted keyword
    # The user's words as typed, escaped.
    assert '<div class="content typed">&lt;b&gt;hi&lt;/b&gt;\n  two</div>' in html


def alice_view(alice, conversation) -> str:
    from django.test import Client

    client = Client()
    client.force_login(alice)
    return client.get(conversation.get_absolute_url()).content.decode()


def test_the_summary_versions_are_a_table_with_header_cells(staff_client, world):
    html = staff_client.get(
        reverse("staff:conversation", args=[world["conversation"].pk])
    ).content.decode()
    table = re.search(r'<table class="grid summary-versions">.*?</table>', html, re.S).group(0)
    assert '<th scope="col">Action</th>' in table and '<th scope="col"></th>' not in table
    assert table.count('<th scope="row">') == 2
    css = (Path(__file__).resolve().parents[2] / "static/css/app.css").read_text()
    # The chat's version switcher is styled inside a message only.
    assert css.count(".versions") == css.count(".message .versions") > 0


def test_ask_first_is_shown_and_suggestions_counted_apart(staff_client, world, alice):
    profile_set_memory_mode(user=alice, mode="ask")
    for n in range(3):
        Fact.objects.create(user=alice, text=f"maybe {n}", state=MemoryState.SUGGESTED)
    page = staff_client.get(reverse("staff:user", args=[alice.pk])).content.decode()
    assert "memory: ask first" in page and "Ask first: new memories wait" in page
    fact_row = re.search(r"<tr><th scope=\"row\"><a [^>]*kind=fact.*?</tr>", page, re.S).group(0)
    assert '<td class="num">1</td>' in fact_row  # the one fact in use
    assert 'state=suggested">3</a>' in fact_row
    listing = staff_client.get(reverse("staff:users")).content.decode()
    row = re.search(rf"<tr>\s*<td><a href=\"/staff/users/{alice.pk}/\">.*?</tr>", listing, re.S)
    assert "memory: ask first" in row.group(0) and "+3 suggested" in row.group(0)
    # Alice has 3 memories in use (a fact, a decision, an action item).
    assert ">3</a>" in row.group(0)
