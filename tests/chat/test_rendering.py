"""Model replies' images are links, never loaded from another host."""

from chat.rendering import render_markdown


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
