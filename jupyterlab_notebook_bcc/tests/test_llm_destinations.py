"""Where the LLM planner's model requests may go (issue #41): every request (a run's, Test's, `GET /models`)
through the relay's destination policy, the administrator's `c.LLMPlanner.allowed_base_urls`, the switch
`c.LLMPlanner.user_settings`, and what an endpoint's answer may bring back to the browser.

Name resolution is stubbed at `socket.getaddrinfo` and every outgoing connection is recorded at
`socket.socket.connect`: an attempt to anything but loopback is recorded and refused there as if nothing
listened, so no test ever connects outside this machine. A refusal is proven to happen before any
connection: `network.connects` stays empty.
"""

from __future__ import annotations

import ipaddress
import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyterlab_notebook_bcc.llm_planner import LLMPlanner, LLMPlannerService
from jupyterlab_notebook_bcc.llm_planner.destinations import DEFAULT_ALLOWED_BASE_URLS, Destinations
from jupyterlab_notebook_bcc.llm_planner.model import ModelError, OpenAIModel
from jupyterlab_notebook_bcc.llm_planner.settings import ModelSettings

from .fake_openai import FakeOpenAI, Reply
from .helpers import Network

Fetch = Callable[..., Any]
KEY = "sk-destinations-0123456789"
METADATA = "169.254.169.254"


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch, jp_http_port: int) -> Network:
    net = Network(jp_http_port)
    real_getaddrinfo = socket.getaddrinfo
    real_connect = socket.socket.connect

    def getaddrinfo(host: Any, port: Any, family: int = 0, type: int = 0, proto: int = 0, flags: int = 0) -> Any:
        name = host.decode() if isinstance(host, bytes) else str(host)
        if name not in net.names:
            return real_getaddrinfo(host, port, family, type, proto, flags)
        net.lookups.append(name)
        answers = net.names[name]
        addresses = answers.pop(0) if len(answers) > 1 else answers[0]
        results = []
        for address in addresses:
            if ":" in address:
                results.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, int(port or 0), 0, 0)))
            else:
                results.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port or 0))))
        return results

    def connect(self: socket.socket, address: Any) -> Any:
        if isinstance(address, tuple):
            host = str(address[0]).split("%", 1)[0]
            if int(address[1]) != net.jupyter_port:
                net.connects.append(host)
            if not ipaddress.ip_address(host).is_loopback:
                # Never leave this machine: an attempt is recorded, then refused as if nothing listened.
                raise ConnectionRefusedError(111, "Connection refused (test: not loopback)")
        return real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy",
                 "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    return net


@pytest.fixture
def llm_config() -> dict[str, Any]:
    """`c.LLMPlanner` for the test's server; classes override it."""
    return {}


@pytest.fixture
def bcc_server_config() -> dict[str, Any]:
    return {}


@pytest.fixture
def jp_server_config(llm_config: dict[str, Any], bcc_server_config: dict[str, Any]) -> dict[str, Any]:
    return {
        "ServerApp": {"jpserver_extensions": {"jupyterlab_notebook_bcc": True}},
        "LLMPlanner": llm_config,
        "NotebookBCC": bcc_server_config,
    }


@pytest.fixture(autouse=True)
def _data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(lambda body: Reply(text="OK"), models=["small"]) as server:
        yield server


async def try_model(jp_fetch: Fetch, base_url: str, model: str = "small") -> tuple[int, dict[str, Any]]:
    response = await jp_fetch("notebook-bcc", "llm", "test", method="POST", raise_error=False,
                              body=json.dumps({"base_url": base_url, "model": model, "api_key": KEY}))
    return int(response.code), json.loads(response.body)


async def save(jp_fetch: Fetch, base_url: str, model: str = "small") -> tuple[int, dict[str, Any]]:
    response = await jp_fetch("notebook-bcc", "llm", "settings", method="PUT", raise_error=False,
                              body=json.dumps({"base_url": base_url, "model": model, "api_key": KEY}))
    return int(response.code), json.loads(response.body)


def port_of(fake: FakeOpenAI) -> int:
    return int(fake.server.server_address[1])


class TestNeverLinkLocal:
    """The issue's probe: Test aimed at the metadata service, by address and by a name that resolves there."""

    @pytest.fixture
    def llm_config(self) -> dict[str, Any]:
        # Even where the administrator allows every host, the resolved address decides.
        return {"allowed_base_urls": ["*"]}

    @pytest.mark.parametrize(
        ("base_url", "names", "shown"),
        [
            (f"http://{METADATA}/v1", {}, "169.254.169.254 is a link-local address"),
            ("http://metadata.example.test/v1", {"metadata.example.test": [METADATA]},
             "metadata.example.test resolves to 169.254.169.254, a link-local address"),
            ("http://[fd00:ec2::254]/v1", {}, "fd00:ec2::254 is a cloud-metadata address"),
            ("http://mixed.example.test:9/v1", {"mixed.example.test": ["127.0.0.1", "fe80::1"]}, "resolves to fe80::1"),
        ],
    )
    async def test_test_is_refused_before_any_connection(
        self, jp_fetch: Fetch, network: Network, base_url: str, names: dict[str, list[str]], shown: str
    ) -> None:
        for name, addresses in names.items():
            network.answer(name, addresses)
        status, tested = await try_model(jp_fetch, base_url)
        assert network.connects == []
        assert status == 200 and tested["ok"] is False
        assert shown in tested["message"]
        assert "no setting allows it" in tested["message"]

    async def test_a_run_of_the_administrators_endpoint_there_is_refused_too(
        self, jp_fetch: Fetch, jp_serverapp: Any, network: Network
    ) -> None:
        network.answer("metadata.example.test", [METADATA])
        service = jp_serverapp.web_app.settings["notebook_bcc_llm"]
        service.config.base_url = "http://metadata.example.test/v1"
        service.config.models = ["small"]
        _status, tested = await try_model(jp_fetch, "ignored")
        assert network.connects == []
        assert tested["ok"] is False and "resolves to 169.254.169.254" in tested["message"]


class TestPrivateAddresses:
    """By default a user's endpoint is loopback or a public https host; a private address needs the
    administrator's pattern."""

    @pytest.mark.parametrize(("base_url", "shown"), [
        ("http://10.0.0.5:8000/v1", "matches none of c.LLMPlanner.allowed_base_urls"),
        ("https://192.168.1.20/v1", "192.168.1.20 is a private address"),
        ("http://llm.example.test:8000/v1", "matches none of c.LLMPlanner.allowed_base_urls"),
    ])
    async def test_a_private_or_unlisted_endpoint_is_refused_without_a_lookup_or_a_connection(
        self, jp_fetch: Fetch, network: Network, base_url: str, shown: str
    ) -> None:
        network.answer("llm.example.test", ["10.0.0.5"])
        status, tested = await try_model(jp_fetch, base_url)
        assert status == 200 and tested["ok"] is False and tested["action"] == "open-llm-settings"
        assert shown in tested["message"] and "c.LLMPlanner.allowed_base_urls" in tested["message"]
        assert network.lookups == [] and network.connects == []
        status, saved = await save(jp_fetch, base_url)
        assert status == 403 and shown in saved["message"]

    async def test_a_public_name_that_resolves_to_a_private_address_is_refused_before_any_connection(
        self, jp_fetch: Fetch, network: Network
    ) -> None:
        network.answer("api.example.test", ["10.0.0.5"])
        status, tested = await try_model(jp_fetch, "https://api.example.test/v1")
        # Looked up by each request (its model list, then its answer), connected by none.
        assert set(network.lookups) == {"api.example.test"}
        assert network.connects == []
        assert status == 200 and tested["ok"] is False
        assert "api.example.test resolves to 10.0.0.5, a private address" in tested["message"]

    async def test_loopback_is_allowed_as_the_relay_allows_it(self, jp_fetch: Fetch, network: Network,
                                                              fake: FakeOpenAI) -> None:
        status, tested = await try_model(jp_fetch, fake.base_url)
        assert status == 200 and tested["ok"] is True
        assert network.connects and set(network.connects) == {"127.0.0.1"}


class TestAdministratorsAllowlist:
    @pytest.fixture
    def llm_config(self) -> dict[str, Any]:
        return {"allowed_base_urls": ["http://10.0.0.0/8:8000"]}

    async def test_a_listed_network_is_allowed_and_loopback_no_longer(self, jp_fetch: Fetch, network: Network,
                                                                      fake: FakeOpenAI) -> None:
        status, saved = await save(jp_fetch, fake.base_url)
        assert status == 403 and "matches none of c.LLMPlanner.allowed_base_urls ('http://10.0.0.0/8:8000')" in (
            saved["message"])
        assert fake.requests == []
        status, saved = await save(jp_fetch, "http://10.1.2.3:8000/v1")
        assert status == 200
        # Allowed: the test then connects to the listed address (the stub refuses it, as nothing listens).
        status, tested = await try_model(jp_fetch, "http://10.1.2.3:8000/v1")
        assert tested["ok"] is False and "connection refused" in tested["message"]
        assert set(network.connects) == {"10.1.2.3"}


class TestDnsRebinding:
    @pytest.fixture
    def llm_config(self) -> dict[str, Any]:
        return {"allowed_base_urls": ["*"]}

    async def test_a_name_that_moves_to_the_metadata_address_is_refused_there(
        self, jp_fetch: Fetch, network: Network
    ) -> None:
        with FakeOpenAI(lambda body: Reply(text="OK"), models=["small"]) as fake:
            # Test's first request (its model list) finds loopback, its second the metadata address.
            network.answer("rebind.example.test", ["127.0.0.1"], [METADATA])
            _status, tested = await try_model(jp_fetch, f"http://rebind.example.test:{port_of(fake)}/v1")
        assert tested["ok"] is False and "resolves to 169.254.169.254" in tested["message"]
        assert tested["models"] == ["small"]
        assert network.connects == ["127.0.0.1"]

    async def test_a_request_goes_to_the_address_checked_and_its_name_is_resolved_once(
        self, network: Network
    ) -> None:
        with FakeOpenAI(lambda body: Reply(text="OK")) as fake:
            network.answer("rebind.example.test", ["127.0.0.1"], [METADATA])
            settings = ModelSettings(f"http://rebind.example.test:{port_of(fake)}/v1", ("small",), "user")
            model = OpenAIModel(settings, "small", destinations=Destinations(("*",)))
            completion = await model.complete([{"role": "user", "content": "Reply OK."}], None)
        assert completion.text == "OK"
        assert network.lookups == ["rebind.example.test"]
        assert network.connects == ["127.0.0.1"]
        # The endpoint still sees the name it was asked by.
        assert fake.headers[-1]["host"] == f"rebind.example.test:{port_of(fake)}"


class TestNoRedirectNoProxy:
    async def test_a_redirect_is_not_followed(self, jp_fetch: Fetch, network: Network) -> None:
        network.answer("metadata.example.test", [METADATA])
        redirect = Reply(status=307, headers={"Location": "http://metadata.example.test/latest/meta-data"})
        with FakeOpenAI(lambda body: redirect) as fake:
            _status, tested = await try_model(jp_fetch, fake.base_url)
        assert tested["ok"] is False
        assert network.lookups == [] and set(network.connects) == {"127.0.0.1"}
        assert "redirect" in tested["message"] and "HTTP 307" in tested["message"]

    async def test_proxy_variables_are_not_honoured(self, jp_fetch: Fetch, network: Network,
                                                    monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI) -> None:
        network.answer("proxy.example.test", ["10.9.9.9"])
        for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY"):
            monkeypatch.setenv(name, "http://proxy.example.test:3128")
        _status, tested = await try_model(jp_fetch, fake.base_url)
        assert tested["ok"] is True, tested
        assert network.lookups == [] and set(network.connects) == {"127.0.0.1"}


class TestUserSettingsSwitch:
    @pytest.fixture
    def llm_config(self) -> dict[str, Any]:
        return {"user_settings": False}

    async def test_settings_and_test_are_refused_in_words_and_a_stored_file_is_not_used(
        self, jp_fetch: Fetch, _data_dir: Path, fake: FakeOpenAI
    ) -> None:
        (_data_dir / "notebook_bcc").mkdir(parents=True)
        (_data_dir / "notebook_bcc" / "llm_planner.json").write_text(
            json.dumps({"base_url": fake.base_url, "models": ["small"]}), encoding="utf-8")
        status, saved = await save(jp_fetch, fake.base_url)
        assert status == 403
        assert saved["message"].startswith("Your administrator turned off LLM settings of your own on this server")
        assert "c.LLMPlanner.user_settings" in saved["message"]
        deleted = await jp_fetch("notebook-bcc", "llm", "settings", method="DELETE", raise_error=False)
        assert deleted.code == 403
        status, tested = await try_model(jp_fetch, fake.base_url)
        assert status == 403 and "c.LLMPlanner.user_settings" in tested["message"]
        assert fake.requests == []
        config = json.loads((await jp_fetch("notebook-bcc", "config")).body)
        assert config["source"] == "default" and "llm" not in config


class TestAdministratorsPlanner:
    """The issue's probe: the administrator pinned planner_url and allowed no user planner URL."""

    @pytest.fixture
    def bcc_server_config(self) -> dict[str, Any]:
        return {"planner_url": "http://127.0.0.1:9", "allowed_planner_urls": []}

    async def test_a_users_llm_settings_and_test_send_nothing(self, jp_fetch: Fetch, fake: FakeOpenAI) -> None:
        status, tested = await try_model(jp_fetch, fake.base_url)
        assert status == 403 and "c.NotebookBCC.planner_url" in tested["message"]
        status, _saved = await save(jp_fetch, fake.base_url)
        assert status == 403
        assert fake.requests == [] and fake.headers == []


class TestWhatComesBack:
    """An endpoint's answer reaches the browser as its status and a short message, never the key, a URL's
    userinfo or its query string."""

    async def test_a_long_message_is_cut_and_carries_no_key_userinfo_or_query(self, jp_fetch: Fetch,
                                                                              network: Network) -> None:
        text = (f"Incorrect API key provided: {KEY}. See https://user:hunter2@docs.example.test/keys?token=s3cret "
                + "x" * 600)
        with FakeOpenAI(lambda body: Reply(status=401, error=text)) as fake:
            _status, tested = await try_model(jp_fetch, fake.base_url)
        message = tested["message"]
        assert "Incorrect API key provided" in message
        for secret in (KEY, "hunter2", "s3cret", "token="):
            assert secret not in message
        assert "https://docs.example.test/keys" in message
        assert len(message) < 400

    async def test_a_body_that_is_not_an_error_object_is_not_shown(self, jp_fetch: Fetch, network: Network,
                                                                   scripted_planner: Callable[..., Any]) -> None:
        def html(exchange: Any) -> None:
            exchange.start(502, {"Content-Type": "text/html"})
            exchange.write(b"<html><body>upstream secret-internal-host.corp:8443 failed</body></html>")
            exchange.end()

        endpoint = scripted_planner(html)
        _status, tested = await try_model(jp_fetch, f"{endpoint.url}/v1")
        assert tested["ok"] is False and "HTTP 502" in tested["message"]
        assert "secret-internal-host" not in tested["message"] and "<html>" not in tested["message"]

    async def test_a_base_url_with_userinfo_and_query_is_shown_without_them(self, jp_fetch: Fetch,
                                                                            network: Network) -> None:
        with FakeOpenAI(lambda body: Reply(status=500, error="boom")) as fake:
            url = fake.base_url.replace("http://", "http://ada:pa55word@") + "?api-key=s3cret"
            _status, tested = await try_model(jp_fetch, url)
        assert tested["ok"] is False
        for secret in ("pa55word", "s3cret", "ada:"):
            assert secret not in tested["message"]


class TestARunsRequests:
    """A run's model requests come from the service's model factory (calls.py's door): the same policy."""

    @pytest.mark.parametrize(("allowed", "base_url", "shown"), [
        (["*"], "http://metadata.example.test/v1", "resolves to 169.254.169.254, a link-local address"),
        (list(DEFAULT_ALLOWED_BASE_URLS), "http://10.0.0.5:8000/v1", "matches none of c.LLMPlanner.allowed_base_urls"),
    ])
    async def test_a_refused_endpoint_is_a_403_in_words_before_any_connection(
        self, network: Network, allowed: list[str], base_url: str, shown: str
    ) -> None:
        network.answer("metadata.example.test", [METADATA])
        service = LLMPlannerService(LLMPlanner(allowed_base_urls=allowed))
        client = service._model(ModelSettings(base_url, ("small",), "user", api_key=KEY), "small")
        with pytest.raises(ModelError) as raised:
            await client.complete([{"role": "user", "content": "Plan."}], None)
        assert (raised.value.kind, raised.value.status, raised.value.action) == ("refused", 403, "open-llm-settings")
        assert shown in raised.value.message and KEY not in raised.value.message
        assert network.connects == []
        assert service.active_model_requests == 0
