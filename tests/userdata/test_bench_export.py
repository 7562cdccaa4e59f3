"""The import bench's generated export is built from the tests' ChatGPT export blocks
(``tests/userdata/exports.py``) and reads as the bench counts it: its left-behind branches and
code runs left out, its sizes as in bench/README.md's figures."""

from bench.import_chatgpt import generate
from tests.userdata.exports import as_zip
from userdata.transfer.external import read_export


def test_the_bench_export_reads_as_the_bench_counts_it():
    conversations, kept = generate(12, seed=38)
    export = read_export(as_zip(conversations), max_bytes=50_000_000)
    assert export.source == "chatgpt" and export.skipped_empty == 0
    assert len(export.conversations) == 12
    assert sum(len(c.messages) for c in export.conversations) == kept
    roles = {m.role for c in export.conversations for m in c.messages}
    assert roles == {"user", "assistant"}
