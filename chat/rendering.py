"""Markdown to safe HTML. Model and user text are untrusted: raw HTML in them is escaped by
markdown-it (html disabled), and nh3 then keeps only an allow-list of tags and attributes.

Images are shown as links, never loaded: a reply's image from another host is blocked by the
Content-Security-Policy anyway (it would show broken), and loading one would tell that host
who read the reply and when."""

from __future__ import annotations

import nh3
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml

_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_markdown.enable(["table", "strikethrough"])


def _image_as_link(self, tokens, idx, options, env) -> str:
    token = tokens[idx]
    src = token.attrGet("src") or ""
    text = self.renderInlineAsText(token.children or [], options, env) or src
    return f'<a href="{escapeHtml(src)}">{escapeHtml(text)}</a>'


_markdown.add_render_rule("image", _image_as_link)

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
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "code": {"class"},
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
