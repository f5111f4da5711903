"""The LLM planner: its loop, prompts, parsing and errors against a scripted OpenAI-compatible server (a test
double), directly and through the relay of a real Jupyter server. The real model is tested end to end in
ui-tests/tests/llm.spec.ts (llama.cpp serving Gemma 3 270M)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tornado import httputil
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from jupyterlab_notebook_bcc.llm_planner import LLMPlanner, LLMPlannerService
from jupyterlab_notebook_bcc.llm_planner.answers import (
    AnswerUnreadable,
    StreamedField,
    complete_string_field,
    first_object,
)
from jupyterlab_notebook_bcc.llm_planner.contract import is_chinese
from jupyterlab_notebook_bcc.llm_planner.planner import LOAD_STEP, PLAN_STEP, REPORT_STEP
from jupyterlab_notebook_bcc.llm_planner.report import numbers_not_in

from .fake_openai import FakeOpenAI, Reply, cell, plan
from .helpers import free_port, open_relay_request, read_until

KEY = "sk-test-secret-key-123"
Fetch = Callable[..., Any]


# --- a sink that keeps what the service wrote --------------------------------------------------------


class Collected:
    def __init__(self) -> None:
        self.status = 0
        self.headers: httputil.HTTPHeaders | None = None
        self.body = b""
        self.times: list[float] = []

    def start(self, status: int, reason: str, headers: httputil.HTTPHeaders) -> None:
        self.status = status
        self.headers = headers

    def chunk(self, data: bytes) -> None:
        self.body += data
        self.times.append(time.monotonic())

    def json(self) -> dict[str, Any]:
        return json.loads(self.body)

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.body.decode().splitlines() if line.strip()]


def service_for(fake: FakeOpenAI, **config: Any) -> LLMPlannerService:
    settings = LLMPlanner(base_url=fake.base_url, models=["small", "large"], api_key=KEY, **config)
    return LLMPlannerService(settings)


async def ask(service: LLMPlannerService, path: str, body: dict[str, Any], user: str = "ada") -> Collected:
    sink = Collected()
    headers = httputil.HTTPHeaders({"X-Notebook-Id": "analysis.ipynb", "Content-Type": "application/json"})
    await service.answer(path, "POST", headers, json.dumps(body).encode(), user, sink)
    return sink


def observation(stage: str | None, step: str | None, iteration: int = 0, variables: dict[str, Any] | None = None,
                current: list[str] | None = None, history: list[str] | None = None,
                checks: dict[str, Any] | None = None, task: str = "Which region has the highest revenue?",
                expected: list[str] | None = None) -> dict[str, Any]:
    """A DSLC observation; `checks` is the extension's `output_checks` (CONTRACTS.md §3), absent when None."""
    context: dict[str, Any] = {
        "variables": {"problem_description": task, "csv_file_path": "sales.csv", **(variables or {})},
        "effects": {"current": current or [], "history": history or []},
    }
    if checks is not None:
        context["output_checks"] = checks
    location: dict[str, Any] = {
        "current": {"stage_id": stage, "step_id": step, "behavior_id": f"behavior_{iteration:03d}" if iteration else None,
                    "behavior_iteration": iteration},
        "goals": {"step": step},
    }
    if expected:
        location["progress"] = {"steps": {"current_outputs": {"expected": expected}}}
    return {"location": location, "context": context}


def feedback(result: str = "success", behavior: str = "behavior_001") -> dict[str, Any]:
    return {"behavior_id": behavior, "actions_executed": 3, "actions_succeeded": 3, "last_action_result": result}


PREVIEW = "Shape: 12 rows x 3 columns\nColumns and types:\nregion object\nquarter int64\nrevenue float64"


async def loaded_run(service: LLMPlannerService, variables: dict[str, Any] | None = None) -> dict[str, Any]:
    """A run through its first planning, the load step and the plan step; returns the plan step's actions."""
    extra = variables or {}
    first = await ask(service, "planning", {"observation": observation(None, None, variables=extra)})
    assert first.status == 200
    load = await ask(service, "generating", {"observation": observation("data_loading", LOAD_STEP, 1, extra)})
    assert load.status == 200
    after = await ask(service, "planning", {
        "observation": observation("data_loading", LOAD_STEP, 1, {"df": "DataFrame(12×3)", **extra}, [PREVIEW]),
        "behavior_feedback": feedback(),
    })
    assert after.status == 200 and after.json()["targetAchieved"] is True
    preview = after.json()["context_update"]["variables"]
    planned = await ask(service, "generating", {
        "observation": observation("plan", PLAN_STEP, 1, {"df": "DataFrame(12×3)", **preview, **extra})})
    assert planned.status == 200, planned.body
    return {"lines": planned.lines(), "preview": preview}


def plan_of(run: dict[str, Any]) -> dict[str, Any]:
    return next(line["updated_workflow"] for line in run["lines"] if line.get("action") == "update_workflow")


# --- parsing -----------------------------------------------------------------------------------------


class TestReading:
    def test_a_fenced_or_wrapped_object_is_found(self) -> None:
        assert first_object('```json\n{"code": "x = 1"}\n```') == {"code": "x = 1"}
        assert first_object('Sure! Here it is: {"code": "x = 1"} Hope it helps.') == {"code": "x = 1"}

    def test_a_raw_line_break_inside_a_string_is_read_as_the_line_break_it_means(self) -> None:
        # Qwen2.5-Coder-1.5B under llama.cpp's JSON grammar, seen in DABench runs (105, 123, 474, 726): the code's
        # lines separated by a real line break, which strict JSON refuses; the step was given up as unreadable.
        answer = '{"explanation": "Correlate.", "code": "r = df[\'Value\'].corr(df[\'TIME\'])\nprint(round(r, 2))"}'
        assert "\n" in answer
        assert first_object(answer) == {"explanation": "Correlate.",
                                        "code": "r = df['Value'].corr(df['TIME'])\nprint(round(r, 2))"}
        assert complete_string_field(answer, "code") == "r = df['Value'].corr(df['TIME'])\nprint(round(r, 2))"
        streamed = StreamedField("code")
        assert [streamed.read(answer[:end]) for end in (40, len(answer))] == [
            None, "r = df['Value'].corr(df['TIME'])\nprint(round(r, 2))"]

    def test_an_escape_json_does_not_have_is_read_as_python_means_it(self) -> None:
        # A model writing Python's escapes in JSON: \' for a quote, \d in a pattern (JSON has neither).
        answer = r'''{"code": "print(\'a\')\nm = re.findall(\"\d+\", s)"}'''
        assert first_object(answer) == {"code": "print('a')\nm = re.findall(\"\\d+\", s)"}
        assert complete_string_field(answer, "code") == "print('a')\nm = re.findall(\"\\d+\", s)"
        # JSON's own escapes keep their meaning; a \u without its four hex digits is a backslash and a u.
        assert first_object(r'{"code": "p = \'C:\users\' + \"\u00e9\\n\""}') == {"code": "p = 'C:\\users' + \"é\\n\""}

    def test_no_object_is_a_clear_error(self) -> None:
        with pytest.raises(AnswerUnreadable, match="no JSON object"):
            first_object("I cannot help with that")

    def test_a_string_field_is_read_once_its_closing_quote_arrived(self) -> None:
        assert complete_string_field('{"explanation": "Sums rev', "explanation") is None
        assert complete_string_field('{"explanation": "Sums \\"rev\\"", "co', "explanation") == 'Sums "rev"'
        assert complete_string_field('{"explanation": "x", "code": "print(1)\\n', "code") is None

    def test_an_adversarial_answer_is_read_in_linear_time(self) -> None:
        text = "{" * 5000 + '"' * 5000
        start = time.monotonic()
        with pytest.raises(AnswerUnreadable):
            first_object(text)
        assert complete_string_field(text, "code") is None
        # Well under a second for 10 kB; a backtracking reader would take minutes.
        assert time.monotonic() - start < 5

    def test_chinese_tasks_are_recognised(self) -> None:
        assert is_chinese("哪个地区的收入最高？")
        assert not is_chinese("Which region has the highest revenue in Q3?")

    def test_numbers_the_outputs_do_not_show_are_named(self) -> None:
        outputs = "revenue\nNorth 1,234.56\nSouth 980.1"
        assert numbers_not_in("North leads with 1,234.56, South 980.1, West 777.", outputs) == ["777"]
        assert numbers_not_in("North leads with 1234.6", outputs) == []


# --- the loop ----------------------------------------------------------------------------------------


class TestLoop:
    def test_a_run_starts_with_a_plan_shown_at_once_and_loads_the_data_without_the_model(self) -> None:
        with FakeOpenAI(lambda body: Reply(text=plan(("revenue_by_region", ["by_region"])))) as fake:
            service = service_for(fake)
            first = asyncio.run(ask(service, "planning", {"observation": observation(None, None)}))
            answer = first.json()
            template = answer["context_update"]["workflow_update"]["workflowTemplate"]
            assert answer["context_update"]["workflow_update"]["provisional"] is True
            assert [s["id"] for s in template["stages"]][0] == "data_loading"
            load = asyncio.run(ask(service, "generating", {"observation": observation("data_loading", LOAD_STEP, 1)}))
            lines = load.lines()
            assert load.headers is not None and load.headers["Content-Type"] == "application/x-ndjson"
            assert [line.get("action") for line in lines] == [
                "update_title", "new_chapter", "new_section", "add", "add", "exec"]
            assert 'pd.read_csv("sales.csv")' in lines[4]["content"]
            assert fake.requests == []

    def test_after_loading_the_model_plans_from_the_task_and_the_preview(self) -> None:
        with FakeOpenAI(lambda body: Reply(text=plan(("revenue_by_region", ["by_region"])))) as fake:
            service = service_for(fake)
            run = asyncio.run(loaded_run(service))
            assert run["preview"]["data_preview"].startswith("Shape: 12 rows")
            stages = plan_of(run)["stages"]
            assert [s["id"] for s in stages] == ["data_loading", "plan", "analysis", "findings"]
            assert stages[2]["steps"][0]["expected_outputs"] == ["by_region"]
            assert stages[2]["steps"][0]["output_contracts"] == [{"name": "by_region", "kind": "any"}]
            shown = run["lines"][-1]
            assert shown["action"] == "add" and "**revenue_by_region**" in shown["content"]
            prompt = list(fake.user_prompts())[0]
            assert "Which region has the highest revenue?" in prompt and "revenue (float64)" in prompt
            # A closed question: its plan is asked as one or two steps, each variable with its kind.
            schema = json.dumps(fake.requests[0]["response_format"])
            assert fake.requests[0]["response_format"]["type"] == "json_schema"
            assert '"maxItems": 2' in schema and '"kind"' in schema
            usage = asyncio.run(ask(service, "planning", {
                "observation": observation("plan", PLAN_STEP, 1, {"df": "D"}), "behavior_feedback": feedback()})).json()
            assert usage["targetAchieved"] is True
            assert usage["usage"]["run"] == {"prompt_tokens": 100, "completion_tokens": 20, "model_calls": 1}
            assert usage["usage"]["behavior"] == {"prompt_tokens": 100, "completion_tokens": 20, "model_calls": 1}

    def test_a_behavior_streams_each_cell_as_soon_as_its_part_is_complete(self) -> None:
        answers = iter([
            Reply(text=plan(("revenue_by_region", ["by_region"]))),
            Reply(text=cell("Sum the revenue by region.", "by_region = df.groupby('region').revenue.sum()\nprint(by_region)"),
                  pieces=12, delay=0.05),
        ])
        with FakeOpenAI(lambda body: next(answers)) as fake:
            service = service_for(fake)
            asyncio.run(loaded_run(service))
            run = asyncio.run(ask(service, "generating", {
                "observation": observation("analysis", "revenue_by_region", 1, {"df": "DataFrame(12×3)"})}))
            lines = run.lines()
            kinds = [(line.get("action"), line.get("shot_type")) for line in lines]
            assert kinds == [("new_chapter", None), ("new_section", None), ("add", "dialogue"), ("add", "action"),
                             ("exec", None)]
            assert lines[3]["content"].startswith("by_region = df.groupby")
            # The explanation was written before the code was complete: it arrived in an earlier chunk.
            assert len(run.times) == 5 and run.times[2] < run.times[3] - 0.1
            assert "The code must create:\n- `by_region`\n" in list(fake.user_prompts())[1]

    def test_an_error_asks_for_a_fix_with_the_traceback_then_the_step_is_given_up(self) -> None:
        traceback = ("Traceback (most recent call last):\n  File \"<cell>\", line 1\nKeyError: 'revenu'")
        answers = iter([Reply(text=plan(("revenue_by_region", ["by_region"])))] +
                       [Reply(text=cell("Fix.", "by_region = df.groupby('region').revenue.sum()"))] * 3)
        with FakeOpenAI(lambda body: next(answers)) as fake:
            service = service_for(fake, max_tries_per_step=2)
            asyncio.run(loaded_run(service))
            variables = {"df": "DataFrame(12×3)"}
            failed = asyncio.run(ask(service, "planning", {
                "observation": observation("analysis", "revenue_by_region", 1, variables, [traceback]),
                "behavior_feedback": feedback("error")}))
            answer = failed.json()
            assert answer["targetAchieved"] is False and answer["transition"]["continue_behaviors"] is True
            assert "KeyError: 'revenu'" in answer["context_update"]["progress_update"]["focus"]
            asyncio.run(ask(service, "generating", {
                "observation": observation("analysis", "revenue_by_region", 2, variables, [traceback])}))
            assert "KeyError: 'revenu'" in list(fake.user_prompts())[-1]
            assert "Write corrected code" in list(fake.user_prompts())[-1]
            given_up = asyncio.run(ask(service, "planning", {
                "observation": observation("analysis", "revenue_by_region", 2, variables, [traceback]),
                "behavior_feedback": feedback("error", "behavior_002")})).json()
            assert given_up["transition"] == {"continue_behaviors": False, "target_achieved": False}
            assert "given up after 2 tries" in given_up["context_update"]["progress_update"]["focus"]

    def test_a_step_whose_expected_variables_are_missing_is_not_achieved(self) -> None:
        with FakeOpenAI(lambda body: Reply(text=plan(("revenue_by_region", ["by_region"])))) as fake:
            service = service_for(fake)
            asyncio.run(loaded_run(service))
            answer = asyncio.run(ask(service, "planning", {
                "observation": observation("analysis", "revenue_by_region", 1, {"df": "DataFrame"}, ["ok"]),
                "behavior_feedback": feedback()})).json()
            assert answer["targetAchieved"] is False
            assert "`by_region` is missing" in answer["context_update"]["progress_update"]["focus"]
            done = asyncio.run(ask(service, "planning", {
                "observation": observation("analysis", "revenue_by_region", 2, {"df": "DataFrame", "by_region": "Series"}),
                "behavior_feedback": feedback(behavior="behavior_002")})).json()
            assert done["targetAchieved"] is True

    def test_the_report_cites_the_outputs_and_marks_numbers_they_do_not_show(self) -> None:
        answers = iter([Reply(text=plan(("revenue_by_region", ["by_region"]))),
                        Reply(text=json.dumps({"report": "- North has the highest revenue: 1234.5 (West 999)."}))])
        with FakeOpenAI(lambda body: next(answers)) as fake:
            service = service_for(fake)
            task = "Describe how the revenue differs by region."
            asyncio.run(loaded_run(service, {"problem_description": task}))
            report = asyncio.run(ask(service, "generating", {"observation": observation(
                "findings", REPORT_STEP, 1, history=["region\nNorth 1234.5\nSouth 800.0"], task=task)})).lines()
            content = report[-1]["content"]
            # An open task with nothing to deliver: the step not reached said first, then the model's prose,
            # its unsupported sentence set apart.
            assert content.startswith("**Given up:** the step “revenue_by_region”: it was not achieved\n\n"
                                      "> **Not supported by any output**")
            assert "## Findings" not in content
            assert "> - North has the highest revenue: 1234.5 (West 999)." in content
            assert "North 1234.5" in list(fake.user_prompts())[-1]

    def test_a_task_in_chinese_gets_chinese_text(self) -> None:
        task = {"problem_description": "哪个地区的收入最高？"}
        with FakeOpenAI(lambda body: Reply(text=plan(("按地区汇总", ["by_region"])))) as fake:
            service = service_for(fake)
            load = asyncio.run(ask(service, "generating", {
                "observation": observation("data_loading", LOAD_STEP, 1, variables=task)})).lines()
            assert "读取数据文件" in load[-3]["content"]
            run = asyncio.run(loaded_run(service, task))
            assert "请用简体中文" in fake.requests[0]["messages"][-1]["content"]
            assert "Simplified Chinese" in fake.requests[0]["messages"][-1]["content"]
            assert run["lines"][-1]["content"].startswith("封闭式问题：简短的计划。")
            assert "计划：\n- **按地区汇总**" in run["lines"][-1]["content"]
            assert [stage["name"] for stage in plan_of(run)["stages"]] == ["加载数据", "计划", "Analysis", "结论"]

    def test_an_unreadable_answer_is_asked_again_with_the_problem_then_reported(self) -> None:
        answers = iter([Reply(text=plan(("revenue_by_region", ["by_region"]))),
                        Reply(text="I think you should sum it."), Reply(text="Still no JSON, sorry.")])
        with FakeOpenAI(lambda body: next(answers)) as fake:
            service = service_for(fake)
            asyncio.run(loaded_run(service))
            lines = asyncio.run(ask(service, "generating", {
                "observation": observation("analysis", "revenue_by_region", 1, {"df": "DataFrame"})})).lines()
            assert "could not be read" in fake.requests[2]["messages"][-1]["content"]
            assert lines[-1]["error"].startswith("The model's answer could not be read: no JSON object")
            assert all("action" not in line or line["action"] != "exec" for line in lines)
            # No cell was written: the step is not reached, however the behavior's feedback reads.
            judged = asyncio.run(ask(service, "planning", {
                "observation": observation("analysis", "revenue_by_region", 1, {"df": "D", "by_region": "S"}),
                "behavior_feedback": feedback()})).json()
            assert judged["targetAchieved"] is False
            assert "could not be read (no JSON object" in judged["context_update"]["progress_update"]["focus"]

    def test_a_connection_test_without_a_schema_does_not_teach_the_endpoint_to_go_without(self) -> None:
        from jupyterlab_notebook_bcc.llm_planner.model import OpenAIModel
        from jupyterlab_notebook_bcc.llm_planner.settings import ModelSettings

        with FakeOpenAI(lambda body: Reply(text=plan(("x", ["y"])))) as fake:
            model = OpenAIModel(ModelSettings(fake.base_url, ("small",), "user"), "small")
            asyncio.run(model.complete([{"role": "user", "content": "Reply with the word OK."}], None))
            asyncio.run(model.complete([{"role": "user", "content": "Plan"}], {"type": "object"}))
            assert "response_format" not in fake.requests[0]
            assert fake.requests[1]["response_format"]["type"] == "json_schema"

    def test_an_endpoint_that_refuses_json_schema_is_asked_with_json_object(self) -> None:
        def script(body: dict[str, Any]) -> Reply:
            if body.get("response_format", {}).get("type") == "json_schema":
                return Reply(status=400, error="response_format json_schema is not supported")
            return Reply(text=plan(("revenue_by_region", ["by_region"])))

        with FakeOpenAI(script) as fake:
            service = service_for(fake)
            run = asyncio.run(loaded_run(service))
            assert plan_of(run)["stages"][2]["id"] == "analysis"
            assert [r["response_format"]["type"] for r in fake.requests] == ["json_schema", "json_object"]
            assert "steps" in json.dumps(fake.requests[1]["response_format"]["schema"])

    def test_the_run_model_is_one_the_administrator_allows(self) -> None:
        with FakeOpenAI(lambda body: Reply(text=plan(("x", ["y"])))) as fake:
            service = service_for(fake)
            asyncio.run(loaded_run(service, {"llm_model": "large"}))
            assert [request["model"] for request in fake.requests] == ["large"]
            refused = asyncio.run(ask(service, "planning", {
                "observation": observation(None, None, variables={"llm_model": "gpt-5-huge"})}))
            assert refused.status == 400 and "not among the models" in refused.json()["message"]

    def test_token_budget_ends_the_run_with_a_clear_message_and_costs_are_counted(self) -> None:
        with FakeOpenAI(lambda body: Reply(text=plan(("revenue_by_region", ["by_region"])), prompt_tokens=900)) as fake:
            service = service_for(fake, max_run_tokens=500, prices={"small": {"prompt": 1.0, "completion": 2.0}})
            answer = asyncio.run(loaded_run(service))
            answer = asyncio.run(ask(service, "planning", {
                "observation": observation("plan", PLAN_STEP, 1, {"df": "D"}), "behavior_feedback": feedback()})).json()
            assert answer["usage"]["cost"] == {"run": 0.00094, "behavior": 0.00094, "currency": "USD"}
            refused = asyncio.run(ask(service, "generating", {
                "observation": observation("analysis", "revenue_by_region", 1, {"df": "D"})}))
            assert refused.status == 403
            assert "token budget (920 of 500 tokens" in refused.json()["message"]

    def test_an_endpoint_that_streams_no_usage_gets_an_estimate_marked_as_such(self) -> None:
        with FakeOpenAI(lambda body: Reply(text=plan(("revenue_by_region", ["by_region"])), usage=False)) as fake:
            service = service_for(fake)
            asyncio.run(loaded_run(service))
            answer = asyncio.run(ask(service, "planning", {
                "observation": observation("plan", PLAN_STEP, 1, {"df": "D"}), "behavior_feedback": feedback()})).json()
            run = answer["usage"]["run"]
            prompt_chars = sum(len(m["content"]) for m in fake.requests[0]["messages"])
            assert run["estimated"] is True and run["prompt_tokens"] == prompt_chars // 4
            assert run["completion_tokens"] == (len(plan(("revenue_by_region", ["by_region"]))) + 3) // 4

    def test_sessions_of_two_users_are_kept_apart(self) -> None:
        with FakeOpenAI(lambda body: Reply(text=plan(("revenue_by_region", ["by_region"])))) as fake:
            service = service_for(fake)
            asyncio.run(loaded_run(service))
            other = asyncio.run(ask(service, "planning", {"observation": observation(None, None)}, user="grace")).json()
            assert other["usage"]["run"]["model_calls"] == 0
            assert len(service.core.sessions) == 2


# --- through the relay of a real Jupyter server ------------------------------------------------------


def planning_or_cell(body: dict[str, Any]) -> Reply:
    """A plan for the plan step's request, else a cell streamed slowly (4 s)."""
    if "Plan the analysis" in body["messages"][-1]["content"]:
        return Reply(text=plan(("revenue_by_region", ["by_region"])))
    return Reply(text=cell("Sum it.", "by_region = 1"), pieces=40, delay=0.1)


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
    async def test_the_config_names_the_llm_planner_and_never_the_key(self, jp_fetch: Fetch) -> None:
        response = await jp_fetch("notebook-bcc", "config")
        config = json.loads(response.body)
        assert config["source"] == "server"
        assert config["llm"] == {"model": "small", "models": ["small", "large"],
                                 "base_url": config["llm"]["base_url"], "readonly": True}
        settings = json.loads((await jp_fetch("notebook-bcc", "llm", "settings")).body)
        assert settings["readonly"] is True and settings["api_key_set"] is True
        assert KEY not in json.dumps(config) + json.dumps(settings)

    async def test_a_run_goes_through_the_relay_and_the_key_reaches_only_the_model(
        self, jp_fetch: Fetch, fake_model: FakeOpenAI, caplog: pytest.LogCaptureFixture
    ) -> None:
        caplog.set_level(logging.DEBUG)

        async def post(path: str, body: dict[str, Any]) -> Any:
            return await jp_fetch("notebook-bcc", "relay", path, method="POST", body=json.dumps(body),
                                  headers={"Content-Type": "application/json"})

        first = json.loads((await post("planning", {"observation": observation(None, None)})).body)
        assert first["context_update"]["workflow_update"]["provisional"] is True
        await post("generating", {"observation": observation("data_loading", LOAD_STEP, 1)})
        after = json.loads((await post("planning", {
            "observation": observation("data_loading", LOAD_STEP, 1, {"df": "D"}, [PREVIEW]),
            "behavior_feedback": feedback()})).body)
        assert after["targetAchieved"] is True
        planned = await post("generating", {"observation": observation("plan", PLAN_STEP, 1, {"df": "D"})})
        assert b'"update_workflow"' in planned.body
        assert fake_model.headers[0]["authorization"] == f"Bearer {KEY}"
        assert KEY not in caplog.text
        assert KEY not in os.environ.get("NOTEBOOK_BCC_LLM_API_KEY", "")

    async def test_stop_during_a_model_stream_ends_the_model_request(
        self, jp_fetch: Fetch, relay_url: Callable[[str], str], jp_auth_header: dict[str, str],
        jp_serverapp: Any, fake_model: FakeOpenAI,
    ) -> None:
        async def post(path: str, body: dict[str, Any]) -> Any:
            return await jp_fetch("notebook-bcc", "relay", path, method="POST", body=json.dumps(body),
                                  headers={"Content-Type": "application/json"})

        await post("planning", {"observation": observation(None, None)})
        await post("planning", {"observation": observation("data_loading", LOAD_STEP, 1, {"df": "D"}, [PREVIEW]),
                                "behavior_feedback": feedback()})
        body = json.dumps({"observation": observation("analysis", "revenue_by_region", 1, {"df": "D"})}).encode()
        reader, writer = await open_relay_request(
            relay_url("generating"), "POST", {**jp_auth_header, "Content-Type": "application/json"}, body)
        await read_until(reader, b'"new_section"')
        service = jp_serverapp.web_app.settings["notebook_bcc_llm"]
        assert service.active_model_requests == 1
        writer.close()
        deadline = time.monotonic() + 10
        while service.active_model_requests and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert service.active_model_requests == 0
        assert await asyncio.get_running_loop().run_in_executor(None, fake_model.closed_early.wait, 10)
        status = json.loads((await jp_fetch("notebook-bcc", "llm", "status")).body)
        assert status["active_model_requests"] == 0

    async def test_the_administrators_settings_cannot_be_changed_by_a_user(self, jp_fetch: Fetch) -> None:
        from tornado.httpclient import HTTPClientError

        with pytest.raises(HTTPClientError) as refused:
            await jp_fetch("notebook-bcc", "llm", "settings", method="PUT",
                           body=json.dumps({"base_url": "http://127.0.0.1:1/v1", "model": "m"}))
        assert refused.value.code == 403


class TestUserSettings:
    @pytest.fixture
    def jp_server_config(self) -> dict[str, Any]:
        return {"ServerApp": {"jpserver_extensions": {"jupyterlab_notebook_bcc": True}}}

    @pytest.fixture(autouse=True)
    def _data_dir(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
        monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
        return tmp_path / "data"

    async def test_a_user_stores_tests_and_removes_their_own_model(
        self, jp_fetch: Fetch, _data_dir: Path, fake_model: FakeOpenAI
    ) -> None:
        config = json.loads((await jp_fetch("notebook-bcc", "config")).body)
        assert config["source"] == "default" and "llm" not in config
        saved = json.loads((await jp_fetch("notebook-bcc", "llm", "settings", method="PUT", body=json.dumps(
            {"base_url": fake_model.base_url, "model": "small", "api_key": KEY}))).body)
        assert saved == {"source": "user", "readonly": False, "base_url": fake_model.base_url, "model": "small",
                         "models": ["small"], "api_key_set": True}
        path = _data_dir / "notebook_bcc" / "llm_planner.json"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        config = json.loads((await jp_fetch("notebook-bcc", "config")).body)
        assert config["source"] == "user" and config["llm"]["model"] == "small"
        # A later save without a key keeps the stored one.
        await jp_fetch("notebook-bcc", "llm", "settings", method="PUT",
                       body=json.dumps({"base_url": fake_model.base_url, "model": "large"}))
        assert json.loads(path.read_text())["api_key"] == KEY
        fake_model.script = lambda body: Reply(text="OK")
        tested = json.loads((await jp_fetch("notebook-bcc", "llm", "test", method="POST", body="{}")).body)
        assert tested["ok"] is True and "The model large answers" in tested["message"]
        await jp_fetch("notebook-bcc", "llm", "settings", method="DELETE")
        assert not path.exists()
        config = json.loads((await jp_fetch("notebook-bcc", "config")).body)
        assert config["source"] == "default"

    async def test_a_wrong_key_is_named_by_the_test(self, jp_fetch: Fetch, fake_model: FakeOpenAI) -> None:
        fake_model.script = lambda body: Reply(status=401, error="invalid key")
        tested = json.loads((await jp_fetch("notebook-bcc", "llm", "test", method="POST", body=json.dumps(
            {"base_url": fake_model.base_url, "model": "small", "api_key": "wrong"}))).body)
        assert tested["ok"] is False and tested["message"].startswith(f"The model endpoint {fake_model.base_url} "
                                                                      "refused the API key: set the right key")
        assert "HTTP 401: wrong key" not in tested["message"] and "HTTP 401: invalid key" in tested["message"]
        assert tested["action"] == "open-llm-settings"

    async def test_an_invalid_url_is_refused_with_a_reason(self, jp_fetch: Fetch) -> None:
        from tornado.httpclient import HTTPClientError

        with pytest.raises(HTTPClientError) as refused:
            await jp_fetch("notebook-bcc", "llm", "settings", method="PUT",
                           body=json.dumps({"base_url": "ftp://x", "model": "m"}))
        assert refused.value.code == 400
        assert b"http:// or https://" in refused.value.response.body


# --- on its own --------------------------------------------------------------------------------------


def test_the_planner_runs_on_its_own_with_a_token(fake_model: FakeOpenAI) -> None:
    port = free_port()
    env = {**os.environ, "NOTEBOOK_BCC_LLM_BASE_URL": fake_model.base_url, "NOTEBOOK_BCC_LLM_MODELS": "small",
           "NOTEBOOK_BCC_LLM_API_KEY": KEY, "NOTEBOOK_BCC_PLANNER_TOKEN": "t0ken"}
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab_notebook_bcc.llm_planner", "--port", str(port)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        async def run() -> tuple[int, int, dict[str, Any]]:
            client = AsyncHTTPClient(force_instance=True)
            url = f"http://127.0.0.1:{port}/planning"
            body = json.dumps({"observation": observation(None, None)})
            for _ in range(100):
                try:
                    refused = await client.fetch(HTTPRequest(url, method="POST", body=body,
                                                 headers={"Content-Type": "application/json"}), raise_error=False)
                    break
                except OSError:
                    await asyncio.sleep(0.1)
            answer = await client.fetch(HTTPRequest(url, method="POST", body=body, headers={
                "Content-Type": "application/json", "Authorization": "Bearer t0ken"}), raise_error=False)
            client.close()
            return refused.code, answer.code, json.loads(answer.body)

        refused, status, answer = asyncio.run(run())
        assert refused == 401
        assert status == 200 and answer["context_update"]["workflow_update"]["provisional"] is True
    finally:
        process.terminate()
        output = process.communicate(timeout=10)[0]
    assert KEY not in output
