"""Markdown to safe HTML. Model and user text are untrusted: raw HTML in them is escaped by
markdown-it (html disabled), and nh3 then keeps only an allow-list of tags and attributes.

Images are shown as links, never loaded: a reply's image from another host is blocked by the
Content-Security-Policy anyway (it would show broken), and loading one would tell that host
who read the reply and when.

Fenced code is highlighted here, on the server, with Pygments (no script or CDN in the page),
and framed with its language and a Copy button. The same function renders a reply while it
streams and once it is stored, so the two look the same.
"""

from __future__ import annotations

import io
import re
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from markdown_it.common.utils import escapeHtml
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.styles import get_style_by_name
from pygments.token import STANDARD_TYPES, Text, Whitespace, _TokenType
from pygments.util import ClassNotFound


def _image_as_link(self, tokens, idx, options, env) -> str:
    token = tokens[idx]
    src = token.attrGet("src") or ""
    text = self.renderInlineAsText(token.children or [], options, env) or src
    return f'<a href="{escapeHtml(src)}">{escapeHtml(text)}</a>'


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
    # The code block's frame and highlighting; markdown-it escapes raw HTML, so only this
    # module's own markup can produce them, and their classes are fixed below.
    "div",
    "span",
    "button",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "code": {"class"},
    "th": {"style"},
    "td": {"style"},
    "ol": {"start"},
}
TOKEN_CLASSES = {name for name in STANDARD_TYPES.values() if name}
ALLOWED_VALUES: dict[str, dict[str, set[str]]] = {
    "div": {"class": {"code-block", "code-head"}},
    "span": {"class": TOKEN_CLASSES | {"code-lang"}},
    "button": dict(type={"button"}, data_copy={""}, **{"class": {"copy"}}),
}
ALLOWED_VALUES["button"]["data-copy"] = ALLOWED_VALUES["button"].pop("data_copy")
LANGUAGE = re.compile(r"[\w+#.-]{1,32}")  # fullmatch
MAX_HIGHLIGHT_CHARS = 20_000  # longer blocks are shown plain: highlighting them costs too much

_cleaner = nh3.Cleaner(
    tags=ALLOWED_TAGS,
    attributes=ALLOWED_ATTRIBUTES,
    tag_attribute_values=ALLOWED_VALUES,
    url_schemes={"http", "https", "mailto"},
    link_rel="noopener noreferrer nofollow",
    filter_style_properties={"text-align"},
)
_formatter = HtmlFormatter(nowrap=True)
# The styles app.css's code highlighting was generated from (light, dark). A token drawn as
# plain text in both (names, punctuation: most of a block's tokens) and whitespace (its colour
# is never seen) get no <span>: Pygments then joins them with their neighbours into one text
# run. Each span is an element to style and an inline box to lay out and paint: a reply's
# usual code block had 57 nodes, 22 with this (the page's first layout and style grew).
CODE_STYLES = ("default", "github-dark")


def _plain_tokens() -> frozenset[_TokenType]:
    plain_in_each: list[set[_TokenType]] = []
    for name in CODE_STYLES:
        style = get_style_by_name(name)
        base = style.style_for_token(Text)
        plain_in_each.append({t for t in STANDARD_TYPES if style.style_for_token(t) == base})
    return frozenset(set.intersection(*plain_in_each) | {Whitespace})


PLAIN_TOKENS = _plain_tokens()


def _highlight(code: str, lexer) -> str:
    tokens = ((Text if t in PLAIN_TOKENS else t, v) for t, v in lexer.get_tokens(code))
    out = io.StringIO()
    _formatter.format(tokens, out)
    return out.getvalue()


@lru_cache(maxsize=64)
def _lexer(language: str):
    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def code_block(code: str, info: str) -> str:
    """One fenced block: its language label, a Copy button, the code (highlighted when the
    language is known)."""
    language = info.split(maxsplit=1)[0] if info.strip() else ""
    if not LANGUAGE.fullmatch(language):
        language = ""
    lexer = _lexer(language.lower()) if language else None
    if lexer is not None and len(code) <= MAX_HIGHLIGHT_CHARS:
        body = _highlight(code, lexer)
    else:
        body = _escape(code)
    label = _escape(language) if language else "code"
    code_class = f' class="language-{_escape(language)}"' if language else ""
    return (
        '<div class="code-block"><div class="code-head">'
        f'<span class="code-lang">{label}</span>'
        '<button type="button" class="copy" data-copy="">Copy</button></div>'
        f"<pre><code{code_class}>{body}</code></pre></div>\n"
    )


def _fence(renderer, tokens, idx, options, env):
    token = tokens[idx]
    return code_block(token.content, token.info or "")


def _code_block(renderer, tokens, idx, options, env):  # indented code: no language
    return code_block(tokens[idx].content, "")


_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_markdown.enable(["table", "strikethrough"])
_markdown.add_render_rule("fence", _fence)
_markdown.add_render_rule("code_block", _code_block)
_markdown.add_render_rule("image", _image_as_link)


# Text none of whose characters Markdown or the sanitiser treats specially (no block marker at
# a line's start, no inline marker, no entity, nothing nh3 escapes or whitespace that
# markdown-it trims, no trailing space before a line break) renders as one paragraph of
# itself: most of a conversational reply, which would otherwise be parsed and sanitised again
# at every streamed frame. tests/chat/test_rendering.py checks it against the full render
# over the whole Basic Multilingual Plane.
_PLAIN_EXTRA = (  # beyond ASCII: all but controls, spaces, separators and surrogates
    "\u00a1-\u167f\u1681-\u1fff\u2010-\u2027\u2030-\u205e\u2070-\u2fff"
    "\u3001-\ud7ff\ue000-\ufefe\uff00-\uffef\U00010000-\U0010ffff"
)
_PLAIN_CHAR = "[A-Za-z0-9 !\"#$%'()+,\\-./:;=?@^{}" + _PLAIN_EXTRA + "]"
_PLAIN_LINE = "[A-Za-z" + _PLAIN_EXTRA + "]" + _PLAIN_CHAR + "*"
PLAIN = re.compile(f"(?:{_PLAIN_LINE}(?<! )\n)*{_PLAIN_LINE}")


def plain_paragraph(text: str) -> str | None:
    """``render_markdown(text)`` without parsing or sanitising, when ``text`` is plain (see
    PLAIN); None otherwise."""
    if PLAIN.fullmatch(text):
        return f"<p>{text.rstrip(' ')}</p>\n"
    return None


def render_markdown(text: str) -> str:
    plain = plain_paragraph(text) if text else None
    return plain if plain is not None else _render_parsed(text or "")


def _render_parsed(text: str) -> str:
    return _cleaner.clean(_markdown.render(text))


# A stored message's text never changes (an edit or a regeneration is a new message), and a
# conversation page renders up to 50 of them on every load: their HTML is kept per process,
# keyed by the conversation too (a hit is faster than a miss: a key shared between users would
# tell one whether another's conversation holds the same text). Bounded in entries and in the
# size of a text kept (<= ~1,000 x 3 x 8 kB).
STORED_CACHE_ENTRIES = 1000
STORED_CACHE_MAX_CHARS = 8000


@lru_cache(maxsize=STORED_CACHE_ENTRIES)
def _render_stored(conversation_id: int | None, text: str) -> str:
    return render_markdown(text)


def render_stored(text: str, conversation_id: int | None) -> str:
    """``render_markdown`` for a stored message's text, from the cache when that conversation
    showed it before."""
    if len(text or "") > STORED_CACHE_MAX_CHARS:
        return render_markdown(text)
    return _render_stored(conversation_id, text or "")


class StreamRenderer:
    """A streaming reply's Markdown, rendered as it grows at the cost of its last block.

    Blocks before the last one are final once a blank line separates them from what follows
    (later text cannot change a closed block, reference definitions aside: the stored reply
    is rendered whole once more at its end). ``render`` returns the HTML of the blocks that
    became final since the last call, to append, and the HTML of the open tail, to replace
    the previous tail: the page shows ``stable + tail``, the same HTML the final render
    gives, and no text is parsed twice once its block is closed.
    """

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._cut = 0  # offset in the text where the open tail starts
        self.stable: list[str] = []  # HTML of the final blocks so far

    def feed(self, text: str) -> None:
        self._parts.append(text)

    @property
    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def render(self) -> tuple[str, str]:
        tail_text = self.text[self._cut :]
        plain = plain_paragraph(tail_text)  # one open paragraph and nothing to heal
        if plain is not None:
            return "", plain
        env: dict = {}
        lines = tail_text.split("\n")
        # A block becomes final only after a blank line: with none, nothing to parse for it.
        closed = any(not line.strip() for line in lines[:-1])
        tokens = _markdown.parse(tail_text, env) if closed else []
        cut_token = None
        cut_line = 0
        for i, token in enumerate(tokens):
            if token.level or token.nesting == -1 or token.map is None or i == 0:
                continue
            start = token.map[0]
            if start > 0 and not lines[start - 1].strip():
                cut_token, cut_line = i, start  # the last block start after a blank line
        stable = ""
        if cut_token is not None:
            stable = _cleaner.clean(
                _markdown.renderer.render(tokens[:cut_token], _markdown.options, env)
            )
            offset = sum(len(line) + 1 for line in lines[:cut_line])
            self._cut += offset
            self.stable.append(stable)
            tail_text = tail_text[offset:]
        # The open block as it will look once its markers close: a bold or code span begun
        # but not ended shows formatted, not as raw ** or ``` for a frame.
        return stable, render_markdown(heal(tail_text))

    def html(self, tail: str) -> str:
        """The whole reply so far: the final blocks and ``tail``."""
        return "".join(self.stable) + tail


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_BULLET = re.compile(r"^\s*\*\s", re.MULTILINE)


def heal(text: str) -> str:
    """Streaming Markdown's open tail, closed: an open code fence, inline code, bold,
    italics or strikethrough get their closing marker, and a marker just begun at the very
    end is left for the next frame. Only for display while streaming: the stored reply is
    rendered from its own text."""
    fence = None
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if match is None:
            continue
        marker = match.group(1)
        if fence is None:
            fence = marker
        elif (
            marker[0] == fence[0] and len(marker) >= len(fence) and not line.strip()[len(marker) :]
        ):
            fence = None
    if fence is not None:
        return text + ("" if text.endswith("\n") else "\n") + fence
    start = text.rfind("\n\n") + 1
    head, para = text[:start], text[start:]
    para = para.rstrip().rstrip("*_`~").rstrip()  # a closing marker must touch the text
    closing = ""
    if para.count("`") % 2:
        closing += "`"
    plain = _CODE_SPAN.sub("", para + closing)
    plain = _BULLET.sub("", plain)
    singles = plain.replace("**", "").count("*")
    if singles % 2:
        closing += "*"
    if plain.count("**") % 2:
        closing += "**"
    if plain.count("~~") % 2:
        closing += "~~"
    return head + para + closing
