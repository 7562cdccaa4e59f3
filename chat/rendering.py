"""Markdown to safe HTML. Model and user text are untrusted: raw HTML in them is escaped by
markdown-it (html disabled), and nh3 then keeps only an allow-list of tags and attributes."""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_markdown.enable(["table", "strikethrough"])

ALLOWED_TAGS = {
    "p",
    "br",
    "hr",
    "pre",
    "code",
    "em",
    "strong",
    "del",
    "s",
    "blockquote",
    "ul",
    "ol",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "a",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "img",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "code": {"class"},
    "img": {"src", "alt", "title"},
    "th": {"style"},
    "td": {"style"},
    "ol": {"start"},
}


def render_markdown(text: str) -> str:
    html = _markdown.render(text or "")
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
        filter_style_properties={"text-align"},
    )
