"""Item 7 of issue 42: a reply that echoes the system prompt is not conversation for the offline
extractor, and memory notices pushed to a tab render without CSRF fields (no request) or with
the request's valid token (the page)."""

import datetime
import re
import warnings

import pytest
from django.template.loader import render_to_string
from django.test import RequestFactory

from chat import protocol
from memory.extraction import extract
from memory.prompts import DEFAULT_SYSTEM_PROMPT, echoes_prompt

TODAY = datetime.date(2026, 3, 10)


def test_a_reply_echoing_the_system_prompt_is_not_read():
    """The decision's context was "You are memorychat," (issue 42): the echo is skipped, the
    user's own decision is still found."""
    messages = [
        {"role": "user", "content": "We decided to use PostgreSQL for the launch."},
        {"role": "assistant", "content": DEFAULT_SYSTEM_PROMPT + " We decided to use Redis."},
    ]
    result = extract(messages, today=TODAY)
    assert [d.what for d in result.decisions] == ["Use PostgreSQL for the launch"]
    assert all("memorychat" not in d.context for d in result.decisions)
    assert "memorychat" not in result.summary and "Redis" not in result.summary


def test_a_users_sentence_echoing_the_prompt_is_dropped_not_the_message():
    messages = [
        {
            "role": "user",
            "content": "You are memorychat, a helpful assistant with long-term memory. "
            "My name is Sam.",
        }
    ]
    result = extract(messages, today=TODAY)
    assert [f.text for f in result.facts] == ["The user's name is Sam."]
    assert "helpful assistant" not in result.summary


def test_a_staff_edited_prompt_is_recognised_too():
    custom = "You are Quill, the writing coach of the Lisbon office, answering briefly."
    messages = [{"role": "assistant", "content": custom + " We decided to ship on Friday."}]
    assert extract(messages, today=TODAY, prompts=(custom,)).decisions == []
    assert echoes_prompt(custom, (custom,)) and not echoes_prompt("We ship on Friday", (custom,))


def suggested_notice():
    from chat.models import Conversation
    from memory.models import MemoryEvent
    from memory.selectors import Notice, NoticeItem

    event = MemoryEvent(pk=5, message_id=12, conversation=Conversation(pk=3, title="Trip"))
    item = NoticeItem("fact", 9, "suggested", "Her daughter is Ada", exists=True, suggested=True)
    return Notice(event=event, items=[item])


def test_a_pushed_notice_has_no_csrf_field_and_no_warning():
    """Rendered for the socket, without a request: no empty token field (Keep and Discard get
    the page's token from htmx's hx-headers); a suggestion offers no Undo."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Django warns about {% csrf_token %} with no token
        html = protocol.memory_event(suggested_notice())["html"]
    assert "csrfmiddlewaretoken" not in html
    assert html.count("hx-post=") == 2 and "data-memory-undo" not in html


@pytest.mark.django_db
def test_a_notice_in_the_page_carries_the_requests_token(alice):
    request = RequestFactory().get("/")
    request.user = alice
    html = render_to_string("memory/_notice.html", {"notice": suggested_notice()}, request=request)
    tokens = re.findall(r'name="csrfmiddlewaretoken" value="([^"]*)"', html)
    assert len(tokens) == 2 and all(len(token) == 64 for token in tokens)
