"""What the model saw: why a memory was used is shown; its ranking score only behind a toggle."""

import re

from django.template.loader import render_to_string


def test_scores_are_behind_a_toggle():
    report = {
        "total_tokens": 10, "limit": 100, "budget": 200, "reserve": 100, "model": "m",
        "memories": [{"kind": "fact", "text": "Likes tea", "score": 3.21, "why": "matched tea"}],
        "messages": [], "memory_enabled": True,
    }  # fmt: skip
    html = render_to_string(
        "chat/_context_report_body.html", {"report": report, "view": {"blocks": []}}
    )
    listed = re.search(r'<ul class="report-memories">.*?</ul>', html, re.S).group(0)
    assert "matched tea" in listed and "3.21" not in listed
    toggle = re.search(r'<details class="report-scores">.*?</details>', html, re.S).group(0)
    assert "<summary>Ranking scores</summary>" in toggle and "3.21 · Likes tea" in toggle
