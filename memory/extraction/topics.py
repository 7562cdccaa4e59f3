"""Topics: the most frequent content words and phrases of the kept messages.

Words of the kept messages, lowercased, minus stopwords and chat filler, at least three
letters; user words count twice, a capitalised word in mid-sentence gets a bonus, and adjacent
word pairs seen at least twice become a phrase (taking their count from the single words). The
top ``MAX_TOPICS`` by score, ties by first appearance.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from memory.extraction.sentences import Sent
from memory.extraction.text import STOPWORDS
from memory.extraction.types import MAX_TOPICS


def extract_topics(sents: list[Sent]) -> list[str]:
    scores: defaultdict[str, float] = defaultdict(float)  # weights: not whole counts
    first_seen: dict[str, int] = {}
    forms: dict[str, defaultdict[str, float]] = {}
    pairs: Counter[tuple[str, str]] = Counter()
    order = 0
    for s in sents:
        weight = 2.0 if s.role == "user" else 1.0
        previous = None
        tokens = re.findall(r"[^\W\d_][\w'.+#-]*[\w+#]|[^\W\d_]", s.raw)
        for i, token in enumerate(tokens):
            token = re.sub(r"'s$", "", token)
            low = token.lower()
            if len(low) < 3 or low in STOPWORDS or not re.search(r"[^\W\d_]{2}", low):
                previous = None
                continue
            scores[low] += weight + (0.25 if i > 0 and token[:1].isupper() else 0.0)
            # sentence-initial capitals say nothing about the word's own spelling
            forms.setdefault(low, defaultdict(float))[token if i > 0 else low] += (
                1 if i > 0 else 0.5
            )
            first_seen.setdefault(low, order)
            order += 1
            if previous is not None and previous != low:
                pairs[(previous, low)] += 1
            previous = low

    def display(low: str) -> str:
        # the most frequent spelling, lowercase on ties (sentence starts count as lowercase)
        return min(forms[low].items(), key=lambda kv: (-kv[1], kv[0] != low, kv[0]))[0]

    candidates: dict[str, float] = {}
    position: dict[str, int] = {}
    for (a, b), count in pairs.items():
        if count >= 2:
            phrase = f"{display(a)} {display(b)}"
            candidates[phrase] = count * 2.0
            position[phrase] = first_seen[a]
            scores[a] -= count
            scores[b] -= count
    for low, score in scores.items():
        if score > 0:
            candidates.setdefault(display(low), score)
            position.setdefault(display(low), first_seen[low])
    ranked = sorted(candidates, key=lambda w: (-candidates[w], position[w], w))
    return ranked[:MAX_TOPICS]
