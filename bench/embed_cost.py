"""Benchmark: the CPU of embedding an imported history with the local model (MiniLM int8 on
onnxruntime, one thread), several ways over the same messages, interleaved round by round:

* ``one``: one text a run, up to 256 word pieces (what ``memory.search.embeddings`` does);
* ``bucket N``: texts sorted by length in batches of N, each padded to its longest (masked
  mean pooling, so a text's vector is its own);
* ``cap 128``: one text a run, cut at 128 word pieces.

For each, the CPU a message and the cosine of its vector to ``one``'s (1.0 = the same).
The messages are the generated export's (``bench/import_chatgpt.py``'s pool, users 20-120
tokens, assistants 40-300):

    .venv/bin/python bench/embed_cost.py [--messages 120] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=120)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "true")
    import django

    django.setup()
    import numpy as np

    from bench.corpus import chat_messages
    from contextwindow.tokens import count_tokens
    from memory.search.embeddings import MAX_CHARS, _local_model

    model = _local_model()
    texts = [
        text[:MAX_CHARS]
        for _, text in chat_messages(
            args.messages, lambda t: count_tokens(t, "gpt-4o-mini"), seed=38
        )
    ]
    pieces = sorted(len(model.tokenizer.encode(t).ids) for t in texts)
    print(
        f"{len(texts)} messages, word pieces p50 {pieces[len(pieces) // 2]}, "
        f"p90 {pieces[int(len(pieces) * 0.9)]}; load {os.getloadavg()[0]:.1f}"
    )

    def one(items):
        return np.vstack([model.encode(t) for t in items])

    def capped(items, cap=128):
        out = []
        for text in items:
            encoding = model.tokenizer.encode(text)
            ids = np.array([encoding.ids[:cap]], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            if "token_type_ids" in model.inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            pooled = model.session.run(None, feeds)[0][0].mean(axis=0)
            out.append(pooled / np.linalg.norm(pooled))
        return np.vstack(out)

    def bucketed(items, size):
        encodings = [model.tokenizer.encode(t) for t in items]
        order = sorted(range(len(items)), key=lambda i: len(encodings[i].ids))
        out = np.zeros((len(items), 384), dtype="float32")
        for start in range(0, len(order), size):
            chunk = order[start : start + size]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in model.inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = model.session.run(None, feeds)[0]
            pooled = (hidden * mask[:, :, None]).sum(axis=1) / mask.sum(axis=1)[:, None]
            out[chunk] = pooled / np.linalg.norm(pooled, axis=1)[:, None]
        return out

    ways = {
        "one (now)": one,
        "bucket 8": lambda items: bucketed(items, 8),
        "bucket 16": lambda items: bucketed(items, 16),
        "cap 128": capped,
    }
    one(texts[:10])  # warm-up
    cpu: dict[str, list[float]] = {name: [] for name in ways}
    vectors: dict[str, np.ndarray] = {}
    for n in range(args.rounds):
        names = list(ways) if n % 2 == 0 else list(reversed(ways))
        for name in names:
            started = time.process_time()
            vectors[name] = ways[name](texts)
            cpu[name].append((time.process_time() - started) * 1000 / len(texts))
    base = vectors["one (now)"]
    print("\n| way | CPU ms a message, p50 of rounds | ratio to one | cosine to one, min / mean |")
    print("|---|---:|---:|---|")
    reference = statistics.median(cpu["one (now)"])
    for name in ways:
        cosines = (vectors[name] * base).sum(axis=1)
        value = statistics.median(cpu[name])
        print(
            f"| {name} | {value:.2f} | {value / reference:.2f} | "
            f"{cosines.min():.3f} / {cosines.mean():.4f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
