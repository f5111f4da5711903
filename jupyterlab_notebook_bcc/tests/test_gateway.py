"""The proxy to a gateway kernel's websocket (`jupyterlab_notebook_bcc.gateway`), against a stand-in gateway
that holds each websocket handshake until the test lets it through (as a gateway does while the kernel
starts)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from jupyter_server.gateway.connections import GatewayWebSocketConnection as ServerGatewayWebSocketConnection
from jupyter_server.gateway.gateway_client import GatewayClient
from tornado import web, websocket
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets
from traitlets import Unicode
from traitlets.config import LoggingConfigurable

from jupyterlab_notebook_bcc.gateway import GatewayWebSocketConnection


class StandInGateway:
    """A kernel's channels endpoint that records its websockets and what they receive."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.opened = 0
        self.closed = 0
        self.received: list[str] = []


class Channels(websocket.WebSocketHandler):
    def initialize(self, gateway: StandInGateway) -> None:
        self.gateway = gateway

    async def get(self, *args: Any, **kwargs: Any) -> None:
        await self.gateway.release.wait()
        await super().get(*args, **kwargs)

    def open(self, *args: str) -> None:
        self.gateway.opened += 1

    def on_message(self, message: str | bytes) -> None:
        self.gateway.received.append(str(message))

    def on_close(self) -> None:
        self.gateway.closed += 1


class KernelManager(LoggingConfigurable):
    kernel_id = Unicode("0b3a9c4e-5d6f-4a1b-8c2d-3e4f5a6b7c8d")


@pytest.fixture
def gateway(io_loop: Any) -> Iterator[StandInGateway]:
    stand_in = StandInGateway()
    app = web.Application([(r"/api/kernels/[^/]+/channels", Channels, {"gateway": stand_in})])
    sockets = bind_sockets(0, "127.0.0.1")
    server = HTTPServer(app)
    server.add_sockets(sockets)
    port = sockets[0].getsockname()[1]
    client = GatewayClient.instance()
    client.url = f"http://127.0.0.1:{port}"
    client.ws_url = f"ws://127.0.0.1:{port}"
    yield stand_in
    server.stop()
    GatewayClient.clear_instance()


async def until(condition: Any, seconds: float = 5.0) -> bool:
    for _ in range(int(seconds / 0.05)):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return condition()


def connection(cls: type[ServerGatewayWebSocketConnection]) -> ServerGatewayWebSocketConnection:
    proxy = cls(parent=KernelManager())
    proxy.session.session = "the-notebooks-session"
    return proxy


async def test_jupyter_servers_proxy_leaves_the_gateway_websocket_open(gateway: StandInGateway) -> None:
    """The cause: the browser leaves while the proxy connects, and the gateway's websocket stays open."""
    proxy = connection(ServerGatewayWebSocketConnection)
    await proxy.connect()
    proxy.disconnect()
    gateway.release.set()
    assert await until(lambda: gateway.opened == 1)
    await asyncio.sleep(1)
    assert gateway.closed == 0


async def test_the_gateway_websocket_opened_after_the_browser_left_is_closed(gateway: StandInGateway) -> None:
    proxy = connection(GatewayWebSocketConnection)
    await proxy.connect()
    # The browser's first message waits for the gateway websocket; it goes with the browser.
    proxy.handle_incoming_message('{"channel": "shell"}')
    proxy.disconnect()
    gateway.release.set()
    assert await until(lambda: gateway.opened == 1)
    assert await until(lambda: gateway.closed == 1)
    await asyncio.sleep(0.2)
    assert gateway.received == []
    assert proxy.ws is None


async def test_an_open_gateway_websocket_carries_messages_and_closes_with_the_browser(
    gateway: StandInGateway,
) -> None:
    gateway.release.set()
    proxy = connection(GatewayWebSocketConnection)
    await proxy.connect()
    assert await until(lambda: proxy.ws is not None)
    proxy.handle_incoming_message('{"channel": "shell"}')
    assert await until(lambda: gateway.received == ['{"channel": "shell"}'])
    proxy.disconnect()
    assert await until(lambda: gateway.closed == 1)
