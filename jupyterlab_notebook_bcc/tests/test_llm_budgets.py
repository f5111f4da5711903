"""Budgets that hold (issue #41): a model call cut by its client or by Stop is charged what it consumed; a call
reserves its worst case before it starts, so requests in parallel cannot pass a budget together; a user has at
most `max_streams_per_user` model streams at once, in process and on its own; and the text a request puts into
a prompt is bounded. Against the scripted OpenAI-compatible server (fake_openai.py)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tornado import httputil

from jupyterlab_notebook_bcc.llm_planner import LLMPlanner, LLMPlannerService
from jupyterlab_notebook_bcc.llm_planner.__main__ import make_app
from jupyterlab_notebook_bcc.llm_planner.planner import LOAD_STEP
from jupyterlab_notebook_bcc.llm_planner.service import LocalPlannerRequest

from .fake_hub import FakeHub
from .fake_openai import FakeOpenAI, Reply, cell
from .helpers import free_port, open_relay_request, read_until
from .test_hub_planner import TOKENS, Answer, with_planner
from .test_llm_planner import (
    KEY,
    PREVIEW,
    Collected,
    ask,
    feedback,
    observation,
    planning_or_cell,
    service_for,
)

Fetch = Callable[..., Any]
STEP = "revenue_by_region"


def cell_request(notebook_step: str = STEP, task: str = "Which region has the highest revenue?",
                 iteration: int = 1) -> dict[str, Any]:
    return {"observation": observation("analysis", notebook_step, iteration, {"df": "DataFrame(12×3)"}, task=task)}


def headers_for(notebook: str) -> httputil.HTTPHeaders:
    return httputil.HTTPHeaders({"X-Notebook-Id": notebook, "Content-Type": "application/json"})


class ClosesAtTheCode(Collected):
    """A client that goes away as soon as the code line arrives, as a script reading only the code does."""

    def __init__(self) -> None:
        super().__init__()
        self.request: LocalPlannerRequest | None = None

    def chunk(self, data: bytes) -> None:
        super().chunk(data)
        if b'"shot_type": "action"' in data and self.request is not None:
            self.request.close()


# A cell answer that goes on after its code (the model still writes), slowly enough that the client leaves first.
LONG_CELL = json.dumps({"explanation": "Sum the revenue of each region.",
                        "code": "by_region = df.groupby('region')['revenue'].sum()\nprint(by_region)",
                        "notes": "The groupby sums each region's revenue. " * 6})


def day_used(service: LLMPlannerService) -> int:
    return sum(service.accounting.used.values())


class TestCutCallsAreCharged:
    def test_calls_a_client_closes_at_the_code_line_are_charged_an_estimate_marked_as_such(
        self, tmp_path: Path
    ) -> None:
        log = tmp_path / "runs.jsonl"
        with FakeOpenAI(lambda body: Reply(text=LONG_CELL, pieces=60, delay=0.03, prompt_tokens=150,
                                           completion_tokens=50)) as fake:
            service = service_for(fake, run_log=str(log))

            async def five_cut_calls() -> list[int]:
                received: list[int] = []
                for index in range(5):
                    sink = ClosesAtTheCode()
                    request = LocalPlannerRequest(service, "generating", "POST", headers_for("analysis.ipynb"),
                                                  json.dumps(cell_request(iteration=index + 1)).encode(), "ada")
                    sink.request = request
                    assert await request.send(sink) is False
                    assert any(line.get("shot_type") == "action" for line in sink.lines())
                    received.append(len(sink.body))
                return received

            asyncio.run(ask(service, "planning", {"observation": observation(None, None)}))
            asyncio.run(five_cut_calls())
            assert len(fake.requests) == 5
            # None of the five reached its usage chunk: each is charged its prompt's characters and the text it
            # received, about four characters a token.
            prompt_tokens = sum(sum(len(m["content"]) for m in body["messages"]) // 4 for body in fake.requests)
            counted = day_used(service)
            assert counted >= prompt_tokens + 5 * 20
            assert counted <= prompt_tokens + 5 * ((len(LONG_CELL) + 3) // 4)
            answer = asyncio.run(ask(service, "planning", {
                "observation": observation("analysis", STEP, 5, {"df": "D"}), "behavior_feedback": feedback(
                    behavior="behavior_005")})).json()
            run = answer["usage"]["run"]
            assert run["estimated"] is True and run["model_calls"] == 5
            assert run["prompt_tokens"] + run["completion_tokens"] == counted
            # A new run of the notebook: the cut run's line in the run log says its count is an estimate.
            asyncio.run(ask(service, "planning", {"observation": observation(None, None)}))
            record = json.loads(log.read_text().splitlines()[-1])
            assert record["outcome"] == "replaced" and record["tokens"] == counted and record["estimated"] is True

    def test_a_call_that_fails_after_its_stream_opened_is_charged_and_a_refused_one_is_not(self) -> None:
        stalled = Reply(text=LONG_CELL, pieces=20, stall_after=1)
        with FakeOpenAI(lambda body: stalled) as fake:
            service = service_for(fake, stall_timeout=0.5)
            answer = asyncio.run(ask(service, "generating", cell_request()))
            assert answer.status == 504
            prompt_tokens = sum(len(m["content"]) for m in fake.requests[0]["messages"]) // 4
            assert day_used(service) >= prompt_tokens
        with FakeOpenAI(lambda body: Reply(status=401, error="Incorrect API key provided")) as fake:
            service = service_for(fake, response_format="json_schema")
            assert asyncio.run(ask(service, "generating", cell_request())).status == 424
            assert day_used(service) == 0


    def test_the_service_on_its_own_charges_a_client_that_leaves_at_the_code_line(self) -> None:
        with FakeOpenAI(lambda body: Reply(text=LONG_CELL, pieces=60, delay=0.03)) as fake:
            service = service_for(fake)

            async def leave_at_the_code() -> None:
                port = free_port()
                server = make_app(service).listen(port, "127.0.0.1")
                try:
                    reader, writer = await open_relay_request(
                        f"http://127.0.0.1:{port}/generating", "POST",
                        {"Content-Type": "application/json", "X-Notebook-Id": "a.ipynb"},
                        json.dumps(cell_request()).encode())
                    await read_until(reader, b'"shot_type": "action"')
                    writer.close()
                    deadline = time.monotonic() + 10
                    while not day_used(service) and time.monotonic() < deadline:
                        await asyncio.sleep(0.05)
                finally:
                    server.stop()

            asyncio.run(leave_at_the_code())
            prompt_tokens = sum(len(m["content"]) for m in fake.requests[0]["messages"]) // 4
            assert day_used(service) > prompt_tokens
            assert service.accounting.reserved == {} and service.core.calls.streams == {}


class TestReservations:
    def test_requests_in_parallel_cannot_pass_a_day_budget_together(self, tmp_path: Path) -> None:
        # Each call costs 1,200 tokens; the day has 1,500.
        slow = Reply(text=cell("Sum it.", "by_region = 1"), pieces=10, delay=0.1, prompt_tokens=1000,
                     completion_tokens=200)
        with FakeOpenAI(lambda body: slow) as fake:
            service = service_for(fake, max_daily_tokens=1500, max_streams_per_user=0, run_log=str(tmp_path / "r"))

            async def five_at_once() -> list[Collected]:
                sinks = [Collected() for _ in range(5)]
                await asyncio.gather(*(
                    service.answer("generating", "POST", headers_for(f"n{index}.ipynb"),
                                   json.dumps(cell_request()).encode(), "ada", sink)
                    for index, sink in enumerate(sinks)))
                return sinks

            sinks = asyncio.run(five_at_once())
            passed = [sink for sink in sinks if sink.status == 200]
            refused = [sink for sink in sinks if sink.status == 403]
            assert len(passed) == 1 and len(refused) == 4, [sink.status for sink in sinks]
            for sink in refused:
                assert "token budget for today" in sink.json()["message"]
                assert "c.LLMPlanner.max_daily_tokens" in sink.json()["message"]
            assert day_used(service) == 1200
            assert service.accounting.reserved == {}


class TestConcurrentStreams:
    def test_a_user_has_at_most_max_streams_per_user_model_streams_and_others_go_on(self) -> None:
        slow = Reply(text=cell("Sum it.", "by_region = 1"), pieces=10, delay=0.1)
        with FakeOpenAI(lambda body: slow) as fake:
            service = service_for(fake, max_streams_per_user=2)

            async def at_once() -> list[Collected]:
                callers = [("ada", "a.ipynb"), ("ada", "b.ipynb"), ("ada", "c.ipynb"), ("grace", "a.ipynb")]
                sinks = [Collected() for _ in callers]

                async def one(index: int) -> None:
                    user, notebook = callers[index]
                    await asyncio.sleep(0.05 * index)
                    await service.answer("generating", "POST", headers_for(notebook),
                                         json.dumps(cell_request()).encode(), user, sinks[index])

                await asyncio.gather(*(one(index) for index in range(len(callers))))
                return sinks

            sinks = asyncio.run(at_once())
            assert [sink.status for sink in sinks] == [200, 200, 429, 200]
            message = sinks[2].json()["message"]
            assert "2 model requests" in message and "c.LLMPlanner.max_streams_per_user" in message
            assert len(fake.requests) == 3
            # Once the first ones ended, the user may start another.
            again = asyncio.run(ask(service, "generating", cell_request()))
            assert again.status == 200

    def test_the_cap_holds_for_the_service_on_its_own_per_hub_user(self) -> None:
        slow = Reply(text=cell("Sum it.", "by_region = 1"), pieces=10, delay=0.1)
        with FakeOpenAI(lambda body: slow) as fake, FakeHub(TOKENS) as hub:
            service = LLMPlannerService(LLMPlanner(base_url=fake.base_url, models=["small"], api_key=KEY,
                                                   max_streams_per_user=1))

            async def test(post: Any) -> None:
                async def late(token: str, notebook: str, wait: float) -> Answer:
                    await asyncio.sleep(wait)
                    return await post("generating", cell_request(), token, notebook)  # type: ignore[no-any-return]

                answers = await asyncio.gather(late("alice-token", "a.ipynb", 0), late("alice-token", "b.ipynb", 0.3),
                                               late("bob-token", "a.ipynb", 0.3))
                assert [answer.status for answer in answers] == [200, 429, 200]
                assert "c.LLMPlanner.max_streams_per_user" in answers[1].json()["message"]

            with_planner(service, hub, test)


class TestPromptText:
    def test_task_focus_and_goal_enter_a_prompt_bounded_and_marked(self) -> None:
        with FakeOpenAI(lambda body: Reply(text=cell("Sum it.", "by_region = 1"))) as fake:
            service = service_for(fake)
            huge = "Which region has the highest revenue? " + "x" * 200_000
            body = cell_request("unknown_step", task=huge, iteration=2)
            location = body["observation"]["location"]
            location["goals"]["step"] = "Compute it. " + "g" * 100_000
            location["progress"] = {"behaviors": {"focus": "Look again. " + "f" * 100_000}}
            assert asyncio.run(ask(service, "generating", body)).status == 200
            prompt = "\n".join(m["content"] for m in fake.requests[0]["messages"])
            assert len(prompt) < 20_000
            assert prompt.count("[… cut]") >= 3
            assert "Which region has the highest revenue?" in prompt and "Look again." in prompt


# --- through the relay of a real Jupyter server ------------------------------------------------------


@pytest.fixture
def fake_model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(planning_or_cell) as fake:
        yield fake


@pytest.fixture
def jp_server_config(fake_model: FakeOpenAI) -> dict[str, Any]:
    return {
        "ServerApp": {"jpserver_extensions": {"jupyterlab_notebook_bcc": True}},
        "LLMPlanner": {"base_url": fake_model.base_url, "models": ["small", "large"], "api_key": KEY},
    }


class TestThroughTheRelay:
    async def test_stop_is_charged_what_the_model_consumed(
        self, jp_fetch: Fetch, relay_url: Callable[[str], str], jp_auth_header: dict[str, str],
        jp_serverapp: Any, fake_model: FakeOpenAI,
    ) -> None:
        async def post(path: str, body: dict[str, Any]) -> Any:
            return await jp_fetch("notebook-bcc", "relay", path, method="POST", body=json.dumps(body),
                                  headers={"Content-Type": "application/json"})

        await post("planning", {"observation": observation(None, None)})
        await post("planning", {"observation": observation("data_loading", LOAD_STEP, 1, {"df": "D"}, [PREVIEW]),
                                "behavior_feedback": feedback()})
        body = json.dumps({"observation": observation("analysis", STEP, 1, {"df": "D"})}).encode()
        reader, writer = await open_relay_request(
            relay_url("generating"), "POST", {**jp_auth_header, "Content-Type": "application/json"}, body)
        await read_until(reader, b'"new_section"')
        service = jp_serverapp.web_app.settings["notebook_bcc_llm"]
        writer.close()
        deadline = time.monotonic() + 10
        while service.active_model_requests and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert service.active_model_requests == 0
        prompt_tokens = sum(len(m["content"]) for m in fake_model.requests[-1]["messages"]) // 4
        assert day_used(service) >= prompt_tokens > 0
        assert service.accounting.reserved == {}

    async def test_the_cap_holds_in_process(
        self, jp_fetch: Fetch, jp_serverapp: Any, fake_model: FakeOpenAI
    ) -> None:
        jp_serverapp.web_app.settings["notebook_bcc_llm"].config.max_streams_per_user = 1
        # The test server names a new user for each token-authenticated request: its cookie keeps one.
        first = await jp_fetch("notebook-bcc", "llm", "status")
        cookie = "; ".join(value.split(";", 1)[0] for value in first.headers.get_list("Set-Cookie"))
        assert cookie

        async def cell_of(notebook: str, wait: float) -> Any:
            await asyncio.sleep(wait)
            return await jp_fetch("notebook-bcc", "relay", "generating", method="POST",
                                  body=json.dumps(cell_request()), raise_error=False,
                                  headers={"Content-Type": "application/json", "X-Notebook-Id": notebook,
                                           "Cookie": cookie})

        first, second = await asyncio.gather(cell_of("a.ipynb", 0), cell_of("b.ipynb", 1.0))
        assert first.code == 200
        assert second.code == 429
        assert "c.LLMPlanner.max_streams_per_user" in json.loads(second.body)["message"]
