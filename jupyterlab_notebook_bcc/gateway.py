"""Kernel websockets to a Kernel or Enterprise Gateway that never leave a stale one on the gateway.

jupyter_server's ``GatewayWebSocketConnection`` opens its own websocket to the gateway as soon as a
browser websocket opens. Each time a notebook connects to a kernel, JupyterLab's first websocket asks
for a subprotocol that this proxy does not select: the browser drops it at once and connects again
without one. By then the proxy's websocket to the gateway is connecting; cancelling its future does not
stop tornado's handshake, so it opens and is never closed. The gateway then holds two connections under
the notebook's session id, whose ZMQ sockets to the kernel share one identity; the kernel hands that
identity to whichever connected last (ROUTER_HANDOVER), and the other one's requests go unanswered for
good: after a restart, often the notebook's.

This proxy opens its websocket to the gateway only once the browser's has shown it stays: with its first
message (JupyterLab sends one at once), or after ``OPEN_AFTER_S`` without it closing. The server extension
uses it whenever a gateway is configured and jupyter_server's default class is in place
(``extension.use_gateway_websockets``; ``c.NotebookBCC.gateway_websockets = False`` turns it off).
"""

from __future__ import annotations

import asyncio
from typing import Any

from jupyter_server.gateway.connections import GatewayWebSocketConnection as ServerGatewayWebSocketConnection

#: How long a browser websocket that sends nothing waits for its gateway websocket, in seconds.
OPEN_AFTER_S = 1.0


class GatewayWebSocketConnection(ServerGatewayWebSocketConnection):
    """jupyter_server's proxy to a gateway kernel, which opens its gateway websocket once the browser's
    has sent a message or stayed open for a second, and closes one that opens after the browser left."""

    _opening: asyncio.TimerHandle | None = None
    _early: list[str]

    async def connect(self) -> None:
        self._early = []
        self._opening = asyncio.get_running_loop().call_later(OPEN_AFTER_S, self._open)

    def _open(self) -> None:
        if self._opening is None:
            return
        self._opening.cancel()
        self._opening = None
        if not self.disconnected:
            asyncio.ensure_future(self._connect_now())

    async def _connect_now(self) -> None:
        if self.disconnected:
            return
        await super().connect()
        early, self._early = self._early, []
        for message in early:
            super().handle_incoming_message(message)

    def handle_incoming_message(self, message: str) -> None:
        if self.disconnected:
            # A message that waited for the gateway websocket goes with the browser's.
            return
        if self.ws_future is None:
            self._early.append(message)
            self._open()
            return
        super().handle_incoming_message(message)

    def disconnect(self) -> None:
        if self._opening is not None:
            self._opening.cancel()
            self._opening = None
        if self.ws is None and self.ws_future is not None and not self.ws_future.done():
            # Cancelling the future would leave the handshake going on: close the websocket it opens.
            self.disconnected = True
            self.ws_future.add_done_callback(_close_opened)
            return
        super().disconnect()


def _close_opened(future: Any) -> None:
    if not future.cancelled() and future.exception() is None:
        future.result().close()
