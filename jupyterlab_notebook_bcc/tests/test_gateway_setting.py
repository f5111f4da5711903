"""With a gateway configured, the server extension proxies kernel websockets with its own class
(`jupyterlab_notebook_bcc.gateway`), unless told not to or another class was chosen."""

from __future__ import annotations

from typing import Any

import pytest
from jupyter_server.gateway.connections import GatewayWebSocketConnection as ServerDefault
from jupyter_server.gateway.gateway_client import GatewayClient
from jupyter_server.services.kernels.connection.channels import ZMQChannelsWebsocketConnection

from jupyterlab_notebook_bcc.gateway import GatewayWebSocketConnection


@pytest.fixture(autouse=True)
def _fresh_gateway_client() -> Any:
    GatewayClient.clear_instance()
    yield
    GatewayClient.clear_instance()


def server_config(gateway: bool, **bcc: Any) -> dict[str, Any]:
    config: dict[str, Any] = {
        "ServerApp": {"jpserver_extensions": {"jupyterlab_notebook_bcc": True}},
        "NotebookBCC": bcc,
    }
    if gateway:
        # Nothing listens there: the server does not ask its gateway anything until a kernel is used.
        config["GatewayClient"] = {"url": "http://127.0.0.1:9"}
    return config


class TestWithAGateway:
    @pytest.fixture
    def jp_server_config(self) -> dict[str, Any]:
        return server_config(gateway=True)

    def test_kernel_websockets_go_through_the_extensions_class(self, jp_serverapp: Any) -> None:
        assert jp_serverapp.gateway_config.gateway_enabled
        assert jp_serverapp.web_app.settings["kernel_websocket_connection_class"] is GatewayWebSocketConnection
        assert issubclass(GatewayWebSocketConnection, ServerDefault)


class TestWithAGatewayTurnedOff:
    @pytest.fixture
    def jp_server_config(self) -> dict[str, Any]:
        return server_config(gateway=True, gateway_websockets=False)

    def test_jupyter_servers_class_stays(self, jp_serverapp: Any) -> None:
        assert jp_serverapp.web_app.settings["kernel_websocket_connection_class"] is ServerDefault


class TestWithoutAGateway:
    @pytest.fixture
    def jp_server_config(self) -> dict[str, Any]:
        return server_config(gateway=False)

    def test_local_kernels_keep_their_class(self, jp_serverapp: Any) -> None:
        assert jp_serverapp.web_app.settings["kernel_websocket_connection_class"] is ZMQChannelsWebsocketConnection
