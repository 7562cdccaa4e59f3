"""Reply versions are bounded: the newest REPLY_VERSIONS_KEPT, numbered 1..N, and none for a
reply stopped before any text (issue 40, low 9)."""

import pytest

from chat.models import ReplyVersion
from chat.selectors import reply_version_shown
from chat.services import message_create, reply_finish, turn_regenerate

pytestmark = pytest.mark.django_db


@pytest.fixture
def asked(conversation):
    question = message_create(conversation=conversation, role="user", content="Again?")
    reply = message_create(
        conversation=conversation, role="assistant", content="", status="streaming",
        reply_to=question,
    )  # fmt: skip
    reply_finish(reply=reply, content="answer 0", status="complete")
    return question, reply


def _again(conversation, question, content, status="complete"):
    start = turn_regenerate(conversation=conversation, user_message_id=question.pk)
    # Every turn has its report (the context is built before the model's first word).
    report = {"total_tokens": 5, "blocks": []}
    reply_finish(reply=start.reply, content=content, status=status, context_report=report)
    return start.reply


def test_only_the_newest_versions_are_kept_and_numbered_from_one(conversation, asked, settings):
    settings.MEMORYCHAT_REPLY_VERSIONS_KEPT = 3
    question, reply = asked
    for n in range(1, 20):
        _again(conversation, question, f"answer {n}")
    versions = list(ReplyVersion.objects.filter(reply=reply).values_list("number", "content"))
    assert versions == [(1, "answer 16"), (2, "answer 17"), (3, "answer 18")]
    reply.refresh_from_db()
    assert reply.content == "answer 19"
    shown = reply_version_shown(conversation=conversation, reply_id=reply.pk, number=1)
    assert shown.content == "answer 16" and shown.version_count == 3
    assert reply_version_shown(conversation=conversation, reply_id=reply.pk, number=4) == reply


def test_a_reply_stopped_before_any_text_leaves_no_version(conversation, asked):
    question, reply = asked
    _again(conversation, question, "", status="interrupted")  # stopped before its first word
    _again(conversation, question, "answer 2")
    contents = list(ReplyVersion.objects.filter(reply=reply).values_list("content", flat=True))
    assert contents == ["answer 0"]
