"""Part d's "what reaches the model": the share of a question's evidence turns that stand in
the prompt of a real context build, beside a plain BM25 memory block packed into the same
memory share. The protocol of ../shared/tools/memeval.py ``--context``, copied exactly:

- a new conversation of the chat's user is opened per question and ``memory.context.build``
  runs with the question as the new message, at the conversation's default budget;
- an evidence turn is delivered when at least half of its word 5-grams (its whole text, for a
  turn under five words) stand in the messages sent;
- the BM25 block: the BM25-ranked single turns, whole, packed best first into
  ``MEMORY_SHARE x (budget - reply reserve)`` tokens (o200k, 4 tokens a turn's overhead);
  a turn that does not fit is skipped, the packing stops when fewer than 8 tokens are left;
- prompt tokens are the build's ``total_tokens``; build time is the build's wall time.
"""

from __future__ import annotations

import re
import statistics
import time


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def grams(ws: list[str], n: int = 5) -> set:
    return {tuple(ws[i : i + n]) for i in range(len(ws) - n + 1)}


def delivered(turn_words: list[str], prompt_words: list[str], prompt_grams: set) -> bool:
    if len(turn_words) < 5:
        return " ".join(turn_words) in " ".join(prompt_words)
    g = grams(turn_words)
    return len(g & prompt_grams) >= 0.5 * len(g)


def measure(user, question: str, gold: set, order: list[int], turn_ids, turn_text) -> dict:
    """One question's figures: the app's delivered share, the BM25 block's, prompt tokens,
    build ms. ``order``: BM25's ranking of the chat's turns (indexes of ``turn_ids``)."""
    from django.conf import settings

    from chat.models import Conversation
    from contextwindow.tokens import count_tokens
    from memory import context

    cv = Conversation.objects.create(user=user, title="question")
    try:
        began = time.perf_counter()
        built = context.build(conversation=cv, user_text=question)
        build_ms = 1000 * (time.perf_counter() - began)
        sent = words(" ".join(str(m.get("content", "")) for m in built.messages))
        sent_grams = grams(sent)
        app = sum(delivered(words(turn_text[g]), sent, sent_grams) for g in gold) / len(gold)
        reserve = min(settings.MEMORYCHAT_REPLY_RESERVE, cv.effective_budget // 2)
        cap = int((cv.effective_budget - reserve) * context.MEMORY_SHARE)
        packed, used = set(), 0
        for i in order:
            cost = count_tokens(turn_text[turn_ids[i]]) + 4
            if used + cost > cap:
                continue
            packed.add(turn_ids[i])
            used += cost
            if cap - used < 8:
                break
        memories = len(built.report.get("memories") or [])
        return {
            "app": app,
            "bm25": len(gold & packed) / len(gold),
            "tokens": built.total_tokens,
            "build_ms": build_ms,
            "memories": memories,
            "left_out": len(built.report.get("memories_left_out") or []),
        }
    finally:
        cv.delete()


def summarise(rows: list[tuple[str, dict]]) -> dict:
    """Overall and per question type: delivered shares (percent), prompt tokens, build ms."""
    if not rows:
        return {}

    def block(sub):
        ms = sorted(r["build_ms"] for _, r in sub)
        return {
            "n": len(sub),
            "app": 100 * statistics.mean(r["app"] for _, r in sub),
            "bm25": 100 * statistics.mean(r["bm25"] for _, r in sub),
            "tokens_median": statistics.median(r["tokens"] for _, r in sub),
            "memories_median": statistics.median(r["memories"] for _, r in sub),
            "build_p50_ms": statistics.median(ms),
            "build_p95_ms": ms[int(0.95 * (len(ms) - 1))],
        }

    types = sorted({t for t, _ in rows})
    return {
        "overall": block(rows),
        "per_type": {t: block([x for x in rows if x[0] == t]) for t in types},
    }


def report(c: dict) -> list[str]:
    if not c:
        return []
    o = c["overall"]
    ratio = o["app"] / o["bm25"] if o["bm25"] else 0.0
    lines = [
        "",
        f"What reaches the model (memeval `--context` protocol): evidence delivered in the"
        f" prompt **{o['app']:.1f} %** against a BM25 block of the same memory share"
        f" {o['bm25']:.1f} % (**{ratio:.2f}x**); prompt tokens median {o['tokens_median']:.0f};"
        f" memories in the block median {o['memories_median']:.0f}; build p50 / p95"
        f" {o['build_p50_ms']:.1f} / {o['build_p95_ms']:.1f} ms",
        "",
        "| question type | n | app in prompt | BM25 block | app / BM25 | prompt tokens p50 |"
        " build p50 ms |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for kind, t in c["per_type"].items():
        r = t["app"] / t["bm25"] if t["bm25"] else 0.0
        lines.append(
            f"| {kind} | {t['n']} | {t['app']:.1f} | {t['bm25']:.1f} | {r:.2f}x |"
            f" {t['tokens_median']:.0f} | {t['build_p50_ms']:.1f} |"
        )
    return lines
