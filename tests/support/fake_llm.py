"""An OpenAI-compatible HTTP server for tests and benchmarks, on 127.0.0.1.

It streams chat completions as server-sent events the way the OpenAI API does, and can be told
to misbehave: answer 429 or 500 a number of times, stall before the first byte, cut the
connection mid-stream, send a malformed event. Requests are recorded for assertions.
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
    json_reply: Callable[[dict], dict] | None = None  # non-streamed structured output
    usage: bool = True


@dataclass
class FakeLLM:
    behaviour: Behaviour = field(default_factory=Behaviour)
    requests: list[dict] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    backlog: int = 5  # the listen queue (socketserver's default); a load test wants more
    nodelay: bool = False  # TCP_NODELAY, as model servers send: no Nagle wait between events
    _lock: threading.Lock = field(default_factory=threading.Lock)

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

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        fake = self.owner
        fake.requests.append({"path": self.path, "body": body, "time": time.monotonic()})
        behaviour = fake.behaviour
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
        if body.get("stream"):
            try:
                self._stream(body, behaviour)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client went away (Stop, a closed tab)
        else:
            content = (
                json.dumps(behaviour.json_reply(body)) if behaviour.json_reply else behaviour.reply
            )
            self._json(200, _completion(body, content))

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
        pieces = words(behaviour.reply, behaviour.chunk_words)
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
        self._event({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if behaviour.usage and (body.get("stream_options") or {}).get("include_usage"):
            prompt = sum(len(m.get("content", "").split()) for m in body.get("messages", []))
            self._event(
                {
                    **base,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": prompt,
                        "completion_tokens": len(pieces),
                        "total_tokens": prompt + len(pieces),
                    },
                }
            )
        self._event("[DONE]")
        self._end()

    def _end(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _completion(body: dict, content: str) -> dict:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [
            {
                "index": 0,
                "finish_reason": "stop",
                "message": {"role": "assistant", "content": content},
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
