"""Templates render as pages, not as their own source."""

import re
from pathlib import Path

import pytest
from django.urls import reverse

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def test_no_template_comment_spans_lines():
    """Django's {# #} ends at the line's end: a two-line one is printed on the page."""
    opened = [
        f"{path.relative_to(TEMPLATES)}:{number}"
        for path in TEMPLATES.rglob("*.html")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\{#(?!.*#\})", line)
    ]
    assert opened == []


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["chat:home", "profiles:profile", "memory:page", "login"])
def test_a_page_starts_with_its_document_and_shows_no_template_source(client, alice, name):
    client.force_login(alice)
    html = client.get(reverse(name), follow=True).content.decode()
    assert re.match(r"<!doctype html>\s*<html[ >]", html)
    assert "{#" not in html and "{%" not in html
