"""Malformed input is a 400 with a JSON message, never "Unhandled error" (#41): a deeply nested body, a
non-integer `behavior_iteration`, an observation that is not an object, effects that are not a list. Asked
of the service directly, of the planner on its own over HTTP, and through the relay of a real Jupyter server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from tornado import httputil
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from jupyterlab_notebook_bcc.llm_planner.__main__ import make_app

from .fake_openai import FakeOpenAI, Reply, plan
from .helpers import free_port
from .test_llm_planner import KEY, Collected, observation, service_for

Fetch = Callable[..., Any]
NESTED = b"[" * 100_000 + b"]" * 100_000


def _with(iteration: Any = 1, **replace: Any) -> bytes:
    body: dict[str, Any] = {"observation": observation("analysis", "top_region", 1)}
    body["observation"]["location"]["current"]["behavior_iteration"] = iteration
    for name, value in replace.items():
        if name == "effects":
            body["observation"]["context"]["effects"] = value
        else:
            body[name] = value
    return json.dumps(body).encode()


# (path, body, words the message must hold)
CASES: list[tuple[str, bytes, str]] = [
    ("planning", NESTED, "nested"),
    ("generating", b'{"observation": ' + NESTED + b"}", "nested"),
    ("planning", _with("two"), "behavior_iteration"),
    ("generating", _with("two"), "behavior_iteration"),
    ("planning", _with(1e999), "behavior_iteration"),
    ("planning", _with(observation="not an object"), "observation"),
    ("generating", _with(observation=[1, 2]), "observation"),
    ("planning", _with(effects={"current": 5, "history": []}), "effects"),
]
IDS = ["nested-body", "nested-observation", "iteration-word", "iteration-word-generating", "iteration-infinite",
       "observation-text", "observation-list", "effects-number"]


def _planner() -> FakeOpenAI:
    return FakeOpenAI(lambda body: Reply(text=plan(("revenue_by_region", ["by_region"]))))


@pytest.mark.parametrize(("path", "body", "words"), CASES, ids=IDS)
def test_the_service_answers_400_with_a_message(path: str, body: bytes, words: str) -> None:
    with _planner() as fake:
        service = service_for(fake)
        sink = Collected()
        headers = httputil.HTTPHeaders({"Content-Type": "application/json"})
        asyncio.run(service.answer(path, "POST", headers, body, "ada", sink))
        assert sink.status == 400, sink.body[:300]
        assert words in sink.json()["message"]
        assert fake.requests == []


def test_the_planner_on_its_own_answers_400_over_http() -> None:
    async def run() -> list[tuple[int, str]]:
        with _planner() as fake:
            port = free_port()
            server = make_app(service_for(fake)).listen(port, "127.0.0.1")
            client = AsyncHTTPClient(force_instance=True)
            answers: list[tuple[int, str]] = []
            try:
                for path, body, _words in CASES:
                    response = await client.fetch(HTTPRequest(
                        f"http://127.0.0.1:{port}/{path}", method="POST", body=body,
                        headers={"Content-Type": "application/json"}), raise_error=False)
                    answers.append((response.code, json.loads(response.body)["message"]))
            finally:
                client.close()
                server.stop()
            return answers

    answers = asyncio.run(run())
    assert [code for code, _message in answers] == [400] * len(CASES)
    for (_path, _body, words), (_code, message) in zip(CASES, answers):
        assert words in message


@pytest.fixture
def fake_model() -> Any:
    with _planner() as fake:
        yield fake


@pytest.fixture
def jp_server_config(fake_model: FakeOpenAI) -> dict[str, Any]:
    return {
        "ServerApp": {"jpserver_extensions": {"jupyterlab_notebook_bcc": True}},
        "LLMPlanner": {"base_url": fake_model.base_url, "models": ["small"], "api_key": KEY},
    }


@pytest.mark.parametrize(("path", "body", "words"), CASES, ids=IDS)
async def test_the_relay_answers_400_with_the_planners_message(
    jp_fetch: Fetch, fake_model: FakeOpenAI, path: str, body: bytes, words: str
) -> None:
    response = await jp_fetch("notebook-bcc", "relay", path, method="POST", body=body,
                              headers={"Content-Type": "application/json"}, raise_error=False)
    assert response.code == 400
    message = json.loads(response.body)["message"]
    assert words in message and "Unhandled error" not in message
    assert fake_model.requests == []
