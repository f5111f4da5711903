"""An administrator's model key in a user's own Jupyter server (a JupyterHub single-user server) is readable
by that user's kernels: the server says so at start, and points to the shared planner (docs/hub.md)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

KEY = "sk-admin-key-in-a-user-server"


@pytest.fixture
def hub_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # What JupyterHub gives every single-user server it spawns.
    monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "hub-token-of-alice")
    monkeypatch.setenv("JUPYTERHUB_SERVICE_PREFIX", "/user/alice/")


class _Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@pytest.fixture
def server_log() -> Iterator[_Kept]:
    """The Jupyter server's warnings from its start on (the LLM planner's logger)."""
    kept = _Kept()
    logger = logging.getLogger("notebook_bcc.llm_planner")
    logger.addHandler(kept)
    yield kept
    logger.removeHandler(kept)


def _warnings(log: _Kept) -> list[str]:
    return [message for message in log.messages if "api_key" in message]


class TestUnderAHub:
    @pytest.fixture
    def jp_server_config(self, hub_env: None, server_log: _Kept) -> dict[str, Any]:
        return {
            "ServerApp": {"jpserver_extensions": {"jupyterlab_notebook_bcc": True}},
            "LLMPlanner": {"base_url": "http://127.0.0.1:9/v1", "models": ["small"], "api_key": KEY},
        }

    async def test_the_server_warns_that_the_users_kernels_can_read_the_key(
        self, jp_serverapp: Any, server_log: _Kept
    ) -> None:
        assert jp_serverapp.web_app.settings["notebook_bcc_llm"].configured
        (warning,) = _warnings(server_log)
        assert "kernels can read it" in warning and "/proc/" in warning
        assert "planner_auth = 'hub'" in warning and "docs/hub.md" in warning
        assert KEY not in warning


class TestOutsideAHub:
    @pytest.fixture
    def jp_server_config(self, monkeypatch: pytest.MonkeyPatch, server_log: _Kept) -> dict[str, Any]:
        for name in ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_SERVICE_PREFIX"):
            monkeypatch.delenv(name, raising=False)
        return {
            "ServerApp": {"jpserver_extensions": {"jupyterlab_notebook_bcc": True}},
            "LLMPlanner": {"base_url": "http://127.0.0.1:9/v1", "models": ["small"], "api_key": KEY},
        }

    async def test_a_server_of_ones_own_says_nothing(self, jp_serverapp: Any, server_log: _Kept) -> None:
        assert jp_serverapp.web_app.settings["notebook_bcc_llm"].configured
        assert _warnings(server_log) == []


class TestUnderAHubWithoutAKey:
    @pytest.fixture
    def jp_server_config(self, hub_env: None, server_log: _Kept) -> dict[str, Any]:
        return {
            "ServerApp": {"jpserver_extensions": {"jupyterlab_notebook_bcc": True}},
            "LLMPlanner": {"base_url": "http://127.0.0.1:9/v1", "models": ["small"]},
        }

    async def test_an_endpoint_without_a_key_says_nothing(self, jp_serverapp: Any, server_log: _Kept) -> None:
        assert jp_serverapp.web_app.settings["notebook_bcc_llm"].configured
        assert _warnings(server_log) == []
