"""An OpenAI-compatible HTTP server for tests and benchmarks, on 127.0.0.1.

It streams chat completions as server-sent events the way the OpenAI API does, and can be told
to misbehave: answer 429 or 500 a number of times, stall before the first byte, cut the
connection mid-stream, send a malformed event. Requests are recorded for assertions.

It also does what real servers (llama.cpp, vLLM, Ollama) do and the API mostly does not, each
switchable per test through ``Behaviour``:

- ``strict_template``: a chat template that accepts one leading system message and strictly
  alternating user/assistant turns from the user's, and answers anything else with HTTP 400
  and a body, as llama.cpp does ("Conversation roles must alternate ...");
- ``max_tokens``: a reply (streamed or not) longer than the request's ``max_tokens`` (or
  ``max_completion_tokens``) words stops there with ``finish_reason: "length"``, as every real
  server does (``honour_max_tokens``, on by default);
- ``json_cut_at``: a structured answer cut mid-string after that many characters, with
  ``finish_reason: "length"``; ``reject_json_schema``: 400 for ``response_format`` json_schema;
  ``answer_chars_per_token``: a non-streamed answer counted against ``max_tokens`` at that
  many characters a token instead of a word a token;
- ``slots``: a server with that many slots: a request beyond them waits for one (a single slot
  makes the second request wait for the first), its wait recorded in ``requests``;
- ``prompt_tokens_per_word``: the usage it reports, for a tokenizer that is not tiktoken;
  ``tokens_per_estimate``: a tokenizer that counts that many tokens for each of tiktoken's
  (the app's estimate of an unknown model: SmolLM2 or Gemma on some text) instead, for the
  usage, ``n_ctx`` and ``/tokenize`` alike;
- ``POST /tokenize`` counts a text with that tokenizer, in llama.cpp's shape (``content`` ->
  ``tokens``) or vLLM's (``prompt`` -> ``count``, ``tokens``) by ``states_context``; 404 for
  any other server or with ``tokenize`` off;
- ``GET /v1/models`` lists ``models``;
- ``n_ctx``: a context of that many tokens (a word a token): a request whose prompt and
  ``max_tokens`` pass it is refused with HTTP 400 and llama.cpp's body
  (``exceed_context_size_error`` with ``n_prompt_tokens`` and ``n_ctx``); ``states_context``
  says where the server states it: ``"llama.cpp"`` (``GET /props``), ``"vllm"``
  (``max_model_len`` in ``/v1/models``), ``"ollama"`` (``POST /api/show``), or nowhere.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from contextwindow.tokens import count_tokens


@dataclass
class Behaviour:
    reply: str = "Hello from the fake model. It streams in pieces."
    chunk_words: int = 1  # words per SSE event
    interval: float = 0.0  # seconds between events
    fail_status: int | None = None  # answer this status ...
    fail_times: int = 0  # ... this many times, then behave
    stall_before: float = 0.0  # seconds before sending the response headers
    cut_after: int | None = None  # close the connection after this many events
    malformed_after: int | None = None  # send a broken event after this many events
    stall_after: int | None = None  # stop sending (keep the socket open) after N events
    end_delay: float = 0.0  # seconds between "data: [DONE]" and the body's end
    json_reply: Callable[[dict], dict | str] | None = None  # non-streamed structured output
    usage: bool = True
    strict_template: bool = False  # 400 unless one leading system message + alternation
    honour_max_tokens: bool = True  # stop at max_tokens words with finish_reason "length"
    json_cut_at: int | None = None  # cut the structured answer after this many characters
    # A non-streamed answer's tokens as this many characters each, not words: a small model
    # under a grammar can spend a token a character (SmolLM2 on llama.cpp, issue 42).
    answer_chars_per_token: int | None = None
    reject_json_schema: bool = False  # 400 for response_format json_schema
    slots: int | None = None  # concurrent requests served; more wait for a free slot
    prompt_tokens_per_word: float = 1.0  # reported prompt tokens per word of the messages
    tokens_per_estimate: float | None = None  # else this many per tiktoken token
    tokenize: bool = True  # POST /tokenize, on a server that states its context as one that has it
    models: tuple[str, ...] = ("fake-large", "fake-small")  # GET /v1/models
    n_ctx: int | None = None  # refuse prompt + max_tokens above this (llama.cpp's 400)
    states_context: str = ""  # "llama.cpp", "vllm", "ollama": where n_ctx is stated
    # A prompt cache: the usage reports as cached the prompt's words shared with the previous
    # request's, from the start (OpenAI's prompt_tokens_details.cached_tokens).
    prompt_cache: bool = False


@dataclass
class FakeLLM:
    behaviour: Behaviour = field(default_factory=Behaviour)
    requests: list[dict] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    backlog: int = 5  # the listen queue (socketserver's default); a load test wants more
    nodelay: bool = False  # TCP_NODELAY, as model servers send: no Nagle wait between events
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _slots: threading.Semaphore | None = None
    _slot_count: int | None = None
    _last_prompt: list[str] = field(default_factory=list)

    def slot(self):
        """The server's slots: a context manager that waits for one (or nothing, unlimited)."""
        with self._lock:
            if self.behaviour.slots != self._slot_count:
                self._slot_count = self.behaviour.slots
                self._slots = (
                    threading.Semaphore(self.behaviour.slots) if self._slot_count else None
                )
            slots = self._slots
        return slots if slots is not None else contextlib.nullcontext()

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> FakeLLM:
        fake = self

        class Handler(_Handler):
            owner = fake
            disable_nagle_algorithm = self.nodelay

        class Server(ThreadingHTTPServer):
            request_queue_size = self.backlog

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def take_failure(self) -> int | None:
        with self._lock:
            if self.behaviour.fail_status and self.behaviour.fail_times > 0:
                self.behaviour.fail_times -= 1
                return self.behaviour.fail_status
        return None

    def cached(self, body: dict) -> int:
        """Words of this prompt shared from the start with the previous streamed one's."""
        words_now = " ".join(m.get("content", "") for m in body.get("messages", [])).split()
        with self._lock:
            before, self._last_prompt = self._last_prompt, words_now
        shared = 0
        for a, b in zip(before, words_now, strict=False):
            if a != b:
                break
            shared += 1
        return shared

    def chat_requests(self) -> list[dict]:
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]


def words(text: str, per_chunk: int) -> list[str]:
    pieces = re.findall(r"\S+\s*|\s+", text)
    return ["".join(pieces[i : i + per_chunk]) for i in range(0, len(pieces), per_chunk)]


def fake_embedding(text: str, dims: int = 64) -> list[float]:
    """A deterministic bag-of-words vector: texts sharing words are similar."""
    vector = [0.0] * dims
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[digest[0] % dims] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


class _Handler(BaseHTTPRequestHandler):
    owner: FakeLLM
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:  # keep test output clean
        pass

    def handle(self) -> None:
        # A client dropping a kept-alive connection is not an error: nothing to answer.
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):
            super().handle()

    def do_GET(self) -> None:
        fake = self.owner
        fake.requests.append({"path": self.path, "body": None, "time": time.monotonic()})
        behaviour = fake.behaviour
        if self.path.endswith("/models"):
            data = [{"id": m, "object": "model", "owned_by": "fake"} for m in behaviour.models]
            if behaviour.states_context == "vllm":
                for model in data:
                    model["max_model_len"] = behaviour.n_ctx
            self._json(200, {"object": "list", "data": data})
            return
        if self.path == "/props" and behaviour.states_context == "llama.cpp":
            settings = {"n_ctx": behaviour.n_ctx, "params": {"n_predict": -1}}
            slots = behaviour.slots or 1  # llama.cpp's --parallel
            self._json(200, {"default_generation_settings": settings, "total_slots": slots})
            return
        self._json(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        fake = self.owner
        record = {
            "path": self.path,
            "body": body,
            "time": time.monotonic(),
            "peer": self.client_address,  # the client's connection
        }
        fake.requests.append(record)
        arrived = time.monotonic()
        with fake.slot():
            record["waited"] = time.monotonic() - arrived
            self._answer(body, fake)
            record["finished"] = time.monotonic()

    def _answer(self, body: dict, fake: FakeLLM) -> None:
        behaviour = fake.behaviour
        if self.path == "/api/show":
            if behaviour.states_context != "ollama":
                self._json(404, {"error": "not found"})
                return
            info = {"gemma3.context_length": 131072}
            params = f"num_ctx {behaviour.n_ctx}\ntemperature 1"
            self._json(200, {"model_info": info, "parameters": params})
            return
        if self.path == "/tokenize":
            self._tokenize(body, behaviour)
            return
        if behaviour.stall_before:
            time.sleep(behaviour.stall_before)
        status = fake.take_failure()
        if status:
            self._json(status, {"error": {"message": f"fake failure {status}", "type": "x"}})
            return
        if self.path.endswith("/embeddings"):
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [
                {"object": "embedding", "index": i, "embedding": fake_embedding(t)}
                for i, t in enumerate(inputs)
            ]
            self._json(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": body.get("model"),
                    "usage": {"prompt_tokens": 1, "total_tokens": 1},
                },
            )
            return
        if not self.path.endswith("/chat/completions"):
            self._json(404, {"error": {"message": "not found"}})
            return
        overflow = _overflow(body, behaviour)
        if overflow:
            self._json(400, {"error": overflow})
            return
        refusal = _refusal(body, behaviour)
        if refusal:
            self._json(
                400, {"error": {"code": 400, "message": refusal, "type": "invalid_request_error"}}
            )
            return
        if body.get("stream"):
            try:
                self._stream(body, behaviour)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client went away (Stop, a closed tab)
        else:
            answer = behaviour.json_reply(body) if behaviour.json_reply else behaviour.reply
            content = answer if isinstance(answer, str) else json.dumps(answer)
            finish = "stop"
            cap = _max_tokens(body) if behaviour.honour_max_tokens else None
            pieces = words(content, 1)
            if behaviour.answer_chars_per_token:
                per = behaviour.answer_chars_per_token
                pieces = [content[i : i + per] for i in range(0, len(content), per)]
            if cap is not None and len(pieces) > cap:
                content, finish = "".join(pieces[:cap]), "length"
            if behaviour.json_cut_at is not None and len(content) > behaviour.json_cut_at:
                content, finish = content[: behaviour.json_cut_at], "length"
            self._json(200, _completion(body, content, finish, behaviour))

    def _tokenize(self, body: dict, behaviour: Behaviour) -> None:
        kind = behaviour.states_context if behaviour.tokenize else ""
        text = body.get({"llama.cpp": "content", "vllm": "prompt"}.get(kind, ""))
        if not isinstance(text, str):
            self._json(404, {"error": {"message": "not found"}})
            return
        tokens = list(range(_prompt_tokens({"messages": [{"content": text}]}, behaviour)))
        if kind == "vllm":
            self._json(
                200, {"count": len(tokens), "max_model_len": behaviour.n_ctx, "tokens": tokens}
            )
        else:
            self._json(200, {"tokens": tokens})

    def _json(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if status == 429:
            self.send_header("Retry-After", "0")
        self.end_headers()
        self.wfile.write(data)

    def _event(self, payload) -> None:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        chunk = f"data: {data}\n\n".encode()
        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        self.wfile.flush()

    def _stream(self, body: dict, behaviour: Behaviour) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        base = {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
        }
        finish = "stop"
        single = words(behaviour.reply, 1)
        cap = _max_tokens(body) if behaviour.honour_max_tokens else None
        if cap is not None and len(single) > cap:  # a word per token, near enough
            single, finish = single[:cap], "length"
        per = behaviour.chunk_words
        pieces = ["".join(single[i : i + per]) for i in range(0, len(single), per)]
        self._event(
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
        )
        for sent, piece in enumerate(pieces):
            if behaviour.cut_after is not None and sent >= behaviour.cut_after:
                self.wfile.flush()
                self.connection.shutdown(2)  # the network drops mid-reply
                self.close_connection = True
                return
            if behaviour.malformed_after is not None and sent >= behaviour.malformed_after:
                self._event("{this is not json")
                self._end()
                return
            if behaviour.stall_after is not None and sent >= behaviour.stall_after:
                time.sleep(3600)
            if behaviour.interval:
                time.sleep(behaviour.interval)
            self._event(
                {
                    **base,
                    "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                }
            )
        self._event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
        if behaviour.usage and (body.get("stream_options") or {}).get("include_usage"):
            prompt = _prompt_tokens(body, behaviour)
            usage = {
                "prompt_tokens": prompt,
                "completion_tokens": len(single),
                "total_tokens": prompt + len(single),
            }
            if behaviour.prompt_cache:
                usage["prompt_tokens_details"] = {"cached_tokens": self.owner.cached(body)}
            self._event({**base, "choices": [], "usage": usage})
        self._event("[DONE]")
        if behaviour.end_delay:
            time.sleep(behaviour.end_delay)
        self._end()

    def _end(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _max_tokens(body: dict) -> int | None:
    cap = body.get("max_tokens", body.get("max_completion_tokens"))
    return cap if isinstance(cap, int) and cap > 0 else None


def _prompt_tokens(body: dict, behaviour: Behaviour) -> int:
    contents = [m.get("content", "") for m in body.get("messages", [])]
    if behaviour.tokens_per_estimate:
        estimate = sum(count_tokens(content, "fake") for content in contents)
        return round(estimate * behaviour.tokens_per_estimate)
    count = sum(len(content.split()) for content in contents)
    return round(count * behaviour.prompt_tokens_per_word)


def _overflow(body: dict, behaviour: Behaviour) -> dict | None:
    """llama.cpp's error body for a request beyond its context, or None."""
    if not behaviour.n_ctx:
        return None
    prompt = _prompt_tokens(body, behaviour)
    if prompt + (_max_tokens(body) or 0) <= behaviour.n_ctx:
        return None
    return {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": prompt,
        "n_ctx": behaviour.n_ctx,
    }


ALTERNATE = "Conversation roles must alternate user/assistant/user/assistant/..."


def _refusal(body: dict, behaviour: Behaviour) -> str:
    """Why a strict server refuses this request, or "" (the checks of Gemma's and Mistral's
    templates, and a server without json_schema support)."""
    if behaviour.reject_json_schema and (body.get("response_format") or {}).get("type") == (
        "json_schema"
    ):
        return "response_format type 'json_schema' is not supported by this server"
    if not behaviour.strict_template:
        return ""
    roles = [m.get("role") for m in body.get("messages", [])]
    if roles and roles[0] == "system":
        roles = roles[1:]
    if "system" in roles:
        return "System message must be at the beginning."
    for i, role in enumerate(roles):
        if role != ("user" if i % 2 == 0 else "assistant"):
            return ALTERNATE
    return ""


def _completion(body: dict, content: str, finish: str = "stop", behaviour=None) -> dict:
    prompt = _prompt_tokens(body, behaviour) if behaviour is not None else 1
    completion = len(words(content, 1))
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "finish_reason": finish,
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }
