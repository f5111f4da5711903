"""A stand-in for JupyterHub's REST API on loopback: `GET /hub/api/user` answers who owns the request's token,
as the Hub does (403 for a token it does not know). The real Hub is tested in ui-tests/tests/hub.spec.ts."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeHub:
    def __init__(
        self, tokens: dict[str, str], kinds: dict[str, str] | None = None, scopes: dict[str, list[str]] | None = None
    ) -> None:
        # token -> user name; a token's kind is "user" unless `kinds` says otherwise ("service"); its scopes
        # are `scopes`' (none unless given).
        self.tokens = dict(tokens)
        self.kinds = dict(kinds or {})
        self.scopes = dict(scopes or {})
        self.requests: list[str] = []
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                authorization = self.headers.get("Authorization", "")
                hub.requests.append(authorization)
                scheme, _, token = authorization.partition(" ")
                name = hub.tokens.get(token) if scheme.lower() in ("token", "bearer") else None
                if self.path != "/hub/api/user" or name is None:
                    self._send(403, {"status": 403, "message": "Missing or invalid credentials."})
                    return
                kind = hub.kinds.get(token, "user")
                self._send(200, {"kind": kind, "name": name, "scopes": hub.scopes.get(token, [])})

            def _send(self, status: int, value: dict[str, Any]) -> None:
                body = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.api_url = f"http://127.0.0.1:{self.server.server_address[1]}/hub/api"

    def __enter__(self) -> FakeHub:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *args: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
