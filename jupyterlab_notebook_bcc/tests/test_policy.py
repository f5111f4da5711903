"""Where the relay may connect (`policy.py`): never to link-local or cloud-metadata addresses, checked on
the address it resolved and then connects to; and for a user's planner URL only where the administrator's
`c.NotebookBCC.allowed_planner_urls` allows.

Name resolution is stubbed at `socket.getaddrinfo` (what both the relay's own resolution and tornado's
resolver call), and every connection attempt is recorded at `IOStream.connect`: an attempt to anything
but loopback is recorded and refused there, so no test ever connects outside this machine.
"""

from __future__ import annotations

import ipaddress
import json
import re
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tornado.iostream import IOStream
from traitlets import TraitError

from jupyterlab_notebook_bcc import policy
from jupyterlab_notebook_bcc.config import NotebookBCC

from .helpers import Exchange, Network, ScriptedPlanner

Fetch = Callable[..., Any]
METADATA = "169.254.169.254"


def write_user_settings(settings_dir: Path, settings: dict[str, Any]) -> None:
    folder = settings_dir / "jupyterlab-notebook-bcc"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plugin.jupyterlab-settings").write_text(json.dumps(settings), encoding="utf-8")


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch, jp_http_port: int) -> Network:
    net = Network(jp_http_port)
    real_getaddrinfo = socket.getaddrinfo
    real_connect = IOStream.connect

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
                results.append((socket.AF_INET6, socket.SOCK_STREAM, 6, "", (address, int(port), 0, 0)))
            else:
                results.append((socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port))))
        return results

    def connect(self: IOStream, address: Any, server_hostname: str | None = None) -> Any:
        host = str(address[0]).split("%", 1)[0]
        if int(address[1]) != net.jupyter_port:
            net.connects.append(host)
        if not ipaddress.ip_address(host).is_loopback:
            # Never leave this machine: an attempt is recorded, then refused as if nothing listened.
            raise ConnectionRefusedError(111, "Connection refused (test: not loopback)")
        return real_connect(self, address, server_hostname)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(IOStream, "connect", connect)
    return net


@pytest.fixture
def local_planner(scripted_planner: Callable[..., ScriptedPlanner]) -> ScriptedPlanner:
    def script(exchange: Exchange) -> None:
        exchange.start(200, {"Content-Type": "application/json"})
        exchange.write(b'{"from": "local planner"}')
        exchange.end()

    return scripted_planner(script)


async def relay_with_user_url(
    jp_fetch: Fetch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_url: str
) -> tuple[int, dict[str, Any]]:
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path))
    write_user_settings(tmp_path, {"baseUrl": base_url})
    response = await jp_fetch(
        "notebook-bcc",
        "relay",
        "planning",
        method="POST",
        body=b"{}",
        headers={"Content-Type": "application/json"},
        raise_error=False,
    )
    return int(response.code), json.loads(response.body)


class TestTheProbe:
    """The issue's probe, on the single-user default (no server config): a user's `baseUrl` pointing at
    another local port, at the metadata address, and at a name that resolves there."""

    async def test_a_user_url_to_another_local_port_is_relayed(
        self,
        jp_fetch: Fetch,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        network: Network,
        local_planner: ScriptedPlanner,
    ) -> None:
        status, body = await relay_with_user_url(jp_fetch, tmp_path, monkeypatch, local_planner.url)
        assert (status, body) == (200, {"from": "local planner"})
        assert network.connects == ["127.0.0.1"]

    async def test_a_user_url_to_the_metadata_address_is_refused_before_any_connection(
        self, jp_fetch: Fetch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, network: Network
    ) -> None:
        status, body = await relay_with_user_url(jp_fetch, tmp_path, monkeypatch, f"http://{METADATA}")
        assert status == 502
        assert network.connects == []
        assert "link-local" in body["message"]
        assert METADATA in body["message"]

    async def test_a_user_url_to_a_name_that_resolves_to_the_metadata_address_is_refused_before_any_connection(
        self, jp_fetch: Fetch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, network: Network
    ) -> None:
        network.answer("metadata.example.test", [METADATA])
        status, body = await relay_with_user_url(jp_fetch, tmp_path, monkeypatch, "http://metadata.example.test:80")
        assert status == 502
        assert network.connects == []
        # Not even looked up: the name is not on the default allowlist (loopback only).
        assert network.lookups == []
        assert "c.NotebookBCC.allowed_planner_urls" in body["message"]


class TestTheProbeWithEveryHostAllowed:
    """The same probe where an administrator allowed every host: only the resolved address can tell."""

    @pytest.fixture
    def bcc_server_config(self) -> dict[str, Any]:
        return {"allowed_planner_urls": ["*"]}

    async def test_a_name_that_resolves_to_the_metadata_address_is_refused_before_any_connection(
        self, jp_fetch: Fetch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, network: Network
    ) -> None:
        network.answer("metadata.example.test", [METADATA])
        status, body = await relay_with_user_url(jp_fetch, tmp_path, monkeypatch, "http://metadata.example.test:80")
        assert status == 502
        assert network.connects == []
        assert network.lookups == ["metadata.example.test"]
        assert body == {
            "message": (
                "Planner at http://metadata.example.test:80 is refused: metadata.example.test resolves to "
                "169.254.169.254, a link-local address (169.254.0.0/16, fe80::/10), where cloud metadata "
                "services answer. The relay never connects to link-local or cloud-metadata addresses, and no "
                "setting allows it: run the planner at another address."
            )
        }


class TestNeverLinkLocal:
    """Whoever set the URL (here the administrator, whose URL the allowlist does not check), a link-local
    or metadata address is refused before any connection, and the refusal says no setting allows it."""

    @pytest.mark.parametrize(
        ("planner_url", "names", "shown"),
        [
            ("http://169.254.169.254", {}, "169.254.169.254 is a link-local address"),
            ("http://[fe80::1]:28600", {}, "fe80::1 is a link-local address"),
            ("http://[fd00:ec2::254]", {}, "fd00:ec2::254 is a cloud-metadata address"),
            ("http://100.100.100.200", {}, "100.100.100.200 is a cloud-metadata address"),
            ("http://[::ffff:169.254.169.254]", {}, "::ffff:169.254.169.254 is a link-local address"),
            ("http://metadata.example.test", {"metadata.example.test": [METADATA]}, "resolves to 169.254.169.254"),
            # One bad address among good ones refuses the name: the connection could go to any of them.
            ("http://mixed.example.test:9", {"mixed.example.test": ["127.0.0.1", "fe80::1"]}, "resolves to fe80::1"),
        ],
    )
    async def test_the_administrators_url_to_a_link_local_address_is_refused_before_any_connection(
        self,
        jp_fetch: Fetch,
        jp_serverapp: Any,
        network: Network,
        planner_url: str,
        names: dict[str, list[str]],
        shown: str,
    ) -> None:
        for name, addresses in names.items():
            network.answer(name, addresses)
        jp_serverapp.web_app.settings["notebook_bcc"].planner_url = planner_url
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}", raise_error=False)
        assert response.code == 502
        assert response.headers["X-Notebook-BCC-Relay"] == "relay"
        message = json.loads(response.body)["message"]
        assert shown in message
        assert "no setting allows it" in message
        assert network.connects == []


class TestDnsRebinding:
    """A name that resolves to loopback when checked and to the metadata address a moment later."""

    @pytest.fixture
    def bcc_server_config(self) -> dict[str, Any]:
        return {"allowed_planner_urls": ["*"]}

    async def test_the_relay_connects_to_the_address_it_checked_and_resolves_only_once(
        self,
        jp_fetch: Fetch,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        network: Network,
        local_planner: ScriptedPlanner,
    ) -> None:
        port = local_planner.url.rsplit(":", 1)[1]
        network.answer("rebind.example.test", ["127.0.0.1"], [METADATA])
        status, body = await relay_with_user_url(jp_fetch, tmp_path, monkeypatch, f"http://rebind.example.test:{port}")
        assert (status, body) == (200, {"from": "local planner"})
        assert network.lookups == ["rebind.example.test"]
        assert network.connects == ["127.0.0.1"]
        # The planner still sees the name it was asked by (for its own Host check and TLS, the name counts).
        assert local_planner.received[0].headers["Host"] == f"rebind.example.test:{port}"


class TestAllowlist:
    """No server config: the user's baseUrl is checked against `c.NotebookBCC.allowed_planner_urls`."""

    @pytest.mark.parametrize("base_url", ["http://10.1.2.3:8000", "http://planner.internal:28600", "https://example.org"])
    async def test_a_user_url_off_the_default_list_is_refused_without_a_lookup_or_a_connection(
        self, jp_fetch: Fetch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, network: Network, base_url: str
    ) -> None:
        network.answer("planner.internal", ["10.1.2.3"])
        network.answer("example.org", ["93.184.215.14"])
        status, body = await relay_with_user_url(jp_fetch, tmp_path, monkeypatch, base_url)
        assert status == 502
        origin = policy.origin_of(base_url)
        assert body == {
            "message": (
                f"Planner URL {origin} (user setting) is not allowed on this server: it matches none of "
                "c.NotebookBCC.allowed_planner_urls ('*://localhost:*', '*://127.0.0.0/8:*', '*://[::1]:*'). "
                f"An administrator can allow it by adding a pattern such as {origin!r} to "
                "c.NotebookBCC.allowed_planner_urls in jupyter_server_config.py, or set c.NotebookBCC.planner_url."
            )
        }
        assert network.lookups == []
        assert network.connects == []

    async def test_localhost_by_name_is_allowed_by_default(
        self,
        jp_fetch: Fetch,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        network: Network,
        local_planner: ScriptedPlanner,
    ) -> None:
        port = local_planner.url.rsplit(":", 1)[1]
        network.answer("localhost", ["127.0.0.1"])
        status, body = await relay_with_user_url(jp_fetch, tmp_path, monkeypatch, f"http://localhost:{port}")
        assert (status, body) == (200, {"from": "local planner"})
        assert network.connects == ["127.0.0.1"]


class TestAdministratorsOwnUrl:
    """The administrator's planner_url is not on the allowlist, which the administrator narrowed."""

    @pytest.fixture
    def bcc_server_config(self, local_planner: ScriptedPlanner) -> dict[str, Any]:
        port = local_planner.url.rsplit(":", 1)[1]
        return {"planner_url": f"http://planner.internal:{port}", "allowed_planner_urls": ["https://*.corp.example"]}

    async def test_is_always_allowed(self, jp_fetch: Fetch, network: Network) -> None:
        network.answer("planner.internal", ["127.0.0.1"])
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}")
        assert json.loads(response.body) == {"from": "local planner"}
        assert network.connects == ["127.0.0.1"]


class TestOverridesUrl:
    """An administrator's planner in JupyterLab's overrides.json counts as the administrator's."""

    @pytest.fixture
    def jp_server_config(self, tmp_path: Path, local_planner: ScriptedPlanner) -> dict[str, Any]:
        port = local_planner.url.rsplit(":", 1)[1]
        folder = tmp_path / "app-settings"
        folder.mkdir()
        (folder / "overrides.json").write_text(
            json.dumps({"jupyterlab-notebook-bcc:plugin": {"baseUrl": f"http://planner.internal:{port}"}}),
            encoding="utf-8",
        )
        return {
            "ServerApp": {"jpserver_extensions": {"jupyterlab": True, "jupyterlab_notebook_bcc": True}},
            "LabApp": {"app_settings_dir": str(folder), "user_settings_dir": str(tmp_path / "user")},
        }

    async def test_is_allowed_and_the_same_url_as_the_users_own_setting_is_not(
        self, jp_fetch: Fetch, tmp_path: Path, network: Network, local_planner: ScriptedPlanner
    ) -> None:
        network.answer("planner.internal", ["127.0.0.1"])
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}")
        assert json.loads(response.body) == {"from": "local planner"}
        port = local_planner.url.rsplit(":", 1)[1]
        write_user_settings(tmp_path / "user", {"baseUrl": f"http://planner.internal:{port}"})
        refused = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}", raise_error=False)
        assert refused.code == 502
        assert "(user setting) is not allowed on this server" in json.loads(refused.body)["message"]
        assert network.connects == ["127.0.0.1"]


class TestPatterns:
    """`allowed_planner_urls` patterns, without a server."""

    @pytest.mark.parametrize(
        ("patterns", "url", "allowed"),
        [
            (policy.DEFAULT_ALLOWED, "http://localhost:28600", True),
            (policy.DEFAULT_ALLOWED, "https://LOCALHOST./v1", True),
            (policy.DEFAULT_ALLOWED, "http://127.0.0.2:9000", True),
            (policy.DEFAULT_ALLOWED, "http://[::1]:1", True),
            (policy.DEFAULT_ALLOWED, "http://localhost.example.org:28600", False),
            (policy.DEFAULT_ALLOWED, "http://10.0.0.1:28600", False),
            (policy.DEFAULT_ALLOWED, "http://0.0.0.0:28600", False),
            (["http://localhost:*"], "https://localhost:443", False),
            (["https://*.corp.example"], "https://planner.corp.example", True),
            (["https://*.corp.example"], "https://a.b.corp.example:443", True),
            (["https://*.corp.example"], "https://planner.corp.example:8443", False),
            (["https://*.corp.example"], "http://planner.corp.example", False),
            (["https://*.corp.example"], "https://corp.example", False),
            (["https://*.corp.example"], "https://planner.corp.example.evil.org", False),
            (["https://*.corp.example"], "https://evilcorp.example", False),
            (["http://10.0.0.0/8:8000"], "http://10.20.30.40:8000", True),
            (["http://10.0.0.0/8:8000"], "http://11.0.0.1:8000", False),
            (["*://[fd00::/8]:*"], "http://[fd12::1]:80", True),
            (["*"], "http://planner.internal:28600", True),
            (["*"], "https://203.0.113.7", True),
            ([], "http://localhost:28600", False),
        ],
    )
    def test_a_user_url_matches_or_not(self, patterns: list[str], url: str, allowed: bool) -> None:
        assert (policy.url_refusal(url, "user", patterns) == "") is allowed

    @pytest.mark.parametrize("source", ["server", "overrides"])
    def test_the_administrators_urls_are_not_checked_against_the_list(self, source: str) -> None:
        assert policy.url_refusal("http://planner.internal:1", source, []) == ""

    @pytest.mark.parametrize("source", ["server", "user"])
    def test_even_every_host_allowed_does_not_allow_a_link_local_literal(self, source: str) -> None:
        assert "no setting allows it" in policy.url_refusal("http://169.254.169.254/latest", source, ["*"])

    @pytest.mark.parametrize(
        "pattern",
        ["localhost", "http://localhost:x", "ftp://host", "http://*host:*", "http://a.*.b", "http://[nope]:*", "*://localhost"],
    )
    def test_a_wrong_pattern_stops_the_server_from_starting_with_a_reason(self, pattern: str) -> None:
        with pytest.raises(TraitError, match=r"c\.NotebookBCC\.allowed_planner_urls: .*" + re.escape(repr(pattern))):
            NotebookBCC(allowed_planner_urls=[pattern])

    @pytest.mark.parametrize(
        ("address", "refused"),
        [
            ("169.254.169.254", True),
            ("169.254.0.1", True),
            ("fe80::1", True),
            ("fe80::1%eth0", True),
            ("fd00:ec2::254", True),
            ("100.100.100.200", True),
            ("::ffff:169.254.169.254", True),
            ("64:ff9b::a9fe:a9fe", True),
            ("2002:a9fe:a9fe::1", True),
            ("127.0.0.1", False),
            ("::1", False),
            ("10.0.0.1", False),
            ("100.100.100.201", False),
            ("fd00:ec2::253", False),
        ],
    )
    def test_link_local_and_metadata_addresses(self, address: str, refused: bool) -> None:
        assert bool(policy.address_refusal(address)) is refused
