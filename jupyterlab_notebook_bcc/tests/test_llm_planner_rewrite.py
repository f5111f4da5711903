"""A retry of the LLM planner fixes its own cell (`rewrite_cell`) when the client offers the action, against a
scripted OpenAI-compatible server; a client that does not offer it gets a new cell, as before."""

from __future__ import annotations

import asyncio
from typing import Any

from jupyterlab_notebook_bcc.llm_planner import rewrite
from jupyterlab_notebook_bcc.llm_planner.observation import read_request

from .fake_openai import FakeOpenAI, Reply, cell, plan
from .test_llm_planner import ask, loaded_run, observation, service_for
from .test_llm_planner_delivery import Script, behave, label_check, start, steps, variables

TRACEBACK = "Traceback (most recent call last):\n  File \"<cell>\", line 1\nKeyError: 'revenu'"
FIX = "by_region = df.groupby('region').revenue.sum()"
OFFER = {"stream": True, "optional_actions": ["rewrite_cell"]}


class TestTheRewriteOfAFailedCell:
    def test_only_after_a_failure_and_when_the_client_offers_the_action(self) -> None:
        offered = read_request({"options": OFFER, "observation": {}})
        not_offered = read_request({"options": {"stream": True}})
        assert rewrite.offers_rewrite(offered)
        assert not rewrite.offers_rewrite(not_offered)
        assert not rewrite.offers_rewrite(read_request({"options": {"optional_actions": "rewrite_cell"}}))
        assert rewrite.failed_cell(offered, "totals", True) == "lastAddedCellId"
        assert rewrite.failed_cell(offered, "totals", False) is None
        assert rewrite.failed_cell(not_offered, "totals", True) is None

    def test_the_cell_the_observation_names_for_the_step_comes_first(self) -> None:
        body = read_request({
            "options": OFFER,
            "observation": {
                "context": {
                    "cell_attempts": [
                        {
                            "cell_id": "c-1",
                            "store_id": None,
                            "step_id": "other",
                            "attempts": 2,
                            "code": "",
                            "failed": [],
                        },
                        {
                            "cell_id": "c-2",
                            "store_id": "totals.code",
                            "step_id": "totals",
                            "attempts": 2,
                            "code": "",
                            "failed": [],
                        },
                    ]
                }
            },
        })
        assert rewrite.failed_cell(body, "totals", True) == "totals.code"
        assert rewrite.failed_cell(body, "other", True) == "c-1"

    def test_the_actions_rewrite_and_run_the_cell_or_add_a_new_one(self) -> None:
        assert rewrite.code_actions(FIX, "c-2") == [
            {"action": "rewrite_cell", "codecell_id": "c-2", "content": FIX},
            {"action": "exec", "codecell_id": "c-2", "need_output": True},
        ]
        assert [a["action"] for a in rewrite.code_actions(FIX, None)] == ["add", "exec"]


def _retry(options: dict[str, Any]) -> list[dict[str, Any]]:
    """The analysis step's second behavior, after its first code failed with TRACEBACK."""
    answers = iter([Reply(text=plan(("revenue_by_region", ["by_region"]))), Reply(text=cell("Fixed the column.", FIX))])
    with FakeOpenAI(lambda body: next(answers)) as fake:
        service = service_for(fake)
        asyncio.run(loaded_run(service))
        variables = {"df": "DataFrame(12×3)"}
        retried = asyncio.run(
            ask(
                service,
                "generating",
                {
                    "observation": observation("analysis", "revenue_by_region", 2, variables, [TRACEBACK]),
                    "options": options,
                },
            )
        )
        assert retried.status == 200, retried.body
        return retried.lines()


class TestTheLLMPlannerRetry:
    def test_rewrites_the_failed_cell_when_the_client_offers_it(self) -> None:
        lines = _retry(OFFER)
        assert lines == [
            {"action": "rewrite_cell", "codecell_id": "lastAddedCellId", "content": FIX},
            {"action": "exec", "codecell_id": "lastAddedCellId", "need_output": True},
        ]

    def test_adds_a_new_cell_with_its_explanation_for_a_client_that_does_not(self) -> None:
        lines = _retry({"stream": True})
        assert [(line.get("action"), line.get("shot_type")) for line in lines] == [
            ("add", "dialogue"),
            ("add", "action"),
            ("exec", None),
        ]
        assert lines[1]["content"] == FIX


class TestARetryTheMemoryHolds:
    def test_a_failed_check_then_the_held_retry_rewrites_the_cell_and_repeated_code_still_is_not_sent(self) -> None:
        """The step's first code ran but its check failed (no traceback): the planner's memory holds the
        try, so the retry's code is the rewrite of that cell; code that failed before is still never sent."""
        first = "answer = df.groupby('region')['revenue'].sum().values.argmax()"
        fixed = "answer = df.groupby('region')['revenue'].sum().idxmax()"
        script = Script(steps(("Top region", [("answer", "label")])), [cell("Sum.", first), cell("Label.", fixed)])
        with FakeOpenAI(script) as fake:
            service = service_for(fake)
            run = start(service)
            checks = {"answer": label_check("0", False, "a row number where a label was asked")}
            lines, judged = behave(service, "answer", "top_region", 1, variables(run), [], checks)
            assert [line["action"] for line in lines if line.get("shot_type") != "dialogue"][-2:] == ["add", "exec"]
            assert judged["transition"]["continue_behaviors"] is True
            retried = asyncio.run(ask(service, "generating", {
                "observation": observation("answer", "top_region", 2, variables(run)), "options": OFFER}))
            assert retried.lines() == [
                {"action": "rewrite_cell", "codecell_id": "lastAddedCellId", "content": fixed},
                {"action": "exec", "codecell_id": "lastAddedCellId", "need_output": True},
            ]
