"""Forgetting everything (userdata.services.forget_everything)."""

from __future__ import annotations

import pytest

from memory.models import ActionItem, Decision, Fact, Summary
from memory.search import search
from profiles.models import UserProfile
from userdata.services import forget_everything

pytestmark = pytest.mark.django_db


def test_it_forgets_every_memory_and_summary_and_keeps_typed_preferences(alice, bob, data):
    """Memories and summaries go; the learned style is reset; typed preferences stay."""
    result = forget_everything(user=alice, reset_style=True, clear_preferences=False)
    assert result.deleted == {"facts": 2, "decisions": 1, "action_items": 1}
    assert result.summaries == 2
    for model in (Fact, Decision, ActionItem):
        assert not model.objects.filter(user=alice).exists()
    assert not Summary.objects.filter(conversation__user=alice).exclude(text="").exists()
    for query in ("Zenobia", "Grenoble", "night train", "quokka hotel", "Lyon trip"):
        assert search(user=alice, query=query) == []
    profile = UserProfile.objects.get(user=alice)
    assert profile.messages_observed == 0 and profile.detail_level == "brief"
    assert Fact.objects.filter(user=bob).count() == 1
    record = Fact.history.filter(id=data["city"].pk).latest("history_date")
    assert record.history_type == "-" and record.history_user == alice
    assert record.history_change_reason == "everything forgotten by the user"


def test_the_boxes_decide_about_style_and_preferences(alice, data):
    """Unticked style: kept; ticked preferences: cleared."""
    observed = UserProfile.objects.get(user=alice).messages_observed
    forget_everything(user=alice, reset_style=False, clear_preferences=True)
    profile = UserProfile.objects.get(user=alice)
    assert profile.messages_observed == observed and profile.detail_level == ""
