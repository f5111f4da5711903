"""The relay in a real Jupyter server (pytest-jupyter), in front of real planner processes.

Each test says which planner it uses: the reference planner (Node process) or a scripted Python server.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from .helpers import (
    Exchange,
    PlannerProcess,
    ScriptedPlanner,
    free_port,
    generating_body,
    open_relay_request,
    planning_body,
    read_until,
)

TOKEN = "server-side-s3cret-token"
NDJSON = "application/x-ndjson; charset=utf-8"
# What the browser sends with every body; the reference planner answers 415 to anything else. Passed as a
# copy: jp_fetch adds its credentials to the dict it is given.
JSON = {"Content-Type": "application/json"}
Fetch = Callable[..., Any]


def lines_of(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.decode().splitlines() if line.strip()]


async def stream_through_relay(
    url: str, auth: dict[str, str], body: bytes, on_chunk: Callable[[bytes], None]
) -> int:
    """POSTs through the relay with a streaming client; returns the status once the body ended."""
    client = AsyncHTTPClient(force_instance=True)
    try:
        response = await client.fetch(
            HTTPRequest(
                url,
                method="POST",
                headers={**auth, "Content-Type": "application/json"},
                body=body,
                streaming_callback=on_chunk,
                request_timeout=60,
            ),
            raise_error=False,
        )
        return int(response.code)
    finally:
        client.close()


def answer_empty_json(exchange: Exchange) -> None:
    """A scripted planner's answer that says nothing: `200 {}`."""
    exchange.start(200, {"Content-Type": "application/json"})
    exchange.write(b"{}")
    exchange.end()


class TestStreaming:
    """Chunks reach the browser as the planner writes them."""

    @pytest.fixture
    def held(self) -> threading.Event:
        return threading.Event()

    @pytest.fixture
    def planner(self, scripted_planner: Callable[..., ScriptedPlanner], held: threading.Event) -> ScriptedPlanner:
        # Scripted planner: writes one line, then holds the rest until the test has received that line.
        def script(exchange: Exchange) -> None:
            exchange.start(200, {"Content-Type": NDJSON, "Retry-After": "0"})
            exchange.write(b'{"action": {"action": "update_title", "title": "first"}}\n')
            released = held.wait(10)
            exchange.write(b'{"action": {"action": "comment", "content": "released=%s"}}\n' % str(released).encode())
            exchange.write(b'{"action": {"action": "comment", "content": "last"}}\n')
            exchange.end()

        return scripted_planner(script)

    @pytest.fixture
    def bcc_server_config(self, planner: ScriptedPlanner) -> dict[str, Any]:
        return {"planner_url": planner.url}

    async def test_the_first_line_arrives_before_the_planner_writes_the_last(
        self, relay_url: Callable[[str], str], jp_auth_header: dict[str, str], held: threading.Event
    ) -> None:
        chunks: list[bytes] = []

        def on_chunk(chunk: bytes) -> None:
            chunks.append(chunk)
            if b"first" in b"".join(chunks):
                held.set()

        status = await stream_through_relay(relay_url("generating"), jp_auth_header, b"{}", on_chunk)
        assert status == 200
        actions = [line["action"] for line in lines_of(b"".join(chunks))]
        # "released=True": the planner went on only because the first line had already reached the client.
        assert [a.get("title") or a.get("content") for a in actions] == ["first", "released=True", "last"]
        assert len(chunks) >= 2


class TestReferencePlannerStream:
    """Reference planner (Node process) with a 150 ms pause between streamed actions."""

    @pytest.fixture
    def planner(self, start_planner: Callable[..., PlannerProcess]) -> PlannerProcess:
        return start_planner("--line-delay", "150")

    @pytest.fixture
    def bcc_server_config(self, planner: PlannerProcess) -> dict[str, Any]:
        return {"planner_url": planner.url}

    async def test_actions_arrive_one_by_one_with_the_planners_headers(
        self, relay_url: Callable[[str], str], jp_auth_header: dict[str, str]
    ) -> None:
        arrivals: list[tuple[float, bytes]] = []
        started = time.monotonic()
        status = await stream_through_relay(
            relay_url("generating"),
            jp_auth_header,
            generating_body(),
            lambda chunk: arrivals.append((time.monotonic() - started, chunk)),
        )
        assert status == 200
        actions = lines_of(b"".join(chunk for _, chunk in arrivals))
        assert len(actions) > 3
        assert all(set(line) == {"action"} for line in actions)
        # Spread out like the planner's writes: not one block at the end.
        assert len(arrivals) >= len(actions) - 1
        assert arrivals[-1][0] - arrivals[0][0] >= 0.15 * (len(actions) - 2)

    async def test_the_content_type_passes_through(self, jp_fetch: Fetch) -> None:
        response = await jp_fetch("notebook-bcc", "relay", "generating", method="POST", body=generating_body(), headers={**JSON})
        assert response.code == 200
        assert response.headers["Content-Type"] == NDJSON
        assert response.headers["X-Accel-Buffering"] == "no"

    async def test_hanging_up_mid_stream_closes_the_planners_connection(
        self, planner: PlannerProcess, relay_url: Callable[[str], str], jp_auth_header: dict[str, str]
    ) -> None:
        reader, writer = await open_relay_request(
            relay_url("generating"), "POST", {**jp_auth_header, "Content-Type": "application/json"}, generating_body()
        )
        await read_until(reader, b'{"action"')
        writer.close()
        # The reference planner logs a stream its client left before the end as "(closed early)".
        line = await asyncio.get_running_loop().run_in_executor(None, planner.wait_for_log, "POST /generating")
        assert "closed early" in line


class TestHangUpWhileThePlannerThinks:
    """Scripted planner that sends nothing for a long time, as an LLM planner does before its first byte."""

    @pytest.fixture
    def planner(self, scripted_planner: Callable[..., ScriptedPlanner]) -> ScriptedPlanner:
        planner: ScriptedPlanner

        def script(exchange: Exchange) -> None:
            if exchange.received.path.endswith("/streaming"):
                exchange.start()
                exchange.write(b'{"action": {"action": "update_title", "title": "t"}}\n')
            if exchange.wait_for_disconnect(15):
                planner.disconnected.set()

        planner = scripted_planner(script)
        return planner

    @pytest.fixture
    def bcc_server_config(self, planner: ScriptedPlanner) -> dict[str, Any]:
        return {"planner_url": planner.url}

    @pytest.mark.parametrize("path", ["planning", "streaming"])
    async def test_the_planner_sees_the_disconnect_at_once(
        self,
        path: str,
        planner: ScriptedPlanner,
        relay_url: Callable[[str], str],
        jp_auth_header: dict[str, str],
    ) -> None:
        reader, writer = await open_relay_request(
            relay_url(path), "POST", {**jp_auth_header, "Content-Type": "application/json"}, b"{}"
        )
        if path == "streaming":
            await read_until(reader, b'"title"')
        else:
            for _ in range(100):
                if planner.received:
                    break
                await asyncio.sleep(0.02)
            assert planner.received, "the request never reached the planner"
        writer.close()
        hung_up = time.monotonic()
        assert await asyncio.get_running_loop().run_in_executor(None, planner.disconnected.wait, 5)
        assert time.monotonic() - hung_up < 2


class TestStatusPassThrough:
    """Reference planner with injected faults: a 500 on the first API request, a 429 on the second."""

    @pytest.fixture
    def planner(self, start_planner: Callable[..., PlannerProcess]) -> PlannerProcess:
        return start_planner("--quiet", "--fault", "http-500@1", "--fault", "http-429=7@2")

    @pytest.fixture
    def bcc_server_config(self, planner: PlannerProcess) -> dict[str, Any]:
        return {"planner_url": planner.url}

    async def test_404_500_and_429_with_retry_after_reach_the_browser(self, jp_fetch: Fetch) -> None:
        failed = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=planning_body(), headers={**JSON}, raise_error=False)
        assert failed.code == 500
        assert json.loads(failed.body)["status"] == 500

        limited = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=planning_body(), headers={**JSON}, raise_error=False)
        assert limited.code == 429
        assert limited.headers["Retry-After"] == "7"
        assert limited.headers["Content-Type"].startswith("application/json")

        missing = await jp_fetch("notebook-bcc", "relay", "nowhere", method="POST", body=b"{}", raise_error=False)
        assert missing.code == 404
        assert "/nowhere" in json.loads(missing.body)["error"]

        ok = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=planning_body(), headers={**JSON})
        assert ok.code == 200
        assert json.loads(ok.body)["context_update"]

    async def test_get_reaches_the_planner_too(self, jp_fetch: Fetch) -> None:
        health = await jp_fetch("notebook-bcc", "relay", "health")
        assert json.loads(health.body)["status"] == "ok"

    async def test_the_planners_root_is_relayed_for_test_connection(self, jp_fetch: Fetch) -> None:
        # The reference planner has no page at its root: its own 404, not the relay's 400.
        root = await jp_fetch("notebook-bcc", "relay/", raise_error=False)
        assert root.code == 404
        assert "no such endpoint: /" in json.loads(root.body)["error"]


class TestUnreachable:
    """No planner at all: a port nothing listens on."""

    @pytest.fixture
    def bcc_server_config(self) -> dict[str, Any]:
        return {"planner_url": f"http://127.0.0.1:{free_port()}"}

    async def test_502_names_the_url_and_the_cause(self, jp_fetch: Fetch, bcc_server_config: dict[str, Any]) -> None:
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}", raise_error=False)
        assert response.code == 502
        assert json.loads(response.body) == {
            "message": f"Planner at {bcc_server_config['planner_url']} is unreachable: connection refused"
        }

    async def test_test_connection_at_the_root_hears_it_too(self, jp_fetch: Fetch) -> None:
        response = await jp_fetch("notebook-bcc", "relay/", raise_error=False)
        assert response.code == 502
        assert "is unreachable: connection refused" in json.loads(response.body)["message"]


class TestBrokenAnswers:
    """Reference planner with a `reset` fault (the connection breaks mid-stream), and a scripted
    planner that hangs up without answering."""

    @pytest.fixture
    def planner(self, start_planner: Callable[..., PlannerProcess]) -> PlannerProcess:
        return start_planner("--quiet", "--fault", "reset")

    @pytest.fixture
    def bcc_server_config(self, planner: PlannerProcess) -> dict[str, Any]:
        return {"planner_url": planner.url}

    async def test_a_stream_broken_upstream_is_broken_for_the_browser_too(
        self, relay_url: Callable[[str], str], jp_auth_header: dict[str, str]
    ) -> None:
        reader, writer = await open_relay_request(
            relay_url("generating"),
            "POST",
            {**jp_auth_header, "Content-Type": "application/json", "Connection": "close"},
            generating_body(),
        )
        raw = await asyncio.wait_for(reader.read(), 20)
        writer.close()
        head, _, body = raw.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        assert b"Transfer-Encoding: chunked" in head
        assert b'{"action"' in body
        # A complete chunked body ends with a zero-length chunk; a relayed reset must not invent one.
        assert not body.endswith(b"0\r\n\r\n")

    async def test_a_planner_that_hangs_up_without_answering_gives_a_502(
        self, jp_fetch: Fetch, jp_serverapp: Any, scripted_planner: Callable[..., ScriptedPlanner]
    ) -> None:
        silent = scripted_planner(lambda exchange: exchange.handler.connection.shutdown(socket.SHUT_RDWR))
        jp_serverapp.web_app.settings["notebook_bcc"].planner_url = silent.url
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}", raise_error=False)
        assert response.code == 502
        assert json.loads(response.body) == {
            "message": f"Planner at {silent.url} gave no answer: connection closed before an answer"
        }


class TestServerToken:
    """Reference planner started with --token; the admin's config carries the same token."""

    @pytest.fixture
    def planner(self, start_planner: Callable[..., PlannerProcess]) -> PlannerProcess:
        return start_planner("--token", TOKEN)

    @pytest.fixture
    def bcc_server_config(self, planner: PlannerProcess) -> dict[str, Any]:
        return {"planner_url": planner.url, "planner_token": TOKEN}

    async def test_the_token_reaches_the_planner_and_never_the_browser(
        self, jp_fetch: Fetch, planner: PlannerProcess, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.DEBUG)
        relayed = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=planning_body(), headers={**JSON})
        assert relayed.code == 200
        config = await jp_fetch("notebook-bcc", "config")
        assert json.loads(config.body) == {
            "planner_url": planner.url,
            "source": "server",
            "token_configured": True,
        }
        for response in (relayed, config):
            assert TOKEN not in response.body.decode()
            assert all(TOKEN not in value for _, value in response.headers.get_all())
        assert TOKEN not in caplog.text


class TestWrongServerToken:
    """Reference planner with --token; the admin configured another one."""

    @pytest.fixture
    def planner(self, start_planner: Callable[..., PlannerProcess]) -> PlannerProcess:
        return start_planner("--quiet", "--token", TOKEN)

    @pytest.fixture
    def bcc_server_config(self, planner: PlannerProcess) -> dict[str, Any]:
        return {"planner_url": planner.url, "planner_token": "not-the-token"}

    async def test_the_planners_401_passes_through(self, jp_fetch: Fetch) -> None:
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=planning_body(), headers={**JSON}, raise_error=False)
        assert response.code == 401
        assert "bearer token" in json.loads(response.body)["error"]


class TestWhatIsForwarded:
    """Scripted planner that records each request as it arrived."""

    @pytest.fixture
    def planner(self, scripted_planner: Callable[..., ScriptedPlanner]) -> ScriptedPlanner:
        def script(exchange: Exchange) -> None:
            exchange.start(200, {"Content-Type": "application/json", "X-Planner-Secret": "internal"})
            exchange.write(b'{"ok": true}')
            exchange.end()

        return scripted_planner(script)

    @pytest.fixture
    def bcc_server_config(self, planner: ScriptedPlanner) -> dict[str, Any]:
        return {"planner_url": planner.url + "/api/", "planner_token": TOKEN}

    async def test_body_notebook_id_and_bearer_go_through_jupyters_own_credentials_do_not(
        self, jp_fetch: Fetch, planner: ScriptedPlanner, jp_auth_header: dict[str, str]
    ) -> None:
        notebook_id = "%E6%95%B0%E6%8D%AE%E5%88%86%E6%9E%90%20%F0%9F%93%88.ipynb"
        body = json.dumps({"notebook_id": "数据分析 📈.ipynb", "n": 1}, ensure_ascii=False).encode()
        response = await jp_fetch(
            "notebook-bcc",
            "relay",
            "v1",
            "actions",
            method="POST",
            body=body,
            params={"stream": "1"},
            headers={
                "Content-Type": "application/json",
                "X-Notebook-Id": notebook_id,
                "Cookie": "_xsrf=abc; session=browser-only",
            },
        )
        assert json.loads(response.body) == {"ok": True}
        assert "X-Planner-Secret" not in response.headers
        [received] = planner.received
        assert received.method == "POST"
        assert received.path == "/api/v1/actions?stream=1"
        assert received.body == body
        assert received.headers["X-Notebook-Id"] == notebook_id
        assert received.headers["Authorization"] == f"Bearer {TOKEN}"
        assert "Cookie" not in received.headers
        assert all(jp_auth_header["Authorization"] not in value for value in received.headers.values())

    async def test_paths_that_climb_out_of_the_planner_root_are_refused(
        self, http_server_client: Any, jp_base_url: str, jp_auth_header: dict[str, str], planner: ScriptedPlanner
    ) -> None:
        for climbing in ("v1/../../admin", "%2E%2E/admin", "v1//actions"):
            response = await http_server_client.fetch(
                f"{jp_base_url}notebook-bcc/relay/{climbing}",
                method="POST",
                body=b"{}",
                headers=jp_auth_header,
                raise_error=False,
            )
            assert response.code == 400, climbing
            assert "not a planner path" in json.loads(response.body)["message"]
        assert planner.received == []


class TestUserSettings:
    """No server config: the URL and token come from the user's JupyterLab settings file."""

    @pytest.fixture
    def planner(self, scripted_planner: Callable[..., ScriptedPlanner]) -> ScriptedPlanner:
        def script(exchange: Exchange) -> None:
            exchange.start(200, {"Content-Type": "application/json"})
            exchange.write(b'{"from": "user planner"}')
            exchange.end()

        return scripted_planner(script)

    @staticmethod
    def write_settings(settings_dir: Path, text: str) -> None:
        folder = settings_dir / "jupyterlab-notebook-bcc"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "plugin.jupyterlab-settings").write_text(text, encoding="utf-8")

    async def test_the_users_base_url_and_token_are_used(
        self, jp_fetch: Fetch, planner: ScriptedPlanner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path))
        self.write_settings(
            tmp_path,
            '{\n  // written by the settings editor\n  "baseUrl": "%s/",\n  "token": "user-token",\n}\n' % planner.url,
        )
        config = await jp_fetch("notebook-bcc", "config")
        assert json.loads(config.body) == {"planner_url": planner.url, "source": "user", "token_configured": True}
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}")
        assert json.loads(response.body) == {"from": "user planner"}
        assert planner.received[0].headers["Authorization"] == "Bearer user-token"

    async def test_a_base_url_ending_in_v1_is_the_planners_root(
        self, jp_fetch: Fetch, planner: ScriptedPlanner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # The Easy-notebook frontend's form (http://host:28600/v1): the v1 routes are /v1/... under the root.
        monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path))
        self.write_settings(tmp_path, '{"baseUrl": "%s/v1/"}' % planner.url)
        config = await jp_fetch("notebook-bcc", "config")
        assert json.loads(config.body)["planner_url"] == planner.url
        await jp_fetch("notebook-bcc", "relay", "v1", "reflection", method="POST", body=b"{}")
        assert [received.path for received in planner.received] == ["/v1/reflection"]

    async def test_a_url_that_is_not_http_is_refused_with_a_message(
        self, jp_fetch: Fetch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path))
        self.write_settings(tmp_path, '{"baseUrl": "file:///etc/passwd"}')
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}", raise_error=False)
        assert response.code == 502
        assert json.loads(response.body) == {
            "message": "Planner URL 'file:///etc/passwd' (user setting) is not an http:// or https:// URL"
        }

    async def test_an_unreadable_settings_file_is_named(
        self, jp_fetch: Fetch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path))
        self.write_settings(tmp_path, '{"baseUrl": ')
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}", raise_error=False)
        assert response.code == 502
        assert "plugin.jupyterlab-settings" in json.loads(response.body)["message"]

    async def test_without_settings_the_default_url_is_used(
        self, jp_fetch: Fetch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path))
        config = await jp_fetch("notebook-bcc", "config")
        assert json.loads(config.body) == {
            "planner_url": "http://localhost:28600",
            "source": "default",
            "token_configured": False,
        }


class TestLabAppSettingsDir:
    """No server config; JupyterLab's settings directory is configured as `LabApp.user_settings_dir`."""

    @pytest.fixture
    def settings_dir(self, tmp_path: Path) -> Path:
        return tmp_path / "lab-settings"

    @pytest.fixture
    def jp_server_config(self, settings_dir: Path) -> dict[str, Any]:
        return {
            "ServerApp": {"jpserver_extensions": {"jupyterlab_notebook_bcc": True}},
            "LabApp": {"user_settings_dir": str(settings_dir)},
        }

    async def test_the_settings_file_there_is_read(self, jp_fetch: Fetch, settings_dir: Path) -> None:
        TestUserSettings.write_settings(settings_dir, '{"baseUrl": "http://planner.internal:9000"}')
        config = await jp_fetch("notebook-bcc", "config")
        assert json.loads(config.body)["planner_url"] == "http://planner.internal:9000"


class TestServerConfigWins:
    """Scripted planner named by the admin; the user's settings point elsewhere."""

    @pytest.fixture
    def planner(self, scripted_planner: Callable[..., ScriptedPlanner]) -> ScriptedPlanner:
        def script(exchange: Exchange) -> None:
            exchange.start(200, {"Content-Type": "application/json"})
            exchange.write(b'{"from": "admin planner"}')
            exchange.end()

        return scripted_planner(script)

    @pytest.fixture
    def bcc_server_config(self, planner: ScriptedPlanner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
        monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path))
        TestUserSettings.write_settings(
            tmp_path, json.dumps({"baseUrl": f"http://127.0.0.1:{free_port()}", "token": "user-token"})
        )
        monkeypatch.setenv("NOTEBOOK_BCC_PLANNER_URL", planner.url)
        return {}

    async def test_the_environment_variable_beats_the_users_setting(self, jp_fetch: Fetch, planner: ScriptedPlanner) -> None:
        config = await jp_fetch("notebook-bcc", "config")
        assert json.loads(config.body) == {"planner_url": planner.url, "source": "server", "token_configured": False}
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}")
        assert json.loads(response.body) == {"from": "admin planner"}
        # The user's token belongs to the user's planner: it is not sent to the admin's.
        assert "Authorization" not in planner.received[0].headers


class TestBaseUrl:
    """Reference planner behind a Jupyter server under /user/alice/ (as on JupyterHub)."""

    @pytest.fixture
    def jp_base_url(self) -> str:
        return "/user/alice/"

    @pytest.fixture
    def planner(self, start_planner: Callable[..., PlannerProcess]) -> PlannerProcess:
        return start_planner("--quiet")

    @pytest.fixture
    def bcc_server_config(self, planner: PlannerProcess) -> dict[str, Any]:
        return {"planner_url": planner.url}

    async def test_the_relay_lives_under_the_base_url(self, jp_fetch: Fetch, http_server_client: Any, jp_auth_header: dict[str, str]) -> None:
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=planning_body(), headers={**JSON})
        assert response.code == 200
        config = await jp_fetch("notebook-bcc", "config")
        assert json.loads(config.body)["source"] == "server"
        outside = await http_server_client.fetch(
            "/notebook-bcc/relay/planning", method="POST", body=planning_body(), headers=jp_auth_header, raise_error=False
        )
        assert outside.code == 404


class TestAuthentication:
    """Scripted planner; requests without Jupyter credentials."""

    @pytest.fixture
    def planner(self, scripted_planner: Callable[..., ScriptedPlanner]) -> ScriptedPlanner:
        return scripted_planner(lambda exchange: exchange.end())

    @pytest.fixture
    def bcc_server_config(self, planner: ScriptedPlanner) -> dict[str, Any]:
        return {"planner_url": planner.url, "planner_token": TOKEN}

    async def test_an_anonymous_request_is_refused_and_never_relayed(
        self, http_server_client: Any, jp_base_url: str, planner: ScriptedPlanner
    ) -> None:
        for path, method, body in (("relay/planning", "POST", b"{}"), ("relay/health", "GET", None), ("config", "GET", None)):
            response = await http_server_client.fetch(
                f"{jp_base_url}notebook-bcc/{path}", method=method, body=body, raise_error=False
            )
            assert response.code == 403, path
        assert planner.received == []


class TestWhoAnswered:
    """Scripted planner: every answer says whether the planner or the relay itself wrote it."""

    @pytest.fixture
    def planner(self, scripted_planner: Callable[..., ScriptedPlanner]) -> ScriptedPlanner:
        def script(exchange: Exchange) -> None:
            # An API gateway's own 502 looks like the relay's: only the marker tells them apart.
            exchange.start(502, {"Content-Type": "application/json"})
            exchange.write(b'{"message": "Internal server error"}')
            exchange.end()

        return scripted_planner(script)

    @pytest.fixture
    def bcc_server_config(self, planner: ScriptedPlanner) -> dict[str, Any]:
        return {"planner_url": planner.url}

    async def test_the_planners_answer_and_the_relays_own_carry_different_marks(
        self, jp_fetch: Fetch, planner: ScriptedPlanner
    ) -> None:
        relayed = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}", raise_error=False)
        assert relayed.code == 502
        assert relayed.headers["X-Notebook-BCC-Relay"] == "planner"
        refused = await jp_fetch("notebook-bcc", "relay", "v1", "..", "x", method="POST", body=b"{}", raise_error=False)
        assert refused.code == 400
        assert refused.headers["X-Notebook-BCC-Relay"] == "relay"


class TestUnreachableIsMarked:
    @pytest.fixture
    def bcc_server_config(self) -> dict[str, Any]:
        return {"planner_url": f"http://127.0.0.1:{free_port()}"}

    async def test_the_relays_own_502_says_so(self, jp_fetch: Fetch) -> None:
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}", raise_error=False)
        assert response.code == 502
        assert response.headers["X-Notebook-BCC-Relay"] == "relay"


class TestRedirect:
    """A planner behind an ingress that redirects http to https (or a trailing-slash redirect)."""

    @pytest.fixture
    def planner(self, scripted_planner: Callable[..., ScriptedPlanner]) -> ScriptedPlanner:
        def script(exchange: Exchange) -> None:
            exchange.start(308, {"Location": "https://planner.example.org/api/planning", "Content-Type": "text/plain"})
            exchange.write(b"Permanent Redirect")
            exchange.end()

        return scripted_planner(script)

    @pytest.fixture
    def bcc_server_config(self, planner: ScriptedPlanner) -> dict[str, Any]:
        return {"planner_url": planner.url}

    async def test_a_redirect_is_a_502_that_names_where_it_points(self, jp_fetch: Fetch, planner: ScriptedPlanner) -> None:
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}", raise_error=False)
        assert response.code == 502
        assert response.headers["X-Notebook-BCC-Relay"] == "relay"
        assert json.loads(response.body) == {
            "message": (
                f"Planner at {planner.url} redirects to https://planner.example.org/api/planning (HTTP 308); "
                "set the planner URL to the address it redirects to"
            )
        }


class TestEnvironmentToken:
    """The administrator's token in the server's environment stays out of every kernel's environment."""

    @pytest.fixture
    def planner(self, scripted_planner: Callable[..., ScriptedPlanner]) -> ScriptedPlanner:
        return scripted_planner(answer_empty_json)

    @pytest.fixture
    def bcc_server_config(self, planner: ScriptedPlanner, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
        monkeypatch.setenv("NOTEBOOK_BCC_PLANNER_URL", planner.url)
        monkeypatch.setenv("NOTEBOOK_BCC_PLANNER_TOKEN", TOKEN)
        return {}

    async def test_kernels_do_not_inherit_it_and_the_relay_still_sends_it(
        self, jp_fetch: Fetch, jp_serverapp: Any, planner: ScriptedPlanner
    ) -> None:
        kernel_env = jp_serverapp.session_manager.get_kernel_env("数据分析.ipynb")
        assert "NOTEBOOK_BCC_PLANNER_TOKEN" not in kernel_env
        assert TOKEN not in kernel_env.values()
        await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}")
        assert planner.received[0].headers["Authorization"] == f"Bearer {TOKEN}"


class TestQueryCredentials:
    """Scripted planner that records what it was asked."""

    @pytest.fixture
    def planner(self, scripted_planner: Callable[..., ScriptedPlanner]) -> ScriptedPlanner:
        return scripted_planner(answer_empty_json)

    @pytest.fixture
    def bcc_server_config(self, planner: ScriptedPlanner) -> dict[str, Any]:
        return {"planner_url": planner.url}

    async def test_jupyters_token_and_xsrf_in_the_query_stay_in_jupyter(
        self, jp_fetch: Fetch, planner: ScriptedPlanner, jp_serverapp: Any
    ) -> None:
        await jp_fetch(
            "notebook-bcc", "relay", "health", params={"token": jp_serverapp.identity_provider.token, "stream": "1"}
        )
        await jp_fetch("notebook-bcc", "relay", "health", params={"_xsrf": "abc", "Token": "x", "q": "数据"})
        assert [received.path for received in planner.received] == ["/health?stream=1", "/health?q=%E6%95%B0%E6%8D%AE"]


class TestMistypedUrl:
    @pytest.mark.parametrize(
        ("base_url", "reason"),
        [("http://localhost:286000", "Port out of range 0-65535"), ("http://[::1", "Invalid IPv6 URL"), ("http://:8000", "no host")],
    )
    async def test_a_url_that_cannot_be_parsed_is_a_502_naming_it(
        self, jp_fetch: Fetch, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_url: str, reason: str
    ) -> None:
        monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(tmp_path))
        TestUserSettings.write_settings(tmp_path, json.dumps({"baseUrl": base_url}))
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}", raise_error=False)
        assert response.code == 502
        assert json.loads(response.body) == {"message": f"Planner URL {base_url!r} (user setting) is not valid: {reason}"}


class TestOverrides:
    """An administrator sets the planner in JupyterLab's `overrides.json`, as for any other setting."""

    @pytest.fixture
    def app_settings_dir(self, tmp_path: Path) -> Path:
        folder = tmp_path / "app-settings"
        folder.mkdir()
        (folder / "overrides.json").write_text(
            json.dumps({"jupyterlab-notebook-bcc:plugin": {"baseUrl": "http://planner.internal:28600/", "token": "site"}}),
            encoding="utf-8",
        )
        return folder

    @pytest.fixture
    def jp_server_config(self, app_settings_dir: Path, tmp_path: Path) -> dict[str, Any]:
        return {
            "ServerApp": {"jpserver_extensions": {"jupyterlab": True, "jupyterlab_notebook_bcc": True}},
            "LabApp": {"app_settings_dir": str(app_settings_dir), "user_settings_dir": str(tmp_path / "user")},
        }

    async def test_the_overrides_url_and_token_are_the_default(self, jp_fetch: Fetch) -> None:
        config = await jp_fetch("notebook-bcc", "config")
        assert json.loads(config.body) == {
            "planner_url": "http://planner.internal:28600",
            "source": "overrides",
            "token_configured": True,
        }

    async def test_the_users_own_setting_still_wins(self, jp_fetch: Fetch, tmp_path: Path) -> None:
        TestUserSettings.write_settings(tmp_path / "user", '{"baseUrl": "http://mine:1"}')
        config = await jp_fetch("notebook-bcc", "config")
        assert json.loads(config.body) == {"planner_url": "http://mine:1", "source": "user", "token_configured": True}


class TestAnswerThatIsNotHttp:
    """Scripted planner that answers garbage and keeps the connection open."""

    @pytest.fixture
    def planner(self, scripted_planner: Callable[..., ScriptedPlanner]) -> ScriptedPlanner:
        def script(exchange: Exchange) -> None:
            exchange.handler.wfile.write(b"SSH-2.0-OpenSSH_9.6\r\nthis is not HTTP\r\n\r\n")
            exchange.handler.wfile.flush()
            exchange.wait_for_disconnect(10)

        return scripted_planner(script)

    @pytest.fixture
    def bcc_server_config(self, planner: ScriptedPlanner) -> dict[str, Any]:
        return {"planner_url": planner.url}

    async def test_is_a_502_that_says_so(self, jp_fetch: Fetch, planner: ScriptedPlanner) -> None:
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}", raise_error=False)
        assert response.code == 502
        assert response.headers["X-Notebook-BCC-Relay"] == "relay"
        assert json.loads(response.body) == {"message": f"Planner at {planner.url} gave no answer: the answer was not valid HTTP"}


class TestConcurrencyCap:
    """Scripted planner that holds every answer until the test releases it; at most two requests at once."""

    @pytest.fixture
    def release(self) -> threading.Event:
        return threading.Event()

    @pytest.fixture
    def planner(self, scripted_planner: Callable[..., ScriptedPlanner], release: threading.Event) -> ScriptedPlanner:
        def script(exchange: Exchange) -> None:
            release.wait(20)
            answer_empty_json(exchange)

        return scripted_planner(script)

    @pytest.fixture
    def bcc_server_config(self, planner: ScriptedPlanner) -> dict[str, Any]:
        return {"planner_url": planner.url, "max_concurrent_requests": 2}

    async def test_a_request_over_the_cap_is_a_503_with_retry_after_and_the_slots_come_back(
        self, jp_fetch: Fetch, planner: ScriptedPlanner, release: threading.Event
    ) -> None:
        def post() -> Any:
            return jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}", raise_error=False)

        held = [asyncio.ensure_future(post()) for _ in range(2)]
        for _ in range(250):
            if len(planner.received) == 2:
                break
            await asyncio.sleep(0.02)
        assert len(planner.received) == 2
        over = await post()
        assert over.code == 503
        assert over.headers["Retry-After"] == "5"
        assert over.headers["X-Notebook-BCC-Relay"] == "relay"
        assert json.loads(over.body) == {
            "message": (
                "The Jupyter server already relays 2 planner requests at once "
                "(c.NotebookBCC.max_concurrent_requests); try again in a few seconds"
            )
        }
        assert len(planner.received) == 2
        release.set()
        assert [response.code for response in await asyncio.gather(*held)] == [200, 200]
        # Every slot was given back: three more in a row go through.
        for _ in range(3):
            assert (await post()).code == 200

    async def test_a_failed_request_gives_its_slot_back(self, jp_fetch: Fetch, jp_serverapp: Any) -> None:
        jp_serverapp.web_app.settings["notebook_bcc"].planner_url = f"http://127.0.0.1:{free_port()}"
        for _ in range(4):
            response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}", raise_error=False)
            assert response.code == 502


class TestIdleTimeout:
    """Scripted planners that go silent, with `c.NotebookBCC.idle_timeout` at half a second."""

    @pytest.fixture
    def bcc_server_config(self) -> dict[str, Any]:
        return {"idle_timeout": 0.5}

    async def test_a_planner_silent_before_its_answer_gives_a_502_naming_the_setting(
        self, jp_fetch: Fetch, jp_serverapp: Any, scripted_planner: Callable[..., ScriptedPlanner]
    ) -> None:
        silent = scripted_planner(lambda exchange: exchange.wait_for_disconnect(20) and silent.disconnected.set())
        jp_serverapp.web_app.settings["notebook_bcc"].planner_url = silent.url
        started = time.monotonic()
        response = await jp_fetch("notebook-bcc", "relay", "planning", method="POST", body=b"{}", raise_error=False)
        assert response.code == 502
        assert json.loads(response.body) == {
            "message": f"Planner at {silent.url} gave no answer: nothing came within 0.5 s (c.NotebookBCC.idle_timeout)"
        }
        assert time.monotonic() - started < 5
        # The planner's connection was closed, not left to think for nobody.
        assert await asyncio.get_running_loop().run_in_executor(None, silent.disconnected.wait, 5)

    async def test_a_stream_that_stalls_is_cut_for_the_browser_and_the_planner(
        self,
        jp_serverapp: Any,
        scripted_planner: Callable[..., ScriptedPlanner],
        relay_url: Callable[[str], str],
        jp_auth_header: dict[str, str],
    ) -> None:
        def script(exchange: Exchange) -> None:
            exchange.start()
            exchange.write(b'{"action": {"action": "update_title", "title": "t"}}\n')
            if exchange.wait_for_disconnect(20):
                stalled.disconnected.set()

        stalled = scripted_planner(script)
        jp_serverapp.web_app.settings["notebook_bcc"].planner_url = stalled.url
        reader, writer = await open_relay_request(
            relay_url("generating"), "POST", {**jp_auth_header, "Content-Type": "application/json"}, b"{}"
        )
        started = time.monotonic()
        raw = await asyncio.wait_for(reader.read(), 10)
        writer.close()
        head, _, body = raw.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200")
        assert b'"title"' in body
        # Broken, not complete: no zero-length chunk at the end.
        assert not body.endswith(b"0\r\n\r\n")
        assert time.monotonic() - started < 5
        assert await asyncio.get_running_loop().run_in_executor(None, stalled.disconnected.wait, 5)

    async def test_a_slow_stream_that_never_pauses_that_long_is_relayed_whole(
        self, jp_fetch: Fetch, jp_serverapp: Any, scripted_planner: Callable[..., ScriptedPlanner]
    ) -> None:
        def script(exchange: Exchange) -> None:
            exchange.start()
            for n in range(6):
                time.sleep(0.25)
                exchange.write(b'{"action": {"action": "comment", "content": "%d"}}\n' % n)
            exchange.end()

        slow = scripted_planner(script)
        jp_serverapp.web_app.settings["notebook_bcc"].planner_url = slow.url
        response = await jp_fetch("notebook-bcc", "relay", "generating", method="POST", body=b"{}")
        assert [line["action"]["content"] for line in lines_of(response.body)] == [str(n) for n in range(6)]
