"""A real Jupyter server with the relay enabled, and two kinds of planner behind it:

- `start_planner`: the reference planner service
  (`referencePlannerService/lib/referencePlannerService/src/main.js`), a real Node process;
- `scripted_planner`: a small Python HTTP/1.1 server in a thread, for what the reference planner cannot
  do on cue (hold a stream until the test has seen a line, think silently, record exact headers).
"""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from .helpers import Exchange, PlannerProcess, Received, Script, ScriptedPlanner, free_port

pytest_plugins = ["pytest_jupyter.jupyter_server"]

REPO_ROOT = Path(__file__).resolve().parents[2]
PLANNER_MAIN = REPO_ROOT / "referencePlannerService" / "lib" / "referencePlannerService" / "src" / "main.js"


@pytest.fixture
def bcc_server_config() -> dict[str, Any]:
    """`c.NotebookBCC` for the test's server; classes override it to point at their planner."""
    return {}


@pytest.fixture
def jp_server_config(bcc_server_config: dict[str, Any]) -> dict[str, Any]:
    return {
        "ServerApp": {"jpserver_extensions": {"jupyterlab_notebook_bcc": True}},
        "NotebookBCC": bcc_server_config,
    }


@pytest.fixture(autouse=True)
def _no_planner_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's own planner settings must not leak into the tests.
    for name in ("NOTEBOOK_BCC_PLANNER_URL", "NOTEBOOK_BCC_PLANNER_TOKEN", "JUPYTERLAB_SETTINGS_DIR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def relay_url(jp_serverapp: Any, http_server_client: Any, jp_base_url: str) -> Callable[[str], str]:
    """The absolute relay URL of a planner path, for clients that read the stream themselves."""
    return lambda path: http_server_client.get_url(f"{jp_base_url}notebook-bcc/relay/{path}")


# --- the reference planner --------------------------------------------------------------------------


@pytest.fixture
def start_planner() -> Iterator[Callable[..., PlannerProcess]]:
    """Starts `node <PLANNER_MAIN> --port <free> ARGS...` and waits until it listens."""
    started: list[PlannerProcess] = []
    node = shutil.which("node")
    if node is None or not PLANNER_MAIN.exists():
        pytest.fail(f"the reference planner needs node and {PLANNER_MAIN} (run `make build` first)")

    def start(*args: str) -> PlannerProcess:
        port = free_port()
        process = subprocess.Popen(
            [node, str(PLANNER_MAIN), "--port", str(port), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        planner = PlannerProcess(f"http://127.0.0.1:{port}", process)
        started.append(planner)
        listening = threading.Event()

        def read() -> None:
            assert process.stdout is not None
            for line in process.stdout:
                planner.log.append(line.rstrip("\n"))
                if "listening on" in line:
                    listening.set()

        threading.Thread(target=read, daemon=True).start()
        if not listening.wait(15):
            process.kill()
            raise AssertionError(f"planner did not start: {planner.log}")
        return planner

    yield start
    for planner in started:
        planner.process.terminate()
        try:
            planner.process.wait(5)
        except subprocess.TimeoutExpired:
            planner.process.kill()


# --- a scripted planner stand-in --------------------------------------------------------------------


@pytest.fixture
def scripted_planner() -> Iterator[Callable[[Script], ScriptedPlanner]]:
    """A threaded HTTP/1.1 server that answers every request with `script(exchange)`."""
    servers: list[ThreadingHTTPServer] = []

    def start(script: Script) -> ScriptedPlanner:
        planner: ScriptedPlanner

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                received = Received(
                    self.command, self.path, dict(self.headers.items()), self.rfile.read(length)
                )
                planner.received.append(received)
                self.close_connection = True
                try:
                    script(Exchange(self, received))
                except (BrokenPipeError, ConnectionResetError):
                    planner.disconnected.set()
                except BaseException as error:
                    planner.errors.append(error)

            do_GET = _answer
            do_POST = _answer

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        servers.append(server)
        planner = ScriptedPlanner(f"http://127.0.0.1:{server.server_address[1]}")
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return planner

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


