"""How much of a question a hit holds, on an absolute scale (``Hit.relevance``, 0..1).

A hit's score is relative to the best candidate, so whatever ranks first scores about 1 even
when nothing the user said answers the question. ``held_share`` is absolute: the share of the
query's term weight (each stem's idf under the user's own statistics) that the hit's text, the
whole exchange it shows, holds. A word the user never wrote weighs the most.

It is shown (the context report, each hit's ``why``), not used as a gate. Measured on BEAM
(bench/README.md, "Abstention"), neither it nor the other absolute measures tried (its
rare-terms-only variant, the rarest word a hit lacks, the best hit's cosine) tells BEAM's
abstention questions, written from the chat's own words, from answerable ones; and a floor
low enough to cost no recall there still drops topical hits in a small history (asked for
"gardening tips", a user's thirty facts about gardening hold little of the query's weight,
"gardening" being in all of them and "tips" in none).
"""

from __future__ import annotations

from memory.search import index
from memory.search.terms import analysed, stem


def query_weights(terms: list[str], stats: index.Stats) -> dict[str, float]:
    """Each query stem's weight: its idf for the user (the largest of its words')."""
    out: dict[str, float] = {}
    for term in terms:
        s = stem(term)
        out[s] = max(out.get(s, 0.0), index.idf(stats, term))
    return out


def stems_held(text: str, stem_weights: dict[str, float]) -> frozenset[str]:
    """The query stems ``text`` holds, read as ranking reads it (``terms.analysed``)."""
    if not text:
        return frozenset()
    prefixes = frozenset(s[:3] for s in stem_weights)
    return frozenset(analysed(text).frequencies(stem_weights, prefixes))


def share_of(held: set[str] | frozenset[str], stem_weights: dict[str, float]) -> float:
    """The share of the query's weight the ``held`` stems carry: 0..1."""
    total = sum(stem_weights.values())
    # Summed in the query's order, not the set's (which changes with the hash seed): the same
    # hit gets the same value, to the last bit, in every process.
    return sum(w for s, w in stem_weights.items() if s in held) / total if total else 0.0


def held_share(parts: list[str], stem_weights: dict[str, float]) -> float:
    """The share of the query's weight whose stems the text shown holds: 0..1. ``parts``:
    the pieces it is made of (an exchange's roles and messages; no word spans two)."""
    held: set[str] = set()
    for part in parts:
        held |= stems_held(part, stem_weights)
    return share_of(held, stem_weights)
