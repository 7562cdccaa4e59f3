"""Benchmark of a user's ChatGPT import (issue 38): a generated 2,000-conversation export.

Generates an export shaped as ChatGPT's (``conversations.json`` in a zip, built with
``tests/userdata/exports.py`` as the import tests' exports are: a tree per conversation with
its hidden system root, some regenerated replies on branches left behind, some code runs, the
text from ``bench/corpus.py``), then, on a scratch SQLite
database (``--database-url`` for another), times:

1. the upload's work, in the request: read, check whole, keep (``chat_import_start``, the
   file read as a stream);
2. the background job that stores the conversations (``chat_import_run``);

target: 1 + 2 within 120 s. Then 3: the memory is built by a real job worker
(``manage.py job_worker``, a process of its own, the offline extractor) for ``--build``
seconds while this process times the pages a user opens meanwhile (the chat page with its
sidebar, the import's progress, a conversation) against the same pages before: the page is
usable if they stay fast.

    .venv/bin/python bench/import_chatgpt.py                 # 2,000 conversations
    .venv/bin/python bench/import_chatgpt.py --quick         # 200, 20 s of building
    .venv/bin/python bench/import_chatgpt.py --write export.zip   # keep the generated file
    .venv/bin/python bench/import_chatgpt.py --conversations 100 --build 120 --profile w.txt
        # py-spy's samples of the job worker while it builds, summed by function
"""

from __future__ import annotations

import argparse
import inspect
import io
import json
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TARGET_SECONDS = 120.0
START = 1_672_531_200  # 2023-01-01
ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings",
    "DEBUG": "true",  # read as on for the development defaults; switched off below
    "ALLOWED_HOSTS": "testserver,localhost",
    "CREATE_DEMO_USER": "false",
    "OPENAI_API_KEY": "",
    "LOG_LEVEL": "WARNING",
}


# -- the export --------------------------------------------------------------------------------


CODE = "print(sum(range(10)))"
CODE_RUN = [  # a code run: the call and its output, which an import leaves out
    ("assistant", CODE, {"content": {"content_type": "code", "language": "python", "text": CODE}}),
    ("tool", "45", {"content": {"content_type": "execution_output", "parts": ["45"]}}),
]


def generate(conversations: int, *, seed: int = 38) -> tuple[list, int]:
    """The export's conversations and the number of messages an import keeps."""
    from bench.corpus import chat_messages
    from contextwindow.tokens import count_tokens
    from tests.userdata.exports import chatgpt_add, chatgpt_document, chatgpt_tree

    rng = random.Random(seed)
    pool = chat_messages(4000, lambda text: count_tokens(text, "gpt-4o-mini"), seed=seed)
    users = [text for role, text in pool if role == "user"]
    replies = [text for role, text in pool if role == "assistant"]
    out, kept = [], 0
    for n in range(conversations):
        ident = f"{rng.getrandbits(128):032x}"
        start = START + n * 9000 + rng.randint(0, 3000)
        mapping = chatgpt_tree()
        parent, at = "sys", float(start)
        turns = max(1, min(30, int(rng.expovariate(1 / 6))))
        for t in range(turns):
            nodes = [("user", rng.choice(users), {})]
            if rng.random() < 0.05:
                nodes += CODE_RUN
            nodes.append(("assistant", rng.choice(replies), {}))
            for k, (role, text, extra) in enumerate(nodes):
                node_id = f"{ident[:8]}-{t}-{k}"
                at += rng.randint(5, 90)
                chatgpt_add(mapping, node_id, role, text, at=at, parent=parent, **extra)
                if role == "assistant" and k == len(nodes) - 1 and rng.random() < 0.1:
                    # A reply regenerated: the first one stays on a branch left behind.
                    old = f"{node_id}-old"
                    chatgpt_add(
                        mapping, old, "assistant", rng.choice(replies), at=at - 1,
                        parent=parent, left_behind=True,
                    )  # fmt: skip
                parent = node_id
            kept += 2
        title = " ".join(rng.choice(users).split()[:5])
        out.append(
            chatgpt_document(
                ident, title, start=float(start), end=at, mapping=mapping, current=parent
            )
        )
    return out, kept


# -- timing ------------------------------------------------------------------------------------


def setup_django(database_url: str) -> None:
    os.environ.update(ENV, DATABASE_URL=database_url)
    import django
    from django.conf import settings

    django.setup()
    settings.DEBUG = False


def time_pages(client, urls: dict[str, str], seconds: float) -> dict[str, list[float]]:
    """Each page in turn, again and again for ``seconds``: milliseconds per request."""
    timings: dict[str, list[float]] = {name: [] for name in urls}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for name, url in urls.items():
            began = time.perf_counter()
            response = client.get(url)
            timings[name].append((time.perf_counter() - began) * 1000)
            assert response.status_code == 200, (url, response.status_code)
        time.sleep(0.2)  # a person reading, not a load test
    return timings


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _built(user) -> tuple[int, int]:
    """Summary runs done for the user's conversations, and the user's stored vectors."""
    from memory.models import Embedding, SummaryRun

    runs = SummaryRun.objects.filter(conversation__user=user, status=SummaryRun.Status.DONE)
    return runs.count(), Embedding.objects.filter(user=user).count()


def _spy(pid: int, path: str) -> subprocess.Popen:
    """py-spy on the worker (every thread, idle ones left out) until SIGINT."""
    return subprocess.Popen(
        [
            str(Path(sys.executable).with_name("py-spy")),
            "record",
            "--pid",
            str(pid),
            "--rate",
            "100",
            "--format",
            "raw",
            "--output",
            path,
            "--nonblocking",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _stop(worker: subprocess.Popen) -> None:
    worker.terminate()  # it finishes its job first: an embedding batch may take a while
    try:
        worker.wait(10)
    except subprocess.TimeoutExpired:
        worker.kill()
        worker.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--build", type=float, default=60.0, help="seconds of memory building")
    parser.add_argument("--quick", action="store_true", help="200 conversations, 20 s of building")
    parser.add_argument("--database-url", default="")
    parser.add_argument("--write", default="", help="also write the generated zip here")
    parser.add_argument(
        "--profile", default="", help="py-spy the job worker while it builds (raw stacks here)"
    )
    parser.add_argument(
        "--skip-pages", action="store_true", help="no page timings (only the build's rate)"
    )
    args = parser.parse_args()
    if args.quick:
        args.conversations, args.build = 200, 20.0

    tmp = Path(tempfile.mkdtemp(prefix="import-bench-"))
    url = args.database_url or f"sqlite:///{tmp / 'import.sqlite3'}"
    worker = None
    try:
        setup_django(url)
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        from django.contrib.auth import get_user_model
        from django.test import Client

        from chat.models import Conversation
        from tests.userdata.exports import as_zip
        from userdata import chat_import
        from userdata.models import ChatImport

        began = time.perf_counter()
        conversations, kept = generate(args.conversations)
        data = as_zip(conversations)
        generated = time.perf_counter() - began
        if args.write:
            Path(args.write).write_bytes(data)
        size = len(json.dumps(conversations)) / 1e6

        user = get_user_model().objects.create_user("bench-importer")  # no password: force_login
        client = Client()
        client.force_login(user)
        first = Conversation.objects.create(user=user, title="Before the import")

        began = time.perf_counter()
        # An earlier tree's (``--before`` checkouts) took the bytes, read whole.
        upload = {"file": io.BytesIO(data)}
        if "file" not in inspect.signature(chat_import.chat_import_start).parameters:
            upload = {"data": data}
        item = chat_import.chat_import_start(user=user, filename="export.zip", **upload)
        upload = time.perf_counter() - began
        began = time.perf_counter()
        chat_import.chat_import_run(import_id=item.pk)
        stored = time.perf_counter() - began
        item = ChatImport.objects.get(pk=item.pk)
        assert item.imported == args.conversations, (item.imported, item.error)
        assert item.messages == kept, (item.messages, kept)

        urls = {
            "chat page": "/",
            "import page": "/account/import/",
            "progress": f"/account/import/{item.pk}/",
            "a conversation": f"/c/{first.pk}/",
        }
        idle = {} if args.skip_pages else time_pages(client, urls, 10.0)  # no worker running
        # The memory: a job worker of its own, as `make run` starts it.
        env = {
            **os.environ,
            **ENV,
            "DATABASE_URL": url,
            "DEBUG": "false",  # as in production: no reloader watching every file
            "SECRET_KEY": "bench-import-chatgpt-not-a-secret-0123456789abcdef",
            "LOG_LEVEL": "INFO",
        }
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "job_worker", "--interval", "0.2"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(tmp / "worker.log").open("w"),
        )
        began = time.perf_counter()
        while not ChatImport.objects.get(pk=item.pk).memory_done:  # the worker starting
            assert time.perf_counter() - began < 180, "the job worker did not start"
            time.sleep(0.5)
        started = time.perf_counter() - began
        before_build = ChatImport.objects.get(pk=item.pk).memory_done
        runs_before, vectors_before = _built(user)
        spy = _spy(worker.pid, args.profile) if args.profile else None
        if args.skip_pages:
            time.sleep(args.build)
            building = {}
        else:
            building = time_pages(client, urls, args.build)
        built = ChatImport.objects.get(pk=item.pk)
        runs_after, vectors_after = _built(user)
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        _stop(worker)
        worker = None

        from memory.models import Fact, Summary

        summaries = Summary.objects.filter(conversation__user=user).count()
        facts = Fact.objects.filter(user=user).count()
        total = upload + stored
        print("# ChatGPT import benchmark\n")
        print(
            f"{platform.python_implementation()} {platform.python_version()}, "
            f"{os.cpu_count()} CPUs, database {url.split(':', 1)[0]}\n"
        )
        print(
            f"Export: {args.conversations:,} conversations, {kept:,} messages kept "
            f"(conversations.json {size:,.1f} MB, zip {len(data) / 1e6:,.1f} MB; generated "
            f"in {generated:.1f} s)\n"
        )
        print("| step | seconds |\n|---|---|")
        print(f"| upload: read, check whole, keep (the request) | {upload:.1f} |")
        print(f"| the job: store conversations and messages | {stored:.1f} |")
        verdict = "met" if total <= TARGET_SECONDS else "NOT met"
        print(f"| **total** (target ≤ {TARGET_SECONDS:.0f} s) | **{total:.1f}** ({verdict}) |\n")
        rate = (built.memory_done - before_build) / args.build * 60
        print(
            f"Memory building (the worker took {started:.0f} s to start and take the first job), "
            f"then {args.build:.0f} s with one job worker (offline extractor): "
            f"{built.memory_done:,} of {built.memory_total:,} conversations started "
            f"(about {rate:,.0f} a minute), {summaries:,} summaries, {facts:,} facts; "
            f"in those {args.build:.0f} s {runs_after - runs_before:,} summary runs done "
            f"({(runs_after - runs_before) / args.build * 60:,.1f} a minute) and "
            f"{vectors_after - vectors_before:,} rows embedded "
            f"({(vectors_after - vectors_before) / args.build:,.1f} a second).\n"
        )
        if args.skip_pages:
            return
        print(
            f"| page ({args.conversations:,} conversations) | no worker p50 / p95 ms "
            "| while building p50 / p95 ms | requests |"
        )
        print("|---|---|---|---|")
        for name, values in building.items():
            before = idle.get(name)
            was = f"{p(before, 0.5):.1f} / {p(before, 0.95):.1f}" if before else "—"
            print(
                f"| {name} | {was} | {statistics.median(values):.1f} / {p(values, 0.95):.1f} "
                f"| {len(values)} |"
            )
    finally:
        if worker is not None:
            _stop(worker)
        if os.environ.get("BENCH_KEEP_LOG"):
            shutil.copy(tmp / "worker.log", os.environ["BENCH_KEEP_LOG"])
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
