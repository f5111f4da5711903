"""The proxy to a gateway kernel's websocket (`jupyterlab_notebook_bcc.gateway`), against a stand-in gateway
that holds each websocket handshake until the test lets it through (as a gateway does while the kernel
starts)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from jupyter_server.gateway.connections import GatewayWebSocketConnection as ServerGatewayWebSocketConnection
from jupyter_server.gateway.gateway_client import GatewayClient
from tornado import web, websocket
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets
from traitlets import Unicode
from traitlets.config import LoggingConfigurable

from jupyterlab_notebook_bcc import gateway as module
from jupyterlab_notebook_bcc.gateway import GatewayWebSocketConnection

SHELL = '{"channel": "shell", "n": %d}'


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
def gateway(io_loop: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[StandInGateway]:
    monkeypatch.setattr(module, "OPEN_AFTER_S", 0.3)
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


async def until(condition: Callable[[], bool], seconds: float = 5.0) -> bool:
    for _ in range(int(seconds / 0.05)):
        if condition():
            return True
        await asyncio.sleep(0.05)
    return condition()


def proxy(cls: type[ServerGatewayWebSocketConnection]) -> ServerGatewayWebSocketConnection:
    connection = cls(parent=KernelManager())
    connection.session.session = "the-notebooks-session"
    return connection


async def test_jupyter_servers_proxy_leaves_a_gateway_websocket_open_when_the_browser_leaves_at_once(
    gateway: StandInGateway,
) -> None:
    """The cause: the browser drops its websocket at once, and the gateway's stays open."""
    connection = proxy(ServerGatewayWebSocketConnection)
    await connection.connect()
    connection.disconnect()
    gateway.release.set()
    assert await until(lambda: gateway.opened == 1)
    await asyncio.sleep(1)
    assert gateway.closed == 0


async def test_a_browser_websocket_dropped_at_once_opens_none_on_the_gateway(gateway: StandInGateway) -> None:
    gateway.release.set()
    connection = proxy(GatewayWebSocketConnection)
    await connection.connect()
    connection.disconnect()
    await asyncio.sleep(1)
    assert gateway.opened == 0
    assert connection.ws is None


async def test_the_first_message_opens_the_gateway_websocket_and_goes_through_in_order(
    gateway: StandInGateway,
) -> None:
    gateway.release.set()
    connection = proxy(GatewayWebSocketConnection)
    await connection.connect()
    for n in range(3):
        connection.handle_incoming_message(SHELL % n)
    assert await until(lambda: len(gateway.received) == 3)
    assert gateway.received == [SHELL % n for n in range(3)]
    assert gateway.opened == 1
    connection.disconnect()
    assert await until(lambda: gateway.closed == 1)


async def test_a_browser_that_sends_nothing_gets_its_gateway_websocket_after_a_while(
    gateway: StandInGateway,
) -> None:
    gateway.release.set()
    connection = proxy(GatewayWebSocketConnection)
    await connection.connect()
    assert await until(lambda: gateway.opened == 1)
    assert await until(lambda: connection.ws is not None)
    connection.handle_incoming_message(SHELL % 0)
    assert await until(lambda: gateway.received == [SHELL % 0])


async def test_a_gateway_websocket_that_opens_after_the_browser_left_is_closed(gateway: StandInGateway) -> None:
    connection = proxy(GatewayWebSocketConnection)
    await connection.connect()
    # The browser's message waits for the gateway's handshake, held by the gateway; then the browser leaves.
    connection.handle_incoming_message(SHELL % 0)
    assert await until(lambda: connection.ws_future is not None)
    connection.disconnect()
    gateway.release.set()
    assert await until(lambda: gateway.opened == 1)
    assert await until(lambda: gateway.closed == 1)
    await asyncio.sleep(0.2)
    assert gateway.received == []
