"""The LLM planner's own time per request, without the model: a whole run of the planner's service (planning,
the load step, the plan, analysis behaviors, the report) answered by an in-process model that answers at
once, so what is timed is the planner (reading the request, deciding, prompting, parsing, writing the
answer). Also the time from the model's stream completing a cell's part to that cell's action being written
by the service (the first cell of a behavior).

    python bench/llm_planner.py [--runs 20] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from tornado import httputil  # noqa: E402

from jupyterlab_notebook_bcc.llm_planner import LLMPlanner, LLMPlannerService  # noqa: E402
from jupyterlab_notebook_bcc.llm_planner.model import Completion  # noqa: E402
from jupyterlab_notebook_bcc.llm_planner.planner import LOAD_STEP, PLAN_STEP, REPORT_STEP  # noqa: E402

PLAN = json.dumps({"title": "Revenue", "stages": [{"name": "Analysis", "steps": [
    {"name": "Revenue by region", "goal": "Sum revenue per region.", "expected_variables": ["by_region"]},
    {"name": "Top region", "goal": "Keep the top region.", "expected_variables": ["answer"]}]}]})
CELL = json.dumps({"explanation": "Sum the revenue per region and print it.",
                   "code": "by_region = df.groupby('region')['revenue'].sum()\nprint(by_region)\n" * 4})
REPORT = json.dumps({"report": "- North leads with 1234.5.\n" * 10})
PREVIEW = "Shape: 48 rows x 6 columns\nColumns and types:\n" + "column float64\n" * 6 + "First rows:\n" + "x " * 400


class InstantModel:
    """Answers at once, streaming its text in 20 pieces, and notes when each piece was handed over."""

    def __init__(self, marks: list[float]) -> None:
        self.marks = marks

    async def complete(self, messages: list[dict[str, str]], schema: Any, on_text: Any = None,
                       temperature: float | None = None) -> Completion:
        prompt = messages[-1]["content"]
        text = PLAN if "Each step: a short name" in prompt else REPORT if "findings report" in prompt else CELL
        if on_text is not None:
            size = max(1, len(text) // 20)
            for end in range(size, len(text) + size, size):
                self.marks.append(time.perf_counter())
                on_text(text[:end])
                await asyncio.sleep(0)
        return Completion(text, 800, 120, 0.0, "json_schema")


class Sink:
    def __init__(self) -> None:
        self.status = 0
        self.times: list[float] = []
        self.body = b""

    def start(self, status: int, reason: str, headers: Any) -> None:
        self.status = status

    def chunk(self, data: bytes) -> None:
        self.times.append(time.perf_counter())
        self.body += data


def observation(stage: str | None, step: str | None, iteration: int, variables: dict[str, Any],
                current: list[str]) -> dict[str, Any]:
    return {
        "location": {"current": {"stage_id": stage, "step_id": step, "behavior_id": f"behavior_{iteration:03d}",
                                 "behavior_iteration": iteration}, "goals": {"step": step}},
        "context": {"variables": {"problem_description": "Which region has the highest revenue?",
                                  "csv_file_path": "sales.csv", **variables},
                    "effects": {"current": current, "history": [PREVIEW] * 3}},
    }


async def run_once(service: LLMPlannerService, marks: list[float], user: str) -> tuple[list[float], list[float]]:
    """One whole run; returns the service's own time per request (ms) and each behavior's first-cell delay."""
    own: list[float] = []
    first_cell: list[float] = []
    headers = httputil.HTTPHeaders({"X-Notebook-Id": "bench.ipynb"})
    variables = {"df": "DataFrame(48×6)", "data_preview": PREVIEW}

    async def ask(path: str, body: dict[str, Any]) -> Sink:
        sink = Sink()
        marks.clear()
        start = time.perf_counter()
        await service.answer(path, "POST", headers, json.dumps(body).encode(), user, sink)
        own.append((time.perf_counter() - start) * 1000)
        assert sink.status == 200, sink.body
        return sink

    def feedback(iteration: int) -> dict[str, Any]:
        return {"behavior_id": f"behavior_{iteration:03d}", "last_action_result": "success"}

    await ask("planning", {"observation": observation(None, None, 0, {}, [])})
    await ask("generating", {"observation": observation("data_loading", LOAD_STEP, 1, {}, [])})
    await ask("planning", {"observation": observation("data_loading", LOAD_STEP, 1, variables, [PREVIEW]),
                           "behavior_feedback": feedback(1)})
    await ask("generating", {"observation": observation("plan", PLAN_STEP, 1, variables, [])})
    await ask("planning", {"observation": observation("plan", PLAN_STEP, 1, variables, []),
                           "behavior_feedback": feedback(1)})
    for step, created in (("revenue_by_region", "by_region"), ("top_region", "answer")):
        await ask("planning", {"observation": observation("analysis", step, 0, variables, [])})
        sink = await ask("generating", {"observation": observation("analysis", step, 1, variables, [])})
        # The explanation's closing quote arrived in the piece handed over just before the first action line.
        first = sink.times[0]
        handed = [mark for mark in marks if mark <= first]
        first_cell.append((first - handed[-1]) * 1000)
        variables = {**variables, created: "Series(4)"}
        await ask("planning", {"observation": observation("analysis", step, 1, variables, ["ok"]),
                               "behavior_feedback": feedback(1)})
    await ask("generating", {"observation": observation("findings", REPORT_STEP, 1, variables, [])})
    await ask("planning", {"observation": observation("findings", REPORT_STEP, 1, variables, []),
                           "behavior_feedback": feedback(1)})
    return own, first_cell


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


async def main_async(runs: int) -> dict[str, Any]:
    marks: list[float] = []
    service = LLMPlannerService(LLMPlanner(base_url="http://127.0.0.1:9/v1", models=["bench"]))
    service.core.calls.factory = lambda settings, model: InstantModel(marks)
    own: list[float] = []
    first: list[float] = []
    for index in range(runs):
        run_own, run_first = await run_once(service, marks, f"user{index}")
        own += run_own
        first += run_first
    return {
        "runs": runs,
        "requests": len(own),
        "own_ms": {"p50": statistics.median(own), "p95": percentile(own, 0.95)},
        "first_cell_ms": {"p50": statistics.median(first), "p95": percentile(first, 0.95)},
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    figures = asyncio.run(main_async(args.runs))
    print(
        f"LLM planner, {figures['requests']} requests: own time p50 {figures['own_ms']['p50']:.2f} ms, "
        f"p95 {figures['own_ms']['p95']:.2f} ms; first cell after the model completed it: "
        f"p95 {figures['first_cell_ms']['p95']:.2f} ms"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
