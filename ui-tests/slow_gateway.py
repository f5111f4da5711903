"""A proxy in front of a Jupyter Kernel Gateway that holds every REST request for a while before forwarding
it, the way a loaded gateway (or one that launches kernels on a cluster) answers, and passes each kernel
message on after a network latency (in order, without limiting the throughput): the `gateway` UI tests'
JupyterLab reaches its kernels through it.

Usage: python slow_gateway.py PORT UPSTREAM_URL DELAY_SECONDS [LATENCY_SECONDS]
"""

from __future__ import annotations

import asyncio
import sys

from tornado import httpclient, ioloop, web, websocket

PORT, UPSTREAM, DELAY = int(sys.argv[1]), sys.argv[2].rstrip("/"), float(sys.argv[3])
LATENCY = float(sys.argv[4]) if len(sys.argv) > 4 else 0.0
HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade"}


class Forward(web.RequestHandler):
    SUPPORTED_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")

    async def _forward(self) -> None:
        await asyncio.sleep(DELAY)
        headers = {k: v for k, v in self.request.headers.get_all() if k.lower() not in HOP_HEADERS}
        body = self.request.body if self.request.method in ("POST", "PUT", "PATCH") else None
        request = httpclient.HTTPRequest(
            UPSTREAM + self.request.uri,
            method=self.request.method,
            headers=headers,
            body=body,
            allow_nonstandard_methods=True,
            request_timeout=300,
        )
        response = await httpclient.AsyncHTTPClient().fetch(request, raise_error=False)
        self.set_status(response.code, response.reason)
        for key, value in response.headers.get_all():
            if key.lower() not in HOP_HEADERS:
                self.set_header(key, value)
        if response.body and response.code != 204:
            self.write(response.body)

    get = post = put = patch = delete = head = options = _forward


class Delayed:
    """Sends each message LATENCY seconds after it arrived, in arrival order."""

    def __init__(self, send) -> None:
        self.queue: asyncio.Queue = asyncio.Queue()
        self.task = asyncio.ensure_future(self._run(send))

    def put(self, message: str | bytes | None) -> None:
        self.queue.put_nowait((asyncio.get_running_loop().time() + LATENCY, message))

    async def _run(self, send) -> None:
        loop = asyncio.get_running_loop()
        while True:
            due, message = await self.queue.get()
            await asyncio.sleep(max(0.0, due - loop.time()))
            await send(message)


class Channels(websocket.WebSocketHandler):
    """A kernel's channels: each message is passed on both ways after LATENCY seconds."""

    chosen: list | None = None

    async def open(self, *args: str) -> None:
        self.down = Delayed(self._to_client)
        self.up = Delayed(self._to_upstream)
        url = "ws" + UPSTREAM[len("http") :] + self.request.uri
        self.upstream = await websocket.websocket_connect(
            url, on_message_callback=self._from_upstream, subprotocols=self.chosen
        )

    def select_subprotocol(self, subprotocols: list) -> str | None:
        # The client's first choice is the one asked of the gateway too.
        self.chosen = subprotocols[:1] or None
        return subprotocols[0] if subprotocols else None

    def _from_upstream(self, message: str | bytes | None) -> None:
        self.down.put(message)

    async def _to_client(self, message: str | bytes | None) -> None:
        if message is None:
            self.close()
        elif self.ws_connection is not None:
            await self.write_message(message, binary=isinstance(message, bytes))

    async def _to_upstream(self, message: str | bytes) -> None:
        await self.upstream.write_message(message, binary=isinstance(message, bytes))

    def on_message(self, message: str | bytes) -> None:
        self.up.put(message)

    def on_close(self) -> None:
        for name in ("up", "down"):
            delayed = getattr(self, name, None)
            if delayed is not None:
                delayed.task.cancel()
        upstream = getattr(self, "upstream", None)
        if upstream is not None:
            upstream.close()


if __name__ == "__main__":
    app = web.Application([(r"/api/kernels/[^/]+/channels", Channels), (r".*", Forward)])
    app.listen(PORT, address="127.0.0.1")
    print(f"slow gateway on http://127.0.0.1:{PORT} -> {UPSTREAM} ({DELAY} s per request, {LATENCY} s per message)", flush=True)
    ioloop.IOLoop.current().start()
