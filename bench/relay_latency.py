"""The relay's added latency per streamed line: the same NDJSON stream read directly and through the relay.

A local streaming server writes one line every --interval ms, each stamped with its send time; a real Jupyter
server (a separate process, with the extension) relays it. For every line the client records arrival minus send
time; the relay's cost is the relayed figure minus the direct one, at p50 and p95. Rounds alternate direct and
relayed so both see the same machine load.

    python bench/relay_latency.py [--lines 200] [--rounds 5] [--interval 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_streaming_server(lines: int, interval_s: float, padding: int) -> ThreadingHTTPServer:
    """Answers any POST with `lines` NDJSON lines, one per interval, each carrying its send time."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            pad = "x" * padding
            for index in range(lines):
                time.sleep(interval_s)
                line = json.dumps({"i": index, "sent_ns": time.monotonic_ns(), "pad": pad}).encode() + b"\n"
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            self.close_connection = True

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_jupyter(planner_url: str, port: int, token: str, workdir: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")])),
        "NOTEBOOK_BCC_PLANNER_URL": planner_url,
        "JUPYTER_CONFIG_DIR": str(workdir / "config"),
        "JUPYTER_RUNTIME_DIR": str(workdir / "runtime"),
    }
    args = [
        sys.executable,
        "-m",
        "jupyter_server",
        f"--port={port}",
        "--ip=127.0.0.1",
        "--no-browser",
        f"--IdentityProvider.token={token}",
        "--ServerApp.jpserver_extensions={'jupyterlab_notebook_bcc': True}",
        f"--ServerApp.root_dir={workdir}",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.append("--allow-root")
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            connection.request("GET", "/notebook-bcc/config", headers={"Authorization": f"token {token}"})
            if connection.getresponse().status == 200:
                return process
        except OSError:
            pass
        time.sleep(0.2)
    process.kill()
    raise SystemExit("the Jupyter server with the relay did not start within 60 s")


def read_stream(port: int, path: str, headers: dict[str, str]) -> list[float]:
    """Milliseconds from each line's send to its arrival here."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("POST", path, body=b"{}", headers={"Content-Type": "application/json", **headers})
    response = connection.getresponse()
    if response.status != 200:
        raise SystemExit(f"{path}: HTTP {response.status} {response.read()[:200]!r}")
    delays = []
    while True:
        line = response.readline()
        if not line:
            break
        arrived = time.monotonic_ns()
        delays.append((arrived - json.loads(line)["sent_ns"]) / 1e6)
    connection.close()
    return delays


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=200, help="lines per stream")
    parser.add_argument("--rounds", type=int, default=5, help="streams per mode, alternating")
    parser.add_argument("--interval", type=float, default=5.0, help="ms between lines")
    parser.add_argument("--padding", type=int, default=200, help="bytes of padding per line")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    options = parser.parse_args()

    planner = start_streaming_server(options.lines, options.interval / 1000, options.padding)
    planner_port = planner.server_address[1]
    token = secrets.token_hex(16)
    jupyter_port = free_port()
    with tempfile.TemporaryDirectory(prefix="bcc-relay-bench-") as tmp:
        jupyter = start_jupyter(f"http://127.0.0.1:{planner_port}", jupyter_port, token, Path(tmp))
        try:
            direct: list[float] = []
            relayed: list[float] = []
            read_stream(planner_port, "/generating", {})  # warm-up: first-connection costs are not per line
            read_stream(jupyter_port, "/notebook-bcc/relay/generating", {"Authorization": f"token {token}"})
            for _ in range(options.rounds):
                direct += read_stream(planner_port, "/generating", {})
                relayed += read_stream(
                    jupyter_port, "/notebook-bcc/relay/generating", {"Authorization": f"token {token}"}
                )
        finally:
            jupyter.terminate()
            jupyter.wait(10)
            planner.shutdown()

    figures = {
        "lines_per_mode": len(direct),
        "interval_ms": options.interval,
        "direct_ms": {"p50": percentile(direct, 0.5), "p95": percentile(direct, 0.95)},
        "relayed_ms": {"p50": percentile(relayed, 0.5), "p95": percentile(relayed, 0.95)},
    }
    figures["added_ms"] = {
        key: figures["relayed_ms"][key] - figures["direct_ms"][key] for key in ("p50", "p95")
    }
    figures["relayed_mean_ms"] = statistics.fmean(relayed)
    figures["direct_mean_ms"] = statistics.fmean(direct)
    print(f"Relay latency per streamed line ({len(direct)} lines per mode, one every {options.interval:g} ms)")
    print(f"  direct   p50 {figures['direct_ms']['p50']:7.3f} ms   p95 {figures['direct_ms']['p95']:7.3f} ms")
    print(f"  relayed  p50 {figures['relayed_ms']['p50']:7.3f} ms   p95 {figures['relayed_ms']['p95']:7.3f} ms")
    print(f"  added    p50 {figures['added_ms']['p50']:7.3f} ms   p95 {figures['added_ms']['p95']:7.3f} ms")
    if options.json:
        options.json.parent.mkdir(parents=True, exist_ok=True)
        options.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
