"""The relay on a single-user server under JupyterHub (`c.NotebookBCC.planner_auth = "hub"`): it sends the
server's own Hub API token, so the shared planner knows the user and no secret is shared between users."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from jupyterlab_notebook_bcc.llm_planner import LLMPlanner, LLMPlannerService
from jupyterlab_notebook_bcc.llm_planner.__main__ import make_app
from jupyterlab_notebook_bcc.llm_planner.hub_auth import HubUsers
from jupyterlab_notebook_bcc.llm_planner.planner import Caller

from .fake_hub import FakeHub
from .fake_openai import FakeOpenAI
from .helpers import Exchange, ScriptedPlanner, free_port, planning_body
from .test_hub_planner import TOKENS, script
from .test_llm_planner import KEY

JSON = {"Content-Type": "application/json"}
Fetch = Callable[..., Any]


def answer_empty_json(exchange: Exchange) -> None:
    exchange.start(200, {"Content-Type": "application/json"})
    exchange.write(b"{}")
    exchange.end()


class TestTheUsersOwnToken:
    @pytest.fixture
    def planner(self, scripted_planner: Callable[..., ScriptedPlanner]) -> ScriptedPlanner:
        return scripted_planner(answer_empty_json)

    @pytest.fixture
    def bcc_server_config(self, planner: ScriptedPlanner, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
        # What JupyterHub gives alice's server; an administrator's shared token would be refused here.
        monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "alice-token")
        monkeypatch.setenv("NOTEBOOK_BCC_PLANNER_TOKEN", "shared-secret")
        return {"planner_url": planner.url, "planner_auth": "hub"}

    async def test_the_relay_sends_the_servers_hub_token_and_nothing_shared(
        self, jp_fetch: Fetch, planner: ScriptedPlanner, jp_serverapp: Any
    ) -> None:
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=planning_body(),
                                  headers={**JSON})
        assert response.code == 200
        [received] = planner.received
        assert received.headers["Authorization"] == "token alice-token"
        # What a kernel inherits: the user's own Hub token, not the administrator's planner token.
        assert os.environ.get("JUPYTERHUB_API_TOKEN") == "alice-token"
        assert "NOTEBOOK_BCC_PLANNER_TOKEN" not in os.environ
        assert "shared-secret" not in json.dumps(dict(os.environ))

    async def test_the_config_says_a_token_is_sent_and_never_shows_it(self, jp_fetch: Fetch) -> None:
        public = json.loads((await jp_fetch("notebook-bcc", "config")).body)
        assert public["source"] == "server" and public["token_configured"] is True
        assert "alice-token" not in json.dumps(public)


class TestOutsideAHub:
    @pytest.fixture
    def bcc_server_config(self, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
        monkeypatch.delenv("JUPYTERHUB_API_TOKEN", raising=False)
        return {"planner_url": f"http://127.0.0.1:{free_port()}", "planner_auth": "hub"}

    async def test_hub_auth_without_a_hub_token_is_a_502_that_says_why(self, jp_fetch: Fetch) -> None:
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=planning_body(),
                                  headers={**JSON}, raise_error=False)
        assert response.code == 502
        assert response.headers["X-Notebook-BCC-Relay"] == "relay"
        assert "no JUPYTERHUB_API_TOKEN" in json.loads(response.body)["message"]


class TestThroughToTheSharedPlanner:
    """Relay (alice's server) -> the LLM planner's HTTP service -> the Hub's API: the planner knows alice."""

    @pytest.fixture
    def hub(self) -> Iterator[FakeHub]:
        with FakeHub(TOKENS) as fake:
            yield fake

    @pytest.fixture
    def model(self) -> Iterator[FakeOpenAI]:
        with FakeOpenAI(script) as fake:
            yield fake

    @pytest.fixture
    def shared(self, hub: FakeHub, model: FakeOpenAI) -> Iterator[tuple[str, LLMPlannerService]]:
        service = LLMPlannerService(LLMPlanner(base_url=model.base_url, models=["small"], api_key=KEY))
        port = free_port()
        server = make_app(service, "", HubUsers(hub.api_url)).listen(port, "127.0.0.1")
        yield f"http://127.0.0.1:{port}", service
        server.stop()

    @pytest.fixture
    def bcc_server_config(self, shared: tuple[str, LLMPlannerService], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
        monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "alice-token")
        return {"planner_url": shared[0], "planner_auth": "hub"}

    async def test_the_planner_serves_the_user_whose_server_relays(
        self, jp_fetch: Fetch, shared: tuple[str, LLMPlannerService], hub: FakeHub, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        body = json.dumps({"observation": {"context": {"variables": {"problem_description": "Sum it."}}}}).encode()
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=body,
                                  headers={**JSON, "X-Notebook-Id": "work/a.ipynb"})
        assert response.code == 200
        assert list(shared[1].core.sessions) == [Caller("alice", "work/a.ipynb")]
        assert hub.requests == ["token alice-token"]
        # The load step's behavior, streamed back through the relay.
        load = {"observation": {"location": {"current": {"stage_id": "data_loading", "step_id": "load_data",
                                                         "behavior_iteration": 1}},
                                "context": {"variables": {"csv_file_path": "sales.csv"}}}}
        streamed = await jp_fetch("notebook-bcc", "relay", "generating", method="POST", body=json.dumps(load).encode(),
                                  headers={**JSON, "X-Notebook-Id": "work/a.ipynb"})
        assert streamed.code == 200
        assert b'pd.read_csv(\\"sales.csv\\")' in streamed.body or b"read_csv" in streamed.body
        # A server whose token the Hub revoked (or never gave) is refused with the planner's own message.
        monkeypatch.setenv("JUPYTERHUB_API_TOKEN", "revoked-token")
        refused = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=body,
                                 headers={**JSON}, raise_error=False)
        assert refused.code == 403
        assert refused.headers["X-Notebook-BCC-Relay"] == "planner"
        assert "JupyterHub does not know this user's token" in json.loads(refused.body)["message"]
