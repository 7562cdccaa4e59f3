"""Model replies' images are links, never loaded from another host; a streamed reply's
Markdown; code highlighting."""

import html as html_lib
import random
import re
from pathlib import Path

import pytest
from django.conf import settings
from pygments.token import STANDARD_TYPES

from chat import rendering
from chat.rendering import (
    PLAIN,
    STORED_CACHE_MAX_CHARS,
    StreamRenderer,
    _render_parsed,
    _render_stored,
    plain_paragraph,
    render_markdown,
    render_stored,
)


def test_an_external_image_is_a_link_not_an_image():
    html = render_markdown("Look: ![a cat](https://tracker.example/cat.png?u=alice)")
    assert "<img" not in html
    assert '<a href="https://tracker.example/cat.png?u=alice"' in html and ">a cat</a>" in html


def test_an_image_without_alt_text_shows_its_address():
    html = render_markdown("![](http://x.example/p.gif)")
    assert "<img" not in html and ">http://x.example/p.gif</a>" in html


def test_image_alt_text_and_unsafe_addresses_stay_inert():
    html = render_markdown(
        '![<script>alert(1)</script>](https://x.example/a.png "t") ![x](javascript:alert(1))'
    )
    assert "<script" not in html and "<img" not in html and 'href="javascript' not in html


def test_a_stored_message_renders_the_same_from_the_cache():
    """The page's cached render of a stored text is the live render, computed once."""
    text = "**Cached** once\n\n```python\nprint('hi')\n```\n<script>x</script>"
    _render_stored.cache_clear()
    first, second = render_stored(text, 7), render_stored(text, 7)
    assert first == second == render_markdown(text)
    assert "<script>" not in first
    assert _render_stored.cache_info().hits == 1


def test_the_render_cache_is_not_shared_between_conversations():
    """The same text in another conversation (another user's, perhaps) is a miss: how fast a
    page renders says nothing about what other conversations hold (issue 40, low 3)."""
    text = "The launch code is **hunter2**"
    _render_stored.cache_clear()
    render_stored(text, 1)
    render_stored(text, 2)
    assert _render_stored.cache_info().hits == 0
    render_stored(text, 2)
    assert _render_stored.cache_info().hits == 1


def test_a_very_long_text_is_rendered_without_the_cache():
    """A text over the size limit is not kept (the cache's memory stays bounded)."""
    text = "word " * (STORED_CACHE_MAX_CHARS // 5 + 1)
    _render_stored.cache_clear()
    assert render_stored(text, 7) == render_markdown(text)
    assert _render_stored.cache_info().currsize == 0


STREAMED = [
    "One paragraph with **bold** and `code`, streamed word by word with no blank line.",
    "A first paragraph.\n\nA second one, *emphasised*.\n\n```python\nprint('hi')\n```\n\nThe end.",
    "# A heading\nText right under it.\n\n> a quote\n\nlast line",
]


@pytest.mark.parametrize("text", STREAMED)
def test_a_streamed_reply_renders_as_the_whole_text_does(text):
    """Fed in small pieces, the final blocks plus the open tail are the whole text's HTML;
    blocks after a blank line become final as the stream goes."""
    renderer = StreamRenderer()
    tail = ""
    for start in range(0, len(text), 7):
        renderer.feed(text[start : start + 7])
        _, tail = renderer.render()
    assert renderer.html(tail) == render_markdown(text)
    assert bool(renderer.stable) == ("\n\n" in text)


def _plain_alphabet() -> list[str]:
    """Every character PLAIN lets into a line (the BMP, and a sample beyond it)."""
    chars = [chr(cp) for cp in range(0x20, 0x10000) if not 0xD800 <= cp <= 0xDFFF]
    chars += [chr(cp) for cp in range(0x10000, 0x110000, 97)]
    return [c for c in chars if PLAIN.fullmatch("a" + c + "b")]


def test_plain_text_renders_as_the_parsed_and_sanitised_text_does():
    """The shortcut for plain paragraphs gives exactly the full render, for every character
    it accepts (in groups, each between letters) and at a line's start."""
    alphabet = _plain_alphabet()
    assert len(alphabet) > 60_000 and not {"*", "_", "`", "<", "&", "\xa0", "\t"} & set(alphabet)
    for start in range(0, len(alphabet), 300):
        group = alphabet[start : start + 300]
        text = "a" + "a".join(group) + "b"
        assert plain_paragraph(text) == _render_parsed(text), group
        starts = "\n".join(c + "x" for c in group if PLAIN.fullmatch(c + "x"))
        assert plain_paragraph(starts) == _render_parsed(starts), group


def test_only_plain_text_takes_the_shortcut():
    """Anything Markdown could read differently is parsed: markers at a line's start, inline
    markers, entities, a hard break, indentation, a blank line."""
    for text in [
        "- item",
        "1. first",
        "# title",
        "> quote",
        "a\n===",
        "a\n---",
        "a **b**",
        "a `b`",
        "a [b](c)",
        "a &amp; b",
        "a  \nb",
        "a \nb",
        "    code",
        " a",
        "a\n\nb",
        "a | b\n--|--",
        "a\xa0b",
        "a\tb",
        "",
    ]:
        assert plain_paragraph(text) is None, text


def test_random_texts_render_the_same_either_way(monkeypatch):
    """Random texts over plain and special characters: when the shortcut applies it gives the
    full render, and every streamed frame is the one the renderer gave without it."""
    from chat import rendering

    rng = random.Random(17)
    alphabet = [*"abcXYZ019 .,;:!?'\"()-#=+/\n", "é", "—", "中", "😀", "*", "`", "\n\n"]
    texts = [
        rng.choice("aZé") + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        for _ in range(600)
    ]

    def frames(text: str) -> list[tuple[str, str]]:
        renderer, out = StreamRenderer(), []
        for start in range(0, len(text), 5):
            renderer.feed(text[start : start + 5])
            out.append(renderer.render())
        return out

    streamed = [frames(text) for text in texts]
    taken = 0
    for text in texts:
        plain = plain_paragraph(text)
        if plain is not None:
            taken += 1
            assert plain == _render_parsed(text), repr(text)
        assert render_markdown(text) == _render_parsed(text), repr(text)
    assert taken > 50
    monkeypatch.setattr(rendering, "plain_paragraph", lambda text: None)
    assert [frames(text) for text in texts] == streamed


def test_a_plain_streamed_paragraph_is_rendered_without_parsing(monkeypatch):
    """A reply of plain sentences streams without markdown-it: each frame's tail is the
    paragraph so far, as the full render gives it."""
    from chat import rendering

    text = "Plain words, said twice. " * 40
    calls = []
    monkeypatch.setattr(rendering, "_render_parsed", lambda t: calls.append(t) or "")
    renderer = StreamRenderer()
    for start in range(0, len(text), 9):
        renderer.feed(text[start : start + 9])
        html, tail = renderer.render()
        assert html == "" and tail == f"<p>{renderer.text.rstrip()}</p>\n"
    assert calls == []


def test_code_is_highlighted_without_spans_for_plain_tokens():
    html = render_markdown("```python\ndef total(prices, rate=1.2):\n    return sum(prices)\n```")
    assert '<span class="k">def</span> <span class="nf">total</span>(prices, rate' in html
    assert not re.search(r'class="(n|p|w)"', html)  # names, punctuation, whitespace: plain
    code = re.search(r"<code[^>]*>(.*)</code>", html, re.S).group(1)
    text = html_lib.unescape(re.sub(r"<[^>]+>", "", code))
    assert text == "def total(prices, rate=1.2):\n    return sum(prices)\n"


def test_the_tokens_left_plain_have_no_colour_of_their_own_in_the_code_styles():
    """The code highlighting in static/css/app.css gives a token left without a span either no
    rule or, dark, the code block's own colour (whitespace aside, whose colour is never seen):
    it looks the same."""
    sheet = (Path(settings.BASE_DIR) / "static/css/app.css").read_text()
    css = re.search(r"Code highlighting: begin(.*)Code highlighting: end", sheet, re.S).group(1)
    dark_base = re.search(r"\[data-theme=dark\] \.code-block \{[^}]*color: (#\w+)", css).group(1)
    plain = {STANDARD_TYPES[t] for t in rendering.PLAIN_TOKENS} - {"", "w"}
    rules = re.finditer(r"(?P<sel>[^{}\n]*)\.code-block \.(?P<cls>[\w-]+) \{(?P<body>[^}]*)\}", css)
    checked = 0
    for rule in rules:
        if rule["cls"] not in plain:
            continue
        checked += 1
        assert "dark" in rule["sel"] or "light" in rule["sel"], rule.group(0)
        assert rule["body"].strip() == f"color: {dark_base}", rule.group(0)
    assert checked >= 10  # .n, .p, ... in both dark rule sets
