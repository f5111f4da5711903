"""The LLM planner on its own without Hub auth serves one user (#41): with a shared bearer token or none,
every client is the same user, "anonymous", for sessions, budgets and the streams cap; it says so at start,
and user_limits, which name users it never sees, are called out."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any

from jupyterlab_notebook_bcc.llm_planner import LLMPlanner
from jupyterlab_notebook_bcc.llm_planner.__main__ import one_user_notice

from .helpers import free_port


def test_a_shared_token_says_everyone_is_one_user() -> None:
    notice = one_user_notice(LLMPlanner(max_daily_tokens=1000), token="t0ken", hub=False)
    assert "every client is one user" in notice and "'anonymous'" in notice
    assert "max_daily_tokens" in notice and "--hub-auth" in notice


def test_user_limits_without_hub_auth_are_called_out() -> None:
    notice = one_user_notice(LLMPlanner(user_limits={"bob": {"max_daily_tokens": 5}}), token="", hub=False)
    assert "c.LLMPlanner.user_limits names bob" in notice and "never applies" in notice


def test_hub_auth_says_nothing() -> None:
    assert one_user_notice(LLMPlanner(user_limits={"bob": {"max_daily_tokens": 5}}), token="", hub=True) == ""


def test_the_planner_started_with_a_shared_token_logs_it() -> None:
    port = free_port()
    env: dict[str, Any] = {**os.environ, "NOTEBOOK_BCC_LLM_BASE_URL": "http://127.0.0.1:9/v1",
                           "NOTEBOOK_BCC_LLM_MODELS": "small", "NOTEBOOK_BCC_PLANNER_TOKEN": "t0ken"}
    for name in ("JUPYTERHUB_API_URL", "JUPYTERHUB_API_TOKEN"):
        env.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab_notebook_bcc.llm_planner", "--port", str(port)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 30
        assert process.stdout is not None
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "LLM planner at" in line:
                # The notice is the line after the address.
                lines.append(process.stdout.readline())
                break
    finally:
        process.terminate()
        process.communicate(timeout=10)
    output = "".join(lines)
    assert "every client is one user" in output, output
    assert "t0ken" not in output
