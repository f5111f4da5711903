"""The LLM planner as a service one can live with: sessions bounded and forgotten, model errors that say what
is wrong with the settings and offer to open them, and a Test that says which model answered."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from jupyterlab_notebook_bcc.llm_planner import LLMPlanner, LLMPlannerService
from jupyterlab_notebook_bcc.llm_planner.planner import PLAN_STEP
from jupyterlab_notebook_bcc.llm_planner.sessions import Caller, Session, Sessions

from .fake_openai import FakeOpenAI, Reply, cell, plan
from .helpers import free_port
from .test_llm_planner import KEY, ask, loaded_run, observation, service_for

Fetch = Callable[..., Any]


class TestSessions:
    def test_the_least_recently_used_session_goes_first_and_is_told(self) -> None:
        gone: list[tuple[str, str]] = []
        sessions = Sessions(limit=2, idle_seconds=0, on_evict=lambda caller, session, why: gone.append((caller.user, why)))
        for user in ("ada", "bob"):
            sessions.put(Caller(user, "a.ipynb"), Session())
        assert sessions.get(Caller("ada", "a.ipynb")) is not None  # ada is used again: bob is now the oldest
        sessions.put(Caller("cy", "a.ipynb"), Session())
        assert [caller.user for caller in sessions] == ["ada", "cy"]
        assert gone == [("bob", "evicted")]

    def test_a_session_without_a_request_for_its_idle_time_is_forgotten(self) -> None:
        now = [1000.0]
        gone: list[str] = []
        sessions = Sessions(limit=10, idle_seconds=60, on_evict=lambda caller, session, why: gone.append(why),
                            clock=lambda: now[0])
        sessions.put(Caller("ada", "a.ipynb"), Session())
        now[0] += 59
        assert sessions.get(Caller("ada", "a.ipynb")) is not None
        now[0] += 61
        assert sessions.get(Caller("ada", "a.ipynb")) is None
        assert gone == ["expired"] and len(sessions) == 0

    def test_a_forgotten_run_is_logged_and_goes_on_from_the_observation(self, tmp_path: Any) -> None:
        log = tmp_path / "runs.jsonl"
        with FakeOpenAI(lambda body: Reply(text=plan(("revenue_by_region", ["by_region"])))) as fake:
            service = service_for(fake, max_sessions=1, run_log=str(log))
            asyncio.run(ask(service, "planning", {"observation": observation(None, None)}, user="ada"))
            asyncio.run(ask(service, "planning", {"observation": observation(None, None)}, user="bob"))
            assert [caller.user for caller in service.core.sessions] == ["bob"]
            records = [json.loads(line) for line in log.read_text().splitlines()]
            assert [(r["user"], r["outcome"]) for r in records] == [("ada", "evicted")]
            # Ada's run goes on: the contract is read again from the task and the data's preview.
            again = asyncio.run(ask(service, "planning", {"observation": observation(
                "analysis", "deliver_answer", 0, {"data_preview": "Columns and types:\nregion object\nrevenue float64"},
                expected=["answer"])}, user="ada")).json()
            assert again["context_update"]["contract"]["deliverables"][0]["of_column"] == "region"
            assert again["context_update"]["progress_update"]["current_outputs"]["contracts"][0]["kind"] == "label"


class TestInterruptedAnswers:
    def test_an_answer_cut_before_its_first_word_is_asked_once_more(self) -> None:
        # llama.cpp's Python server ends a stream without a word when another client's request comes.
        answers = iter([Reply(text="", finish=False), Reply(text=plan(("revenue_by_region", ["by_region"])))])
        with FakeOpenAI(lambda body: next(answers)) as fake:
            service = service_for(fake)
            run = asyncio.run(loaded_run(service))
            assert len(fake.requests) == 2
            assert any(line.get("action") == "update_workflow" for line in run["lines"])

    def test_twice_cut_is_an_error_that_says_so(self) -> None:
        with FakeOpenAI(lambda body: Reply(text="", finish=False)) as fake:
            service = service_for(fake)
            answer = asyncio.run(ask(service, "generating", {"observation": observation("plan", PLAN_STEP, 1)}))
            assert answer.status == 502 and len(fake.requests) == 2
            assert "ended its answer before writing anything" in answer.json()["message"]


class TestErrorsInWords:
    def test_an_error_whose_fix_is_in_the_settings_says_so_first_and_carries_the_action(self) -> None:
        with FakeOpenAI(lambda body: Reply(status=401, error="Incorrect API key provided")) as fake:
            service = service_for(fake, response_format="json_schema")
            answer = asyncio.run(ask(service, "generating", {"observation": observation("plan", "plan_analysis", 1)}))
            body = answer.json()
            assert answer.status == 424
            first = body["message"].split(". ")[0]
            assert "HTTP" not in first and "refused the API key: set the right key in LLM Planner Settings" in first
            assert "The endpoint answered HTTP 401: Incorrect API key provided." in body["message"]
            assert body["action"] == "open-llm-settings"

    def test_an_unreachable_endpoint_and_no_model_at_all_offer_the_settings(self) -> None:
        port = free_port()
        service = LLMPlannerService(LLMPlanner(base_url=f"http://127.0.0.1:{port}/v1", models=["small"]))
        answer = asyncio.run(ask(service, "generating", {"observation": observation("plan", "plan_analysis", 1)}))
        assert answer.status == 502 and answer.json()["action"] == "open-llm-settings"
        unset = asyncio.run(ask(LLMPlannerService(LLMPlanner()), "planning", {"observation": observation(None, None)}))
        assert unset.status == 503 and unset.json()["action"] == "open-llm-settings"

    def test_a_busy_endpoint_is_not_a_settings_problem(self) -> None:
        with FakeOpenAI(lambda body: Reply(status=429, error="slow down", headers={"Retry-After": "3"})) as fake:
            service = service_for(fake, response_format="json_schema")
            answer = asyncio.run(ask(service, "generating", {"observation": observation("plan", "plan_analysis", 1)}))
            assert answer.status == 429 and "action" not in answer.json()
            assert answer.json()["message"].startswith(f"The model endpoint {fake.base_url} is limiting requests; "
                                                       "retry after 3 s.")


# --- errors a user can act on ------------------------------------------------------------------------


class TestModelErrors:
    @pytest.mark.parametrize(
        ("reply", "status", "words"),
        [
            (Reply(status=401, error="Incorrect API key provided"), 424, ["refused the API key", "c.LLMPlanner.api_key"]),
            (Reply(status=404, error="The model `small` does not exist"), 424, ["has no model 'small'"]),
            (Reply(status=429, error="Rate limit reached", headers={"Retry-After": "7"}), 429, ["retry after 7 s"]),
            (Reply(status=400, error="This model's maximum context length is 4096 tokens"), 424, ["too long"]),
        ],
    )
    def test_an_endpoint_error_before_any_cell_is_the_answers_status_and_message(
        self, reply: Reply, status: int, words: list[str]
    ) -> None:
        answers = iter([Reply(text=plan(("revenue_by_region", ["by_region"]))), reply])
        with FakeOpenAI(lambda body: next(answers)) as fake:
            service = service_for(fake, response_format="json_schema")
            asyncio.run(loaded_run(service))
            answer = asyncio.run(ask(service, "generating", {
                "observation": observation("analysis", "revenue_by_region", 1, {"df": "D"})}))
            assert answer.status == status
            message = answer.json()["message"]
            for word in words:
                assert word in message
            assert KEY not in message
            if status == 429:
                assert answer.headers is not None and answer.headers["Retry-After"] == "7"

    def test_an_unreachable_endpoint_names_its_url(self) -> None:
        port = free_port()
        service = LLMPlannerService(LLMPlanner(base_url=f"http://127.0.0.1:{port}/v1", models=["small"]))
        answer = asyncio.run(ask(service, "generating", {"observation": observation("plan", PLAN_STEP, 1, {"df": "D"})}))
        assert answer.status == 502
        assert f"127.0.0.1:{port}/v1 cannot be reached (connection refused)" in answer.json()["message"]

    def test_a_stalled_stream_is_given_up_with_its_own_message(self) -> None:
        answers = iter([Reply(text=plan(("revenue_by_region", ["by_region"]))),
                        Reply(text=cell("Sum.", "x = 1"), pieces=8, stall_after=1)])
        with FakeOpenAI(lambda body: next(answers)) as fake:
            service = service_for(fake, stall_timeout=0.5)
            asyncio.run(loaded_run(service))
            answer = asyncio.run(ask(service, "generating", {
                "observation": observation("analysis", "revenue_by_region", 1, {"df": "D"})}))
            assert answer.status == 504 and "stopped sending for 0.5 s" in answer.json()["message"]
            assert service.active_model_requests == 0

    def test_a_model_reading_a_long_prompt_is_not_taken_for_a_stalled_one(self) -> None:
        # Seen with llama.cpp on 2 cores: a 4,000-token prompt takes a minute before the first token, which
        # the stall limit (silence between pieces) counted as silence and gave up.
        answers = iter([Reply(text=plan(("revenue_by_region", ["by_region"]))),
                        Reply(text=cell("Sum.", "x = 1"), first_delay=1.2)])
        with FakeOpenAI(lambda body: next(answers)) as fake:
            service = service_for(fake, stall_timeout=0.5, first_token_timeout=5)
            asyncio.run(loaded_run(service))
            answer = asyncio.run(ask(service, "generating", {
                "observation": observation("analysis", "revenue_by_region", 1, {"df": "D"})}))
            assert answer.status == 200, answer.body
            assert b"x = 1" in answer.body

    def test_a_model_that_never_starts_is_given_up_with_its_own_message(self) -> None:
        answers = iter([Reply(text=plan(("revenue_by_region", ["by_region"]))),
                        Reply(text=cell("Sum.", "x = 1"), first_delay=3)])
        with FakeOpenAI(lambda body: next(answers)) as fake:
            service = service_for(fake, stall_timeout=5, first_token_timeout=0.5)
            asyncio.run(loaded_run(service))
            answer = asyncio.run(ask(service, "generating", {
                "observation": observation("analysis", "revenue_by_region", 1, {"df": "D"})}))
            assert answer.status == 504
            assert "sent nothing for 0.5 s" in answer.json()["message"]
            assert "c.LLMPlanner.first_token_timeout" in answer.json()["message"]
            assert service.active_model_requests == 0

    def test_without_a_model_the_planner_says_how_to_configure_one(self) -> None:
        service = LLMPlannerService(LLMPlanner())
        answer = asyncio.run(ask(service, "planning", {"observation": observation(None, None)}))
        assert answer.status == 503 and "LLM Planner Settings" in answer.json()["message"]


@pytest.fixture
def serving() -> Iterator[FakeOpenAI]:
    """An endpoint that, like llama.cpp, lists one model and answers under any name."""
    with FakeOpenAI(lambda body: Reply(text="OK"), models=["qwen2.5-coder-1.5b"]) as fake:
        yield fake


@pytest.fixture
def jp_server_config() -> dict[str, Any]:
    return {"ServerApp": {"jpserver_extensions": {"jupyterlab_notebook_bcc": True}}}


class TestConnectionTest:
    async def test_a_model_the_endpoint_lists_answers(self, jp_fetch: Fetch, serving: FakeOpenAI) -> None:
        tested = json.loads((await jp_fetch("notebook-bcc", "llm", "test", method="POST", body=json.dumps(
            {"base_url": serving.base_url, "model": "qwen2.5-coder-1.5b", "api_key": KEY}))).body)
        assert tested["ok"] is True and tested["served"] is True
        assert tested["model"] == "qwen2.5-coder-1.5b" and tested["models"] == ["qwen2.5-coder-1.5b"]
        assert tested["message"].startswith(f"The model qwen2.5-coder-1.5b answers at {serving.base_url}")

    async def test_a_name_the_endpoint_does_not_serve_is_named_though_it_answers(
        self, jp_fetch: Fetch, serving: FakeOpenAI
    ) -> None:
        tested = json.loads((await jp_fetch("notebook-bcc", "llm", "test", method="POST", body=json.dumps(
            {"base_url": serving.base_url, "model": "gpt-4o", "api_key": KEY}))).body)
        assert tested["ok"] is False and tested["served"] is False
        assert tested["model"] == "qwen2.5-coder-1.5b" and tested["action"] == "open-llm-settings"
        assert tested["message"].startswith(
            f"The endpoint at {serving.base_url} serves qwen2.5-coder-1.5b, not gpt-4o: qwen2.5-coder-1.5b answered")
        # It was asked under the name given, and answered: a server such as llama.cpp takes any name.
        assert serving.requests[-1]["model"] == "gpt-4o"

    async def test_an_endpoint_without_a_model_list_is_tested_by_its_answer(self, jp_fetch: Fetch) -> None:
        with FakeOpenAI(lambda body: Reply(text="OK")) as fake:
            tested = json.loads((await jp_fetch("notebook-bcc", "llm", "test", method="POST", body=json.dumps(
                {"base_url": fake.base_url, "model": "small"}))).body)
        assert tested["ok"] is True and tested["served"] is None and tested["models"] is None
        assert "the endpoint lists no models: the name is not checked" in tested["message"]
