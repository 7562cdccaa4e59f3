"""manage.py import_seed_json: the seed's JSON stores, with progress, --dry-run, idempotent
reruns, and bad files reported and skipped."""

from __future__ import annotations

import shutil
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from chat.models import Conversation, Message
from memory.models import Fact, Summary
from profiles.models import UserProfile
from staff import seed_import

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).parent / "fixtures"
STORE = FIXTURES / "seed_store"
BROKEN = FIXTURES / "seed_broken"


def run(directory, *args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("import_seed_json", str(directory), *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _counts():
    return (
        get_user_model().objects.count(),
        Conversation.objects.count(),
        Message.objects.count(),
        Fact.objects.count(),
        Summary.objects.count(),
    )


def test_it_imports_every_format():
    """Users, conversations from histories, profile style and preferences, facts, summaries."""
    out, err = run(STORE)
    alice = get_user_model().objects.get(username="alice")
    assert not alice.has_usable_password()
    assert "Created user alice with an unusable password" in out
    assert "6 of 6 files imported" in out and err == ""
    titles = sorted(Conversation.objects.filter(user=alice).values_list("title", flat=True))
    assert titles == [
        "Imported conversations",
        "Imported history",
        "Imported interactions",
        "Imported session",
    ]
    history = Conversation.objects.get(title="Imported history").messages.order_by("id")
    assert [m.role for m in history] == ["user", "assistant", "user", "assistant"]
    session = Conversation.objects.get(title="Imported session").messages.all()
    assert [m.role for m in session] == ["user", "assistant"]  # the system prompt is left out
    assert session[0].created_at.isoformat() == "2025-03-04T10:15:00.123456+00:00"
    profile = UserProfile.objects.get(user=alice)
    assert (profile.formality, profile.technical_level, profile.emoji_use) == (0.8, 0.8, 1.0)
    assert profile.formality_count == 2
    assert (profile.language, profile.timezone) == ("en", "Europe/Paris")
    assert profile.topics_of_interest == ["Python", "data science"]
    facts = dict(Fact.objects.filter(user=alice).values_list("text", "status"))
    assert facts == {
        "Learning style: hands-on": "active",
        "Preferred language: Python": "superseded",
        "Preferred language: Rust": "active",
    }
    assert str(Fact.objects.get(text="Learning style: hands-on").created_at.date()) == "2025-03-02"
    summary = Summary.objects.get()
    assert summary.conversation.title == "Imported history" and summary.message_count == 4
    assert "1 failed summary skipped" in out


def test_a_second_run_creates_nothing_new():
    """Idempotent: the rerun reports nothing new and the counts do not move."""
    run(STORE)
    before = _counts()
    out, _err = run(STORE)
    assert _counts() == before
    assert out.count(": nothing new") == 6 and "created nothing new." in out
    assert "Created user" not in out


def test_new_messages_appended_to_a_file_are_added_on_rerun(tmp_path):
    """A history that grew since the last import gets only its new messages."""
    store = tmp_path / "store"
    shutil.copytree(STORE, store)
    run(store)
    path = store / "user_memory" / "alice.json"
    path.write_text(path.read_text().rstrip()[:-1] + ', {"role": "user", "content": "And SciPy?"}]')
    out, _err = run(store)
    assert "[2/6] user_memory/alice.json: 1 message" in out
    assert Conversation.objects.get(title="Imported history").messages.count() == 5


def test_dry_run_saves_nothing():
    """--dry-run reads and checks everything and reports what it would do."""
    out, _err = run(STORE, "--dry-run")
    assert _counts() == (0, 0, 0, 0, 0)
    assert "Would create user alice" in out and "Dry run: nothing was saved." in out
    assert "12 messages" in out


def test_bad_files_are_reported_and_skipped():
    """Broken JSON, wrong shapes, bad values and bad encodings are skipped with a reason; the
    good files import; the summaries of several users need --summaries-user."""
    out, err = run(BROKEN)
    assert "2 of 8 files imported, 6 skipped" in out
    for name, reason in [
        ("user_memory/truncated.json", "not valid JSON"),
        ("user_memory/wrongrole.json", "the history: entry 0 is not a {role, content} message"),
        ("sessions/carol.json", "a session must be an object"),
        ("sessions/erin.json", "not UTF-8 text"),
        ("user_profiles/dave.json", "communication_style.formality_level must be from 0 to 1"),
        ("summaries.json", "pass --summaries-user"),
    ]:
        line = next(line for line in out.splitlines() if f"] {name}: SKIPPED, " in line)
        assert reason in line
        assert f"Skipped {name}: " in err
    usernames = set(get_user_model().objects.values_list("username", flat=True))
    assert usernames == {"user_456"}  # no user is left behind by a skipped file
    assert Message.objects.count() == 2
    assert Fact.objects.get().text == "Deadline: end of March"  # knowledge_user_456_project_notes


def test_summaries_go_to_the_named_user():
    """--summaries-user says whose summaries.json it is."""
    out, _err = run(BROKEN, "--summaries-user", "user_456")
    assert "[8/8] summaries.json: 1 summary version" in out
    assert Summary.objects.get().conversation.user.username == "user_456"


def test_messages_go_through_the_chat_services(monkeypatch):
    """The first message of each conversation through message_create (with its marker), the
    rest through message_create_many."""
    calls = {"one": 0, "many": 0}
    real_one, real_many = seed_import.message_create, seed_import.message_create_many

    def one(**kwargs):
        calls["one"] += 1
        return real_one(**kwargs)

    def many(**kwargs):
        calls["many"] += 1
        return real_many(**kwargs)

    monkeypatch.setattr(seed_import, "message_create", one)
    monkeypatch.setattr(seed_import, "message_create_many", many)
    run(STORE)
    assert calls == {"one": 4, "many": 4}
    assert Message.objects.filter(client_id__startswith="seed:").count() == 4


def test_knowledge_file_names_with_underscores_find_their_user():
    """knowledge_user_456_project_notes.json belongs to user_456 (known from user_memory)."""
    files = seed_import.discover(BROKEN)
    knowledge = next(f for f in files if f.kind == "knowledge")
    assert (knowledge.username, knowledge.category) == ("user_456", "project_notes")


def test_a_missing_directory_is_an_error():
    """The command fails clearly when DIR is not a directory."""
    with pytest.raises(CommandError, match="is not a directory"):
        run(FIXTURES / "nope")


def test_a_user_message_of_invisible_characters_is_refused(tmp_path):
    """A user message with no visible character is empty here too, as in the chat and the
    staff import (issue 40, low 7): the file is skipped, saying which entry."""
    (tmp_path / "user_memory").mkdir()
    (tmp_path / "user_memory" / "zed.json").write_text(
        '[{"role": "user", "content": "hello"}, {"role": "user", "content": "\\u200b\\u2063"}]'
    )
    out, _err = run(tmp_path)
    assert "entry 1 is a user message with no visible character" in out
    assert Message.objects.count() == 0
