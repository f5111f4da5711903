"""Kernel websockets to a Kernel or Enterprise Gateway that do not outlive the browser's.

jupyter_server's ``GatewayWebSocketConnection`` opens its own websocket to the gateway for each browser
websocket. When the browser closes its websocket while that one is still connecting, jupyter_server
cancels the connect future, which does not stop tornado's handshake: the gateway websocket opens anyway
and is never closed. JupyterLab does this each time a notebook connects to a kernel through a gateway
(its first websocket asks for a subprotocol that jupyter_server's gateway proxy does not select, so the
browser drops it and connects again without one). The gateway is then left with a second connection
under the notebook's session id, whose ZMQ sockets share the notebook's identity; after a restart, the
kernel often answers that stale connection instead of the notebook's, and the notebook runs nothing.

Enable with ``--ServerApp.kernel_websocket_connection_class=jupyterlab_notebook_bcc.gateway.GatewayWebSocketConnection``
(see the README, "Remote kernels").
"""

from __future__ import annotations

from typing import Any

from jupyter_server.gateway.connections import GatewayWebSocketConnection as ServerGatewayWebSocketConnection


class GatewayWebSocketConnection(ServerGatewayWebSocketConnection):
    """jupyter_server's proxy to a gateway kernel, which closes a gateway websocket that opens after the
    browser's has gone."""

    def disconnect(self) -> None:
        pending = self.ws is None and self.ws_future is not None and not self.ws_future.done()
        if pending:
            # Cancelling the future would leave the handshake going on: close the websocket it opens.
            self.disconnected = True
            self.ws_future.add_done_callback(_close_opened)
            self.log.debug("Kernel %s: the gateway websocket will be closed once open", self.kernel_id)
            return
        super().disconnect()

    def handle_incoming_message(self, message: str) -> None:
        # A message the browser sent before it left waits for the connection: it is dropped with it.
        if not self.disconnected:
            super().handle_incoming_message(message)


def _close_opened(future: Any) -> None:
    if not future.cancelled() and future.exception() is None:
        future.result().close()
