"""Memory of a ChatGPT import (issue 38): the upload's request and the job that stores it.

Writes the generated export of ``bench/import_chatgpt.py`` (a zip holding
``conversations.json``) to a file, as Django spools a large upload to a temporary file, then
in a fresh process per measurement (a scratch SQLite database each) runs

1. the upload's work (``chat_import_start``: read, check whole, keep compressed), and
2. the job that stores the conversations (``chat_import_run``),

and reports, per phase, the Python heap's peak (``tracemalloc``, its own process) and the
process's resident peak above what it held before the phase (``VmHWM`` minus ``VmRSS``, the
high-water mark reset through ``/proc/self/clear_refs``, another process without tracing).

``--before DIR`` measures a checkout of an earlier tree the same way (``git archive <commit> |
tar -x -C DIR``), with that tree's own call (bytes read whole, as its view did, or the file).

    .venv/bin/python bench/import_memory.py --conversations 2000
    .venv/bin/python bench/import_memory.py --conversations 6000 --before /tmp/before
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

CHILD = r"""
import gc, inspect, json, os, sys, time, tracemalloc
sys.path.insert(0, os.getcwd())
import django
django.setup()
from django.conf import settings
settings.DEBUG = False
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth import get_user_model
from userdata import chat_import
from userdata.models import ChatImport

path, how = sys.argv[1], sys.argv[2]
user = get_user_model().objects.create_user("bench-importer")
takes_file = "file" in inspect.signature(chat_import.chat_import_start).parameters


def status(name):
    for line in open("/proc/self/status"):
        if line.startswith(name + ":"):
            return int(line.split()[1])  # KiB


def phase(work):
    gc.collect()
    rss = status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # the peak RSS starts again from now
    if how == "tracemalloc":
        tracemalloc.start()
    began, cpu = time.perf_counter(), time.process_time()
    result = work()
    out = {"seconds": time.perf_counter() - began, "cpu": time.process_time() - cpu}
    if how == "tracemalloc":
        out["heap_peak_mb"] = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
    else:
        out["rss_added_mb"] = (status("VmHWM") - rss) * 1024 / 1e6
    return result, out


def upload():
    with open(path, "rb") as f:
        if takes_file:
            return chat_import.chat_import_start(user=user, filename="export.zip", file=f)
        return chat_import.chat_import_start(user=user, filename="export.zip", data=f.read())


item, start = phase(upload)
payload = len(ChatImport.objects.get(pk=item.pk).payload)
_, run = phase(lambda: chat_import.chat_import_run(import_id=item.pk))
done = ChatImport.objects.get(pk=item.pk)
assert done.imported == item.total, (done.imported, done.error)
print("RESULT " + json.dumps({"upload": start, "job": run, "payload_mb": payload / 1e6,
                              "conversations": done.imported, "messages": done.messages}))
"""


def measure(tree: Path, export: Path, how: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="import-memory-") as tmp:
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DEBUG": "true",
            "ALLOWED_HOSTS": "testserver",
            "CREATE_DEMO_USER": "false",
            "OPENAI_API_KEY": "",
            "LOG_LEVEL": "WARNING",
            "DATABASE_URL": f"sqlite:///{tmp}/db.sqlite3",
            "CHAT_IMPORT_MAX_MB": "200",
        }
        env.pop("REDIS_URL", None)
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(export), how],
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            raise SystemExit(f"{tree} ({how}) failed:\n{done.stderr[-3000:]}")
        line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
        return json.loads(line[len("RESULT ") :])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--before", default="", help="a checkout of the earlier tree")
    args = parser.parse_args()

    from bench.import_chatgpt import as_zip, generate

    conversations, _kept = generate(args.conversations)
    size = len(json.dumps(conversations)) / 1e6
    data = as_zip(conversations)
    del conversations
    with tempfile.TemporaryDirectory(prefix="import-export-") as tmp:
        export = Path(tmp) / "export.zip"
        export.write_bytes(data)
        trees = [("this tree", ROOT)]
        if args.before:
            trees.insert(0, ("before", Path(args.before)))
        print(
            f"Export: {args.conversations:,} conversations (conversations.json {size:,.1f} MB, "
            f"zip {len(data) / 1e6:,.1f} MB)\n"
        )
        print(
            "| tree | upload: heap peak MB | upload: RSS added MB | upload CPU / wall s "
            "| job: heap peak MB | job: RSS added MB | job CPU / wall s | payload MB |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for label, tree in trees:
            heap = measure(tree, export, "tracemalloc")
            rss = measure(tree, export, "rss")
            print(
                f"| {label} | {heap['upload']['heap_peak_mb']:,.1f} "
                f"| {rss['upload']['rss_added_mb']:,.1f} "
                f"| {rss['upload']['cpu']:.1f} / {rss['upload']['seconds']:.1f} "
                f"| {heap['job']['heap_peak_mb']:,.1f} | {rss['job']['rss_added_mb']:,.1f} "
                f"| {rss['job']['cpu']:.1f} / {rss['job']['seconds']:.1f} "
                f"| {rss['payload_mb']:.1f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
