"""The diff between two summary versions: word by word, escaped."""

from __future__ import annotations

import pytest
from django.urls import reverse

from memory.extraction import Extraction
from memory.services import summary_create
from staff.diff import list_diff, text_diff

pytestmark = pytest.mark.django_db


def test_text_diff_marks_inserted_and_deleted_words():
    """Equal runs are kept; changed words are deleted then inserted."""
    diff = text_diff("The team met on Monday.", "The whole team met on Tuesday.")
    ops = [(s.op, s.text) for s in diff.segments]
    assert ("insert", " whole") in ops and ("delete", "Monday.") in ops
    assert ("insert", "Tuesday.") in ops
    assert (diff.inserted, diff.deleted) == (2, 1)
    assert text_diff("same", "same").unchanged


def test_list_diff_shows_added_and_removed_items():
    """Topics added, kept and removed."""
    segments = list_diff(["a", "b"], ["b", "c"])
    assert [(s.op, s.text) for s in segments] == [("delete", "a"), ("equal", "b"), ("insert", "c")]


def test_the_page_diffs_any_two_versions(staff_client, world):
    """The form picks the versions; HTMX gets only the diff fragment."""
    conversation = world["conversation"]
    url = reverse("staff:summary_diff", args=[conversation.pk])
    html = staff_client.get(url, {"a": 2, "b": 1}, HTTP_HX_REQUEST="true").content.decode()
    assert html.lstrip().startswith('<div id="summary-diff"')
    assert "From v2 to v1" in html and "<ins>discussed</ins>" in html


def test_summary_text_is_escaped_in_the_diff(staff_client, world):
    """Markup in a summary is shown as text, never run."""
    conversation = world["conversation"]
    summary_create(
        conversation=conversation,
        extraction=Extraction(summary="The user wrote <script>alert(1)</script> here."),
        covered_through=0,
        message_count=2,
        source="auto",
    )
    html = staff_client.get(reverse("staff:conversation", args=[conversation.pk])).content.decode()
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_missing_versions_are_reported(staff_client, world):
    """A version that does not exist gives a message, not an error."""
    url = reverse("staff:summary_diff", args=[world["conversation"].pk])
    html = staff_client.get(url, {"a": 1, "b": 9}).content.decode()
    assert "Choose two existing versions." in html


def test_a_rewritten_sentence_is_not_interleaved_word_by_word():
    """Words the two versions share by chance ("the") do not split a rewrite into pieces."""
    diff = text_diff("The cat sat on the mat.", "A dog slept in the garden.")
    assert [(s.op, s.text) for s in diff.segments] == [
        ("delete", "The cat sat on the mat."),
        ("insert", "A dog slept in the garden."),
    ]
