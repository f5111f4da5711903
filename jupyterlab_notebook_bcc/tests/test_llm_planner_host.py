"""The LLM planner on its own answers only requests whose `Host` is one of its names (DNS rebinding: a page on
`evil.example` whose name later resolves to 127.0.0.1 reaches a loopback planner, but its requests still say
`Host: evil.example`), as the reference planner does."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from jupyterlab_notebook_bcc.llm_planner.hosts import allowed_hosts, host_refusal

from .helpers import free_port


def ask(port: int, host: str | None) -> tuple[int, dict[str, object]]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest("GET", "/", skip_host=True)
        if host is not None:
            connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


@pytest.fixture
def planner() -> Iterator[int]:
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith(("NOTEBOOK_BCC_", "JUPYTERHUB_"))}
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab_notebook_bcc.llm_planner", "--port", str(port),
         "--allowed-host", "planner.corp.example"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                ask(port, f"127.0.0.1:{port}")
                break
            except OSError:
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(10)


def test_a_request_naming_another_host_is_refused(planner: int) -> None:
    status, body = ask(planner, f"evil.example:{planner}")
    assert status == 403
    assert str(body["message"]).startswith(f'LLM planner: Host "evil.example:{planner}" is not a name of this planner '
                                           "(DNS rebinding protection)")
    # An HTTP/1.1 request without Host: tornado refuses it before the planner sees it.
    assert ask(planner, None)[0] == 400


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "LOCALHOST.",
                                  "planner.corp.example:{port}"])
def test_loopback_names_and_allowed_hosts_are_answered(planner: int, host: str) -> None:
    status, body = ask(planner, host.format(port=planner))
    assert status == 200 and body["planner"] == "LLM planner"


def test_the_names_of_a_bind_address() -> None:
    assert host_refusal("10.0.0.7:28600", allowed_hosts("10.0.0.7", [])) == ""
    assert host_refusal("[fd00::7]:1", allowed_hosts("fd00::7", [])) == ""
    assert host_refusal("10.0.0.8", allowed_hosts("10.0.0.7", [])) != ""
    assert host_refusal("app.localhost", allowed_hosts("127.0.0.1", [])) == ""
