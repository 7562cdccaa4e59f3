"""Part d's figures again on a database loaded once: for trying a ranking change in minutes.

    # load (index and embed) the sets as part d does, once:
    DEBUG=true .venv/bin/python bench/memory_rerun.py load /tmp/d.sqlite3 --sets locomo,beam
    # then, after each change, both sets beside BM25 (add --context for what reaches the prompt):
    DEBUG=true .venv/bin/python bench/memory_rerun.py ask /tmp/d.sqlite3 --context

The same users, conversations, messages (``message_create``, speaker prefixes, dates) and
vectors as ``bench/memory.py --part d --beam-every 11 --beam-embeddings``, and the same
measures: ``memory.search.search(k=50)`` read by ``memory_beam._ranked`` and ``table``
(recall@k, all@k), memeval's BM25 (``memory_beam.bm25_scores``) and, with ``--context``,
``memory_prompt.measure`` (the real context build beside a BM25 block of the same share).
Embeddings fused only (part d also asks lexical only and embeddings alone). ``--dump`` writes
each question's ranked turns, for reading the misses.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _sets(names: str, every: int):
    from bench import memory_beam

    for name in names.split(","):
        if name == "locomo":
            yield name, memory_beam.LOCOMO_PATH, 1
        else:
            yield name, memory_beam.DEFAULT_PATH, every


def _chats(path: Path, every: int):
    with gzip.open(path, "rt") as fh:
        for n, line in enumerate(fh):
            if not n % every:
                yield n, json.loads(line)


def _text(turn: dict) -> str:
    return f"{turn['speaker']}: {turn['text']}" if turn.get("speaker") else turn["text"]


def load(args) -> None:
    from django.contrib.auth import get_user_model

    from bench.memory_beam import _when
    from chat.models import Conversation
    from chat.services import message_create
    from memory.search import embeddings

    for name, path, every in _sets(args.sets, args.every):
        for n, inst in _chats(path, every):
            user = get_user_model().objects.create_user(f"{path.name[:8]}_{n}", password=None)
            for si, sess in enumerate(inst["sessions"]):
                cv = Conversation.objects.create(user=user, title=f"session {si + 1}")
                for i, turn in enumerate(sess["turns"]):
                    message_create(
                        conversation=cv,
                        role=turn["role"],
                        content=_text(turn),
                        created_at=_when(sess.get("date"), i),
                    )
            while embeddings.embed_pending(limit=5000):
                pass
            print(f"{name} chat {n} loaded", flush=True)


def ask(args) -> None:
    from django.contrib.auth import get_user_model

    from bench import memory_beam as mb
    from bench import memory_prompt
    from chat.models import Message
    from memory.search import search

    dump = []
    for name, path, every in _sets(args.sets, args.every):
        rows, baseline, prompt_rows, ms = [], [], [], []
        for n, inst in _chats(path, every):
            user = get_user_model().objects.get(username=f"{path.name[:8]}_{n}")
            ids = list(
                Message.objects.filter(conversation__user=user)
                .exclude(conversation__title="question")
                .order_by("id")
                .values_list("id", flat=True)
            )
            turns = [t for s in inst["sessions"] for t in s["turns"]]
            id_of = {m: t["id"] for m, t in zip(ids, turns, strict=True)}
            text_of = {t["id"]: _text(t) for t in turns}
            turn_ids = [t["id"] for t in turns]
            docs = [mb.tok(text_of[t]) for t in turn_ids]
            for q in inst["questions"]:
                gold = set(q.get("evidence_turns") or []) & set(turn_ids)
                if not gold:
                    continue
                began = time.perf_counter()
                hits = search(user=user, query=q["question"], k=max(mb.KS))
                ms.append(1000 * (time.perf_counter() - began))
                ranked = mb._ranked(hits, id_of)
                rows.append((q["type"], gold, ranked))
                order = mb.best_first(mb.bm25_scores(docs, mb.tok(q["question"]))[0])
                baseline.append((q["type"], gold, [turn_ids[i] for i in order[: max(mb.KS)]]))
                record = {"set": name, "chat": n, "q": q["question"], "type": q["type"]}
                record |= {"gold": sorted(gold), "ranked": ranked}
                if args.context:
                    shares = memory_prompt.measure(
                        user, q["question"], gold, order, turn_ids, text_of
                    )
                    prompt_rows.append((q["type"], shares))
                    record["context"] = shares
                dump.append(record)
        _report(name, rows, baseline, prompt_rows, ms)
    if args.dump:
        Path(args.dump).write_text(json.dumps(dump), encoding="utf-8")


def _report(name, rows, baseline, prompt_rows, ms) -> None:
    from bench import memory_beam as mb
    from bench import memory_prompt

    app, bm25 = mb.table(rows), mb.table(baseline)
    print(f"== {name}: {len(rows)} questions, search p50 {statistics.median(ms):.1f} ms")
    print(
        f"search r@10 {app['recall@10']:.1f} vs BM25 {bm25['recall@10']:.1f}"
        f" ({app['recall@10'] / bm25['recall@10']:.3f}x); all@10 {app['all@10']:.1f}"
        f" vs {bm25['all@10']:.1f}"
    )
    for kind in sorted({r[0] for r in rows}):
        mine = mb.table([r for r in rows if r[0] == kind])
        theirs = mb.table([r for r in baseline if r[0] == kind])
        line = f"  {kind}: r@10 {mine['recall@10']:.1f} vs {theirs['recall@10']:.1f}"
        if prompt_rows:
            t = memory_prompt.summarise([p for p in prompt_rows if p[0] == kind])["overall"]
            ratio = t["app"] / t["bm25"] if t["bm25"] else 0.0
            line += f"; in the prompt {t['app']:.1f} vs {t['bm25']:.1f} ({ratio:.2f}x)"
        print(line)
    if prompt_rows:
        o = memory_prompt.summarise(prompt_rows)["overall"]
        print(
            f"in the prompt {o['app']:.1f} % vs BM25 block {o['bm25']:.1f} %"
            f" ({o['app'] / o['bm25']:.3f}x); prompt tokens p50 {o['tokens_median']:.0f};"
            f" build p50 {o['build_p50_ms']:.1f} ms"
        )
    sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("load", "ask"))
    parser.add_argument("database", help="a SQLite file (created by load)")
    parser.add_argument("--sets", default="locomo,beam", help="locomo, beam or both")
    parser.add_argument("--every", type=int, default=11, help="BEAM: every Nth chat (11)")
    parser.add_argument("--context", action="store_true", help="what reaches the prompt too")
    parser.add_argument("--dump", help="ask: each question's ranked turns, as JSON, here")
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = f"sqlite:///{Path(args.database).resolve()}"
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings_bench"
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.MEMORYCHAT_EMBEDDINGS = "local"
    if args.action == "load":
        call_command("migrate", verbosity=0, interactive=False)
        load(args)
    else:
        ask(args)


if __name__ == "__main__":
    main()
