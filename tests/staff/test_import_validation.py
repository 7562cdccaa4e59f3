"""Every value of an import is checked before it is stored: a bad one is refused with a
message naming the field, and nothing of the file is kept."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.contrib.auth import get_user_model
from django.core.serializers.json import DjangoJSONEncoder
from django.urls import reverse

from chat.models import Conversation, Message
from chat.services import conversation_create, message_create
from memory.models import Fact
from profiles.models import UserProfile
from profiles.services import profile_update_preferences
from staff.services.user_data import user_data_delete
from userdata.transfer.export import user_data_export
from userdata.transfer.importer import BadExport, user_data_import

pytestmark = pytest.mark.django_db


@pytest.fixture
def document(world, alice, staff):
    """Alice's export (with a profile and a streaming reply), her data then deleted."""
    profile_update_preferences(user=alice, preferences={"language": "de", "tone": "formal"})
    conversation = conversation_create(user=alice, title="Streaming")
    question = message_create(conversation=conversation, role="user", content="Still there?")
    message_create(
        conversation=conversation, role="assistant", content="Half a", status="streaming",
        reply_to=question,
    )  # fmt: skip
    exported = json.loads(json.dumps(user_data_export(user=alice), cls=DjangoJSONEncoder))
    user_data_delete(user=alice, actor=staff)
    return exported


def _first_message(document, role="user"):
    for conversation in document["conversations"]:
        for message in conversation["messages"]:
            if message["fields"]["role"] == role:
                return message["fields"]
    raise AssertionError(role)


def _nothing_imported(alice):
    assert not Conversation.objects.filter(user=alice).exists()
    assert not Fact.objects.filter(user=alice).exists()
    assert not UserProfile.objects.filter(user=alice).exists()


BAD_VALUES = [
    ("facts", "importance", "NaN", "facts[0].fields.importance: must be a number"),
    ("facts", "importance", True, "facts[0].fields.importance: must be a number"),
    ("facts", "mentions", 2**31, "facts[0].fields.mentions: 2147483648 is outside"),
    ("facts", "mentions", -1, "facts[0].fields.mentions: -1 is outside"),
    ("facts", "mentions", 1.5, "facts[0].fields.mentions: must be a whole number"),
    ("facts", "status", "frozen", "facts[0].fields.status: 'frozen' is not one of"),
    ("facts", "created_at", "2024-02-30T10:00:00Z", "facts[0].fields.created_at: not a date"),
    ("facts", "created_at", "3024-01-01T10:00:00Z", "facts[0].fields.created_at: '3024"),
    ("facts", "created_at", "0001-01-01T00:00:00+14:00", "out of range"),
    ("facts", "subject", "x" * 201, "facts[0].fields.subject: longer than 200"),
    ("facts", "text", 42, "facts[0].fields.text: must be text"),
    ("facts", "owner_id", 1, "facts[0].fields.owner_id: not a field of Fact"),
]


@pytest.mark.parametrize(("section", "field", "value", "message"), BAD_VALUES)
def test_a_bad_memory_value_is_refused_by_name(
    document, alice, staff, section, field, value, message
):
    """Types, database ranges, choices, real dates in the past, column lengths, known fields."""
    document[section][0]["fields"][field] = value
    with pytest.raises(BadExport) as refused:
        user_data_import(document=document, actor=staff)
    assert message in str(refused.value.message)
    _nothing_imported(alice)


def test_an_importance_out_of_range_is_clamped(document, alice, staff):
    """A finite importance beyond 0..1 is clamped, like the model's own output."""
    document["facts"][0]["fields"]["importance"] = 7
    user_data_import(document=document, actor=staff)
    assert Fact.objects.get(user=alice).importance == 1.0


MESSAGE_RULES = [
    ("role", "system", "role: must be 'user' or 'assistant'"),
    ("token_count", 10**12, "token_count: 1000000000000 is outside"),
    ("prompt_tokens", "12", "prompt_tokens: must be a whole number"),
    ("duration", -3.0, "duration: must not be negative"),
    ("client_id", "has spaces", "client_id: at most 64 letters"),
    ("content", "x" * 16_001, "content: longer than the limit of 16,000"),
]


@pytest.mark.parametrize(("field", "value", "message"), MESSAGE_RULES)
def test_a_bad_message_value_is_refused_by_name(document, alice, staff, field, value, message):
    """Roles are user or assistant; counts fit the column; user messages fit the limit."""
    _first_message(document)[field] = value
    with pytest.raises(BadExport, match=re.escape("conversations[0].messages[0].fields")):
        try:
            user_data_import(document=document, actor=staff)
        except BadExport as error:
            assert message in error.message
            raise
    _nothing_imported(alice)


def test_a_streaming_reply_is_imported_interrupted_without_a_lease(document, alice, staff):
    """No imported reply is being written: the conversation cannot be left busy."""
    reply = next(
        m["fields"]
        for c in document["conversations"]
        for m in c["messages"]
        if m["fields"]["status"] == "streaming"
    )
    reply["lease_expires_at"] = "2026-01-01T00:00:00Z"
    user_data_import(document=document, actor=staff)
    stored = Message.objects.get(conversation__user=alice, content="Half a")
    assert (stored.status, stored.lease_expires_at) == ("interrupted", None)
    assert not Message.objects.filter(status="streaming").exists()


def test_a_budget_outside_the_settings_range_is_refused(document, alice, staff):
    """A context budget must be one the settings form would accept."""
    document["conversations"][0]["fields"]["context_budget"] = 3
    with pytest.raises(BadExport, match=re.escape("context_budget: 3 is outside 512..2000000")):
        user_data_import(document=document, actor=staff)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("language", "en. Obey me", "language: Unknown language code"),
        ("timezone", "Mars/Olympus", "timezone: Unknown time zone"),
        ("tone", "rude", "tone: 'rude' is not one of"),
        ("topics_of_interest", [{"x": 1}], "topics_of_interest[0]: must be str"),
        ("custom_instructions", "x" * 1501, "custom_instructions:"),
        ("formality", float("nan"), "formality: must be a finite number"),
    ],
)
def test_preferences_are_checked_like_the_form(document, alice, staff, field, value, message):
    """A profile comes in only with the values the preferences form allows."""
    document["profile"]["fields"][field] = value
    with pytest.raises(BadExport) as refused:
        user_data_import(document=document, actor=staff)
    assert f"profile.fields.{field}" in refused.value.message and message in refused.value.message
    _nothing_imported(alice)


def test_history_authors_are_the_user_or_nobody(document, alice, bob, staff):
    """A file cannot name another account as the author of a change, nor is the staff member
    who imports it named: a record by the user stays theirs, any other is the import's."""
    records = document["profile"]["history"]
    assert len(records) >= 2
    for record in records:
        record["history_user"] = "bob"
        record["history_change_reason"] = None
    records[0]["history_user"] = document["user"]["username"]
    user_data_import(document=document, actor=staff)
    profile = UserProfile.objects.get(user=alice)
    history = list(profile.history.order_by("history_date", "history_id"))
    assert [r.history_user for r in history] == [alice] + [None] * (len(history) - 1)
    assert {r.history_change_reason for r in history[1:]} == {"imported from an export"}


@pytest.mark.parametrize(
    ("username", "message"),
    [
        ("bad name!", "Enter a valid username"),
        ("x" * 151, "150"),
        ("ALICE", "in other letter case"),
    ],
)
def test_usernames_follow_the_sign_up_rules(document, alice, staff, username, message):
    """The username (from the file or the form) is one sign-up would accept."""
    document["user"]["username"] = username
    with pytest.raises(BadExport, match=re.escape("user.username")) as refused:
        user_data_import(document=document, actor=staff)
    assert message in refused.value.message
    assert not get_user_model().objects.filter(username=username).exists()


def test_a_history_record_of_unknown_type_is_refused(document, alice, staff):
    document["profile"]["history"][0]["history_type"] = "?"
    with pytest.raises(BadExport, match=re.escape("profile.history[0].history_type")):
        user_data_import(document=document, actor=staff)


def test_an_unknown_section_is_refused(document, alice, staff):
    document["secrets"] = []
    with pytest.raises(BadExport, match="secrets: not part of an export"):
        user_data_import(document=document, actor=staff)


def test_nothing_outside_the_rules_changes_a_clean_import(document, alice, staff):
    """The export itself imports."""
    result = user_data_import(document=document, actor=staff)
    assert result.counts["conversations"] == 2


def _upload(body: bytes):
    upload = io.BytesIO(body)
    upload.name = "export.json"
    return upload


def test_a_deeply_nested_file_is_a_clear_error(staff_client):
    """Nesting beyond the bound (or the parser's recursion) is a form error, not a 500."""
    for depth in (40, 100_000):
        body = b"[" * depth + b"]" * depth
        response = staff_client.post(reverse("staff:import"), {"file": _upload(body)})
        assert response.status_code == 200
        assert "nested too deeply" in response.content.decode()


def test_nan_and_lone_surrogates_in_the_file_are_refused(staff_client):
    """NaN, 1e999 and a lone surrogate cannot reach the database."""
    for body in (b'{"a": NaN}', b'{"a": 1e999}', b'{"a": "\\ud800"}'):
        response = staff_client.post(reverse("staff:import"), {"file": _upload(body)})
        assert response.status_code == 200
        assert "Not a JSON file we can import" in response.content.decode()


@pytest.mark.parametrize(
    ("report", "message"),
    [
        ({"blocks": "system"}, "context_report.blocks: must be a list"),
        ({"memories": [{"id": "7"}]}, "context_report.memories[0].id: must be int"),
        ({"summary": {"text": 5}}, "context_report.summary.text: must be str"),
        ([1, 2], "context_report: must be an object"),
    ],
)
def test_a_what_the_model_saw_record_of_the_wrong_shape_is_refused(
    document, alice, staff, report, message
):
    """A reply's context report comes in only in the report's shape (memory.report's
    TypedDicts), so no page that reads it can fail on it (issue 40, low 4)."""
    _first_message(document, role="assistant")["context_report"] = report
    with pytest.raises(BadExport) as refused:
        user_data_import(document=document, actor=staff)
    assert message in refused.value.message
    _nothing_imported(alice)


@pytest.mark.parametrize(
    ("section", "row", "message"),
    [
        (
            "domains",
            {"domain": "cooking", "score": 1.5},
            "profile.domains[0].score: 1.5 is outside 0..1",
        ),
        ("domains", {"domain": "cooking", "score": -0.1}, "domains[0].score: must not be negative"),
        (
            "domains",
            {"domain": "astrology"},
            "profile.domains[0].domain: 'astrology' is not one of",
        ),
        ("domains", {"domain": "cooking", "level": "guru"}, "profile.domains[0].level: 'guru'"),
        (
            "domains",
            {"domain": "cooking", "evidence": -3},
            "profile.domains[0].evidence: -3 is outside",
        ),
        ("domains", {"score": 0.5}, "profile.domains[0].domain: a subject is needed"),
        (
            "domain_snapshots",
            {"domain": "cooking", "evidence": 3, "score": 2},
            "domain_snapshots[0].score: 2.0 is outside",
        ),
        (
            "domain_snapshots",
            {"domain": "cooking", "score": 0.4},
            "domain_snapshots[0].evidence: needed",
        ),
    ],
)
def test_levels_by_subject_out_of_range_are_refused(document, alice, staff, section, row, message):
    """A subject's level comes in only with known subjects, levels, and a score in 0..1."""
    document["profile"][section] = [row]
    with pytest.raises(BadExport) as refused:
        user_data_import(document=document, actor=staff)
    assert message in refused.value.message
    _nothing_imported(alice)


def test_a_client_id_with_a_trailing_newline_is_refused(document, alice, staff):
    """The whole client_id must match its pattern ("$" would let a final newline through)."""
    _first_message(document)["client_id"] = "abc\n"
    with pytest.raises(BadExport, match="client_id: at most 64 letters"):
        user_data_import(document=document, actor=staff)
    _nothing_imported(alice)


def test_a_user_message_of_invisible_characters_is_refused(document, alice, staff):
    """An imported user message must have a visible character (issue 40, low 7)."""
    _first_message(document)["content"] = "\u200b\u200c\u2063"
    with pytest.raises(BadExport, match="content: empty"):
        user_data_import(document=document, actor=staff)
    _nothing_imported(alice)


def test_a_subject_twice_is_refused(document, alice, staff):
    document["profile"]["domains"] = [{"domain": "law"}, {"domain": "law"}]
    with pytest.raises(BadExport) as refused:
        user_data_import(document=document, actor=staff)
    assert "profile.domains[1].domain: 'law' appears twice" in refused.value.message
