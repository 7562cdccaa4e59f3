"""The current system prompt is cached: no query per turn, and a change is seen at once."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import context
from memory.models import SystemPrompt
from memory.selectors import system_prompt_current

pytestmark = pytest.mark.django_db


def prompt_queries(queries) -> int:
    return sum("memory_systemprompt" in q["sql"] for q in queries.captured_queries)


def test_the_prompt_is_read_once_then_cached(conversation):
    """The first build reads the prompt; the next ones do not."""
    SystemPrompt.objects.create(version=3, text="Be brief.")
    with CaptureQueriesContext(connection) as first:
        context.build(conversation=conversation, user_text="hello")
    with CaptureQueriesContext(connection) as second:
        built = context.build(conversation=conversation, user_text="hello again")
    assert prompt_queries(first) == 1
    assert prompt_queries(second) == 0
    assert built.messages[0]["content"] == "Be brief."
    assert built.report["system_prompt_version"] == 3


def test_a_new_version_is_used_on_the_next_turn(conversation):
    """Saving a new version clears the cache: the next build sends it."""
    SystemPrompt.objects.create(version=3, text="Be brief.")
    context.build(conversation=conversation, user_text="hello")
    SystemPrompt.objects.create(version=4, text="Be thorough.")
    built = context.build(conversation=conversation, user_text="hello")
    assert built.messages[0]["content"] == "Be thorough."
    assert built.report["system_prompt_version"] == 4


def test_an_edited_or_deleted_version_is_seen(conversation):
    """Editing the current text, then deleting that version, are both seen at once."""
    prompt = SystemPrompt.objects.create(version=3, text="Be brief.")
    SystemPrompt.objects.create(version=2, text="Older.")
    assert system_prompt_current().text == "Be brief."
    prompt.text = "Be very brief."
    prompt.save()
    assert system_prompt_current().text == "Be very brief."
    prompt.delete()
    current = system_prompt_current()
    assert (current.version, current.text) == (2, "Older.")
