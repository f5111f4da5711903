"""A small OpenAI-compatible Chat Completions server for the LLM planner's unit tests (a test double: the
end-to-end tests use a real model served by llama.cpp). It streams scripted answers as server-sent events,
in chunks, and records what each request asked. With `models` set it lists them at `GET /v1/models`, and, like
llama.cpp, answers under whatever model name it is asked for."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer: text streamed in `pieces`, or an HTTP error."""

    text: str = ""
    status: int = 200
    error: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    prompt_tokens: int = 100
    completion_tokens: int = 20
    # Seconds to wait before each piece; a long one makes a stalled stream.
    delay: float = 0.0
    # Seconds before the first piece only: a model still reading a long prompt.
    first_delay: float = 0.0
    pieces: int = 4
    # Sent before the stream stops sending (a stream that stalls after its first pieces).
    stall_after: int | None = None
    # False: no usage chunk, as llama.cpp's Python server streams.
    usage: bool = True
    # False: the stream ends without a finish_reason, as when llama.cpp's Python server is interrupted.
    finish: bool = True
    # "length": the endpoint cut the answer at max_tokens.
    finish_reason: str = "stop"


Script = Callable[[dict[str, Any]], Reply]


class FakeOpenAI:
    def __init__(self, script: Script, models: list[str] | None = None) -> None:
        self.script = script
        self.models = models
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.closed_early = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                if fake.models is None or not self.path.rstrip("/").endswith("/models"):
                    self.send_error(404)
                    return
                payload = json.dumps({"object": "list", "data": [
                    {"id": name, "object": "model", "created": 0, "owned_by": "test"} for name in fake.models]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append(body)
                fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                reply = fake.script(body)
                if reply.status != 200:
                    payload = json.dumps({"error": {"message": reply.error, "type": "test"}}).encode()
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                try:
                    if reply.first_delay:
                        self.wfile.flush()
                        time.sleep(reply.first_delay)
                    for index, piece in enumerate(_split(reply.text, reply.pieces)):
                        if reply.stall_after is not None and index >= reply.stall_after:
                            time.sleep(30)
                            return
                        if reply.delay:
                            time.sleep(reply.delay)
                        self._event({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
                    if reply.finish:
                        self._event({"choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]})
                    if reply.usage:
                        self._event({"choices": [], "usage": {"prompt_tokens": reply.prompt_tokens,
                                     "completion_tokens": reply.completion_tokens,
                                     "total_tokens": reply.prompt_tokens + reply.completion_tokens}})
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    fake.closed_early.set()

            def _event(self, chunk: dict[str, Any]) -> None:
                data = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0,
                        "model": fake.requests[-1].get("model", "fake") if fake.requests else "fake", **chunk}
                self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *args: Any) -> None:
        self.server.shutdown()
        self.server.server_close()

    def user_prompts(self) -> Iterator[str]:
        for request in self.requests:
            yield "\n".join(m["content"] for m in request["messages"] if m["role"] == "user")


def _split(text: str, pieces: int) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // max(1, pieces)))
    return [text[i : i + size] for i in range(0, len(text), size)]


def cell(explanation: str, code: str) -> str:
    return json.dumps({"explanation": explanation, "code": code})


def plan(*steps: tuple[str, list[str]]) -> str:
    return json.dumps({
        "title": "Sales by region",
        "stages": [{"name": "Analysis", "steps": [
            {"name": name, "goal": f"Compute {name}", "expected_variables": expected} for name, expected in steps
        ]}],
    })
