"""A fake OpenAI-compatible model server in a process of its own, streaming at a fixed rate.

It serves ``tests.support.fake_llm.FakeLLM`` (server-sent events the way the OpenAI API
streams chat completions) with one fixed reply of ``--words`` words, one SSE event per
``--chunk-words`` words every ``--interval`` seconds. Benchmarks start it as a subprocess so
that its threads never share a GIL with the benchmark's clients or with the server under test.

On start it prints one JSON line, ``{"base_url": ..., "pid": ...}``, then serves until it is
terminated (SIGTERM/SIGINT) or its standard input closes.

    .venv/bin/python bench/upstream.py --interval 0.02 --words 100
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.data import load_text  # noqa: E402
from tests.support.fake_llm import Behaviour, FakeLLM  # noqa: E402

TEXT = load_text("upstream_reply.txt")  # bench/data/upstream_reply.txt
VOCABULARY = TEXT.split()


def reply_text(words: int) -> str:
    """A deterministic plain-text reply of exactly ``words`` words (sentences of 12)."""
    out = []
    for i in range(words):
        word = VOCABULARY[(i * 7) % len(VOCABULARY)]
        if i % 12 == 0:
            word = word.capitalize()
        if i % 12 == 11 or i == words - 1:
            word += "."
        out.append(word)
    return " ".join(out)


def serve(interval: float, words: int, chunk_words: int = 1, backlog: int = 1024) -> FakeLLM:
    # socketserver listens with a backlog of 5: a burst of connections would then wait for
    # SYN retransmits (1 s). Each SSE event is a small write: with Nagle's algorithm on, an
    # event waits for the ACK of the previous one (delayed ACKs: tens of ms).
    behaviour = Behaviour(reply=reply_text(words), interval=interval, chunk_words=chunk_words)
    fake = FakeLLM(behaviour, backlog=backlog, nodelay=True)
    fake.requests = collections.deque(maxlen=1000)  # long runs: keep memory flat
    return fake.start()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between events")
    parser.add_argument("--words", type=int, default=100, help="words in the reply")
    parser.add_argument("--chunk-words", type=int, default=1, help="words per event")
    parser.add_argument("--backlog", type=int, default=1024, help="listen backlog")
    args = parser.parse_args(argv)

    fake = serve(args.interval, args.words, args.chunk_words, args.backlog)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())

    def watch_stdin() -> None:  # the parent went away
        sys.stdin.read()
        done.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    print(json.dumps({"base_url": fake.base_url, "pid": os.getpid()}), flush=True)
    while not done.wait(0.5):
        pass
    fake.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
