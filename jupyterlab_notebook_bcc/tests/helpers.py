"""Planner stand-ins and a raw HTTP client for the relay tests."""

from __future__ import annotations

import asyncio
import json
import select
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class PlannerProcess:
    url: str
    process: subprocess.Popen[str]
    log: list[str] = field(default_factory=list)

    def wait_for_log(self, pattern: str, timeout: float = 10.0) -> str:
        """Blocks: call it through `run_in_executor` while the Jupyter server shares the event loop."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.log):
                if pattern in line:
                    return line
            time.sleep(0.02)
        raise AssertionError(f"planner never logged {pattern!r}; log: {self.log}")


@dataclass
class Received:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class Exchange:
    """What a script uses to answer one request: chunked writes, and a way to see the client leave."""

    def __init__(self, handler: BaseHTTPRequestHandler, received: Received) -> None:
        self.handler = handler
        self.received = received

    def start(self, status: int = 200, headers: dict[str, str] | None = None) -> None:
        self.handler.send_response(status)
        for name, value in (headers or {"Content-Type": "application/x-ndjson"}).items():
            self.handler.send_header(name, value)
        self.handler.send_header("Transfer-Encoding", "chunked")
        self.handler.end_headers()
        self.handler.wfile.flush()

    def write(self, data: bytes) -> None:
        self.handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.handler.wfile.flush()

    def end(self) -> None:
        self.handler.wfile.write(b"0\r\n\r\n")
        self.handler.wfile.flush()

    def wait_for_disconnect(self, timeout: float) -> bool:
        """True as soon as the client closes the connection (without this server writing anything)."""
        sock = self.handler.connection
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            readable, _, _ = select.select([sock], [], [], 0.02)
            if readable:
                try:
                    if sock.recv(1, socket.MSG_PEEK) == b"":
                        return True
                except OSError:
                    return True
        return False


Script = Callable[[Exchange], None]


@dataclass
class ScriptedPlanner:
    url: str
    received: list[Received] = field(default_factory=list)
    disconnected: threading.Event = field(default_factory=threading.Event)
    errors: list[BaseException] = field(default_factory=list)


# --- a raw client, to see chunks arrive and to hang up mid-answer -----------------------------------


async def open_relay_request(
    url: str, method: str, headers: dict[str, str], body: bytes = b""
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Sends a request over a plain socket; the caller reads the raw answer and closes when it likes."""
    parts = urlsplit(url)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    lines = [f"{method} {parts.path} HTTP/1.1", f"Host: {parts.netloc}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)
    await writer.drain()
    return reader, writer


async def read_until(reader: asyncio.StreamReader, marker: bytes, timeout: float = 10.0) -> bytes:
    data = b""
    deadline = time.monotonic() + timeout
    while marker not in data:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"{marker!r} never arrived; got {data!r}")
        chunk = await asyncio.wait_for(reader.read(65536), left)
        if not chunk:
            raise AssertionError(f"connection closed before {marker!r}; got {data!r}")
        data += chunk
    return data


def planning_body() -> bytes:
    """A /planning request the reference planner accepts."""
    return json.dumps(
        {
            "observation": {
                "location": {
                    "current": {
                        "stage_id": None,
                        "step_id": None,
                        "behavior_id": None,
                        "behavior_iteration": 0,
                    }
                },
                "context": {
                    "variables": {
                        "problem_description": "Explore housing.csv",
                        "csv_file_path": "data/housing.csv",
                    },
                    "effects": {"current": [], "history": []},
                },
            },
            "options": {"stream": False},
        }
    ).encode()


def generating_body() -> bytes:
    """A streamed /generating request for the first step of the reference planner's workflow."""
    body = json.loads(planning_body())
    body["observation"]["location"]["current"].update(
        stage_id="data_loading",
        step_id="load_data",
        behavior_id="behavior_001",
        behavior_iteration=1,
    )
    body["options"] = {"stream": True}
    return json.dumps(body).encode()


class Network:
    """The stubbed resolver and the record of every connection attempt, for tests that prove a refusal comes
    before any connection. The test's own requests to the Jupyter server (`jupyter_port`) are not recorded."""

    def __init__(self, jupyter_port: int) -> None:
        self.jupyter_port = jupyter_port
        self.names: dict[str, list[list[str]]] = {}
        self.lookups: list[str] = []
        self.connects: list[str] = []

    def answer(self, name: str, *answers: list[str]) -> None:
        """`name` resolves to each list of addresses in turn (the last one again once they run out)."""
        self.names[name] = list(answers)
