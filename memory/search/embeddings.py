"""Optional semantic search: embeddings from the same OpenAI-compatible server.

Enabled when ``OPENAI_EMBEDDING_MODEL`` (and a key) is set. Vectors are stored L2-normalised as
float32 bytes in ``Embedding``; a background task embeds what the search index holds and has no
vector yet. Similarity is a dot product.
"""

from __future__ import annotations

import math
from array import array

import openai
from django.conf import settings
from django.db import connection

from llm.clients import sync_client
from memory.models import Embedding

BATCH = 64


def enabled() -> bool:
    return bool(settings.OPENAI_EMBEDDING_MODEL and settings.OPENAI_API_KEY)


def _normalised(vector: list[float]) -> array:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return array("f", (x / norm for x in vector))


def embed_texts(texts: list[str]) -> list[array]:
    response = sync_client().embeddings.create(model=settings.OPENAI_EMBEDDING_MODEL, input=texts)
    return [_normalised(item.embedding) for item in response.data]


def similarities(*, user, query: str, keys: list[tuple[str, int]]) -> dict:
    """Cosine similarity (0..1) of the query to each (kind, id) that has a stored vector."""
    try:
        (query_vector,) = embed_texts([query])
    except openai.OpenAIError:
        return {}  # the lexical score alone still ranks
    wanted = {}
    for kind, object_id in keys:
        wanted.setdefault(kind, []).append(object_id)
    scores = {}
    for kind, ids in wanted.items():
        rows = Embedding.objects.filter(
            user=user, model=settings.OPENAI_EMBEDDING_MODEL, kind=kind, object_id__in=ids
        ).values_list("object_id", "vector")
        for object_id, blob in rows:
            vector = array("f")
            vector.frombytes(bytes(blob))
            dot = sum(a * b for a, b in zip(query_vector, vector, strict=False))
            scores[(kind, object_id)] = max(0.0, dot)
    return scores


def embed_pending(limit: int = 1000) -> int:
    """Embed indexed items that have no vector for the configured model; returns how many."""
    if not enabled():
        return 0
    model = settings.OPENAI_EMBEDDING_MODEL
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.kind, s.object_id, s.user_id, s.text FROM memory_search s "
            "LEFT JOIN memory_embedding e ON e.kind = s.kind AND e.object_id = s.object_id "
            "AND e.model = %s WHERE e.id IS NULL LIMIT %s",
            [model, limit],
        )
        pending = cursor.fetchall()
    done = 0
    for start in range(0, len(pending), BATCH):
        batch = pending[start : start + BATCH]
        vectors = embed_texts([row[3][:8000] for row in batch])
        Embedding.objects.bulk_create(
            [
                Embedding(kind=k, object_id=o, user_id=u, model=model, vector=v.tobytes())
                for (k, o, u, _), v in zip(batch, vectors, strict=True)
            ],
            ignore_conflicts=True,
        )
        done += len(batch)
    return done
