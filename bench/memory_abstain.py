"""Part d's abstention figures: does an absolute measure of a hit tell questions that have no
evidence (BEAM's abstention type) from questions that have?

A measure (``Hit.relevance``, or with embeddings the hit's cosine to the question) would gate
the memory block: hits under a threshold are not offered. So for each question the run keeps
the measure of each of its top ``TOP`` hits (what ``memory.recall`` asks for) and which of them
show evidence. An abstention question "retrieves something" when its best hit by the measure
clears the threshold; an answerable one keeps its evidence when its best evidence hit does.

The threshold is chosen on the even-numbered chats of the file and reported on the odd ones,
two ways: the one that best separates (answerable kept minus abstention kept, on the even
half), and the highest that costs at most ``FREE_LOSS`` points of recall@10 on the even half.
ROC AUC is the chance that an answerable question's best evidence hit measures more than an
abstention question's best hit (0.5: no separation), on the odd half.
"""

from __future__ import annotations

import statistics

TOP = 12  # memory.recall.SEARCH_K
FREE_LOSS = 0.5  # recall@10 points a "free" threshold may cost on the even half
GRID = [i / 100 for i in range(101)]


def record(chat: int, kind: str, gold: set, hits, id_of, measure) -> dict:
    """What the figures need of one question: each hit's shown turns (none when it shows more
    than 5 messages, as part d counts them) and its ``measure``."""
    shown = []
    for hit in hits:
        turns = [id_of.get(m) for m in hit.message_ids] if len(hit.message_ids) <= 5 else []
        shown.append(([t for t in turns if t], measure(hit)))
    return {"chat": chat, "type": kind, "gold": sorted(gold), "hits": shown}


def record_turns(chat: int, kind: str, gold: set, ranked: list[tuple[str, float]]) -> dict:
    """The same for a baseline that ranks single turns: (turn id, measure), best first."""
    return {
        "chat": chat,
        "type": kind,
        "gold": sorted(gold),
        "hits": [([turn], value) for turn, value in ranked[:TOP]],
    }


def _best(r: dict) -> float:
    return max((v for _, v in r["hits"][:TOP]), default=0.0)


def _best_evidence(r: dict) -> float | None:
    gold = set(r["gold"])
    found = [v for turns, v in r["hits"][:TOP] if gold & set(turns)]
    return max(found) if found else None


def _recall10(r: dict, threshold: float) -> float:
    ranked: list[str] = []
    for turns, value in r["hits"]:
        if value < threshold:
            continue
        ranked += [t for t in turns if t not in ranked]
    gold = set(r["gold"])
    return len(gold & set(ranked[:10])) / len(gold)


def auc(positives: list[float], negatives: list[float]) -> float | None:
    """P(a positive measures more than a negative), ties counting half."""
    if not positives or not negatives:
        return None
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def _at(records: list[dict], threshold: float) -> dict:
    abstain = [r for r in records if not r["gold"]]
    answer = [r for r in records if r["gold"]]
    evidence = [v for v in map(_best_evidence, answer) if v is not None]
    types: dict[str, list[tuple[float, float]]] = {}
    for r in answer:
        types.setdefault(r["type"], []).append((_recall10(r, 0.0), _recall10(r, threshold)))
    return {
        "threshold": threshold,
        "abstention_kept": sum(_best(r) >= threshold for r in abstain) / max(len(abstain), 1),
        "evidence_kept": sum(v >= threshold for v in evidence) / max(len(evidence), 1),
        "recall@10": 100 * statistics.mean(_recall10(r, 0.0) for r in answer) if answer else 0,
        "recall@10_gated": 100 * statistics.mean(_recall10(r, threshold) for r in answer)
        if answer
        else 0,
        "per_type": {
            t: [100 * statistics.mean(a for a, _ in v), 100 * statistics.mean(b for _, b in v)]
            for t, v in sorted(types.items())
        },
    }


def _grid(records: list[dict]) -> list[float]:
    """Thresholds to try: GRID for a measure on 0..1; for an unbounded one (BM25's raw
    score), its own percentiles."""
    values = sorted(v for r in records for _, v in r["hits"][:TOP])
    if not values or values[-1] <= 1.0:
        return GRID
    return sorted({values[round(q / 100 * (len(values) - 1))] for q in range(101)} | {0.0})


def summarise(records: list[dict]) -> dict:
    even = [r for r in records if r["chat"] % 2 == 0]
    odd = [r for r in records if r["chat"] % 2 == 1]
    if not even or not odd:
        return {}
    on_even = [_at(even, t) for t in _grid(even)]
    separating = max(on_even, key=lambda x: x["evidence_kept"] - x["abstention_kept"])
    free = max(
        (x for x in on_even if x["recall@10_gated"] >= x["recall@10"] - FREE_LOSS),
        key=lambda x: x["threshold"],
    )
    answer_odd = [v for v in (_best_evidence(r) for r in odd if r["gold"]) if v is not None]
    abstain_odd = [_best(r) for r in odd if not r["gold"]]
    return {
        "questions": {"even": len(even), "odd": len(odd)},
        "abstention": {"even": sum(not r["gold"] for r in even), "odd": len(abstain_odd)},
        "auc_odd": auc(answer_odd, abstain_odd),
        "median_odd": {
            "abstention_best": statistics.median(abstain_odd) if abstain_odd else None,
            "answerable_best_evidence": statistics.median(answer_odd) if answer_odd else None,
        },
        "separating": {"even": separating, "odd": _at(odd, separating["threshold"])},
        "free": {"even": free, "odd": _at(odd, free["threshold"])},
    }


def report(name: str, s: dict) -> list[str]:
    if not s:
        return [f"- abstention by {name}: needs chats of both halves (even and odd)"]
    auc_odd = f"{s['auc_odd']:.2f}" if s["auc_odd"] is not None else "n/a"
    med = s["median_odd"]
    lines = [
        "",
        f"Abstention by {name} (threshold chosen on the even chats, {s['questions']['even']}"
        f" questions of which {s['abstention']['even']} abstention; shown on the odd chats,"
        f" {s['questions']['odd']} of which {s['abstention']['odd']}): ROC AUC on the odd half"
        f" **{auc_odd}** (0.5 = no separation); median best hit of an abstention question"
        f" {med['abstention_best']:.2f}, best evidence hit of an answerable one"
        f" {med['answerable_best_evidence']:.2f}",
        "",
        "| threshold (chosen on even) | abstention questions whose best hit clears it"
        " | answerable whose best evidence hit clears it | recall@10, all hits → gated |",
        "| --- | --- | --- | --- |",
    ]
    for label, key in (("best separating", "separating"), ("highest free", "free")):
        o = s[key]["odd"]
        lines.append(
            f"| {label}: {o['threshold']:.2f} | {100 * o['abstention_kept']:.0f} %"
            f" | {100 * o['evidence_kept']:.0f} % | {o['recall@10']:.1f} →"
            f" {o['recall@10_gated']:.1f} |"
        )
    for key in ("separating", "free"):
        o = s[key]["odd"]
        lines += [
            "",
            f"recall@10 per type on the odd half, all hits → gated at {o['threshold']:.2f}: "
            + "; ".join(f"{t} {a:.1f} → {b:.1f}" for t, (a, b) in o["per_type"].items()),
        ]
    return lines
