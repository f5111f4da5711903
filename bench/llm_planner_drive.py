"""A development driver for the LLM planner: it plays the extension's part against a real IPython kernel, so a
task runs end to end in Python, on a real model, without a browser. It stands in for the extension only
while the planner is developed; the evaluation proper goes through the browser (`make eval`, docs/eval.md).

    python bench/llm_planner_drive.py sales [--tasks top_region,mean_price]      # the sales questions
    python bench/llm_planner_drive.py dabench --ids 0,5,9 [--dabench DIR]         # InfiAgent-DABench questions
    python bench/llm_planner_drive.py task "Which region …?" --csv data.csv       # one task of your own

It uses the in-process planner service (the package's defaults, or `--steps` / `--tries`), the endpoint
`--base-url` (default the shared llama.cpp server, http://127.0.0.1:8190/v1) and model `--model`. After each
behavior it checks the step's and the run's contracts in the kernel as CONTRACTS.md §4 says and sends the
results as `observation.context.output_checks`. It prints each run's plan, its answer, whether it is right,
its tokens and seconds, and writes the notebooks' cells and the report to `--out` (JSON lines) for reading.
DABench data is read where it lies (`--dabench`, default ../shared/dabench); nothing of it is copied.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))

from drive_kernel import CHECK_CODE, VARIABLES_CODE, sales_csv, sales_tasks, score_dabench
from jupyter_client.manager import KernelManager
from tornado import httputil

from jupyterlab_notebook_bcc.llm_planner import LLMPlanner, LLMPlannerService
from jupyterlab_notebook_bcc.llm_planner.observation import plain_value

MARK = "__bcc_json__"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class Kernel:
    """A real IPython kernel in a directory of its own."""

    def __init__(self, cwd: Path) -> None:
        self.manager = KernelManager(kernel_name="python3")
        self.manager.start_kernel(cwd=str(cwd))
        self.client = self.manager.client()
        self.client.start_channels()
        self.client.wait_for_ready(timeout=60)
        self.run(CHECK_CODE + "\n" + VARIABLES_CODE, quiet=True)

    def run(self, code: str, quiet: bool = False, timeout: float = 120) -> tuple[str, bool]:
        """The outputs of `code` as one text (the extension's effect) and whether it raised."""
        msg_id = self.client.execute(code, store_history=not quiet)
        texts: list[str] = []
        failed = False
        deadline = time.monotonic() + timeout
        while True:
            try:
                message = self.client.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
            except Exception:  # noqa: BLE001 - queue.Empty: the cell ran too long
                self.manager.interrupt_kernel()
                texts.append(f"The cell did not finish within {timeout:g} s and was interrupted.")
                failed = True
                break
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = message["msg_type"], message["content"]
            if kind == "stream":
                texts.append(content["text"])
            elif kind in ("execute_result", "display_data"):
                data = content.get("data", {})
                texts.append(data.get("text/plain", "") + ("\n" if "text/plain" in data else ""))
            elif kind == "error":
                failed = True
                texts.append(ANSI.sub("", "\n".join(content.get("traceback") or [f"{content['ename']}: {content['evalue']}"])))
            elif kind == "status" and content.get("execution_state") == "idle":
                break
        return "".join(texts).strip(), failed

    def json(self, expression: str) -> Any:
        text, failed = self.run(f"print({MARK!r} + __import__('json').dumps({expression}, default=str))", quiet=True)
        if failed or MARK not in text:
            return None
        return json.loads(text.split(MARK, 1)[1].splitlines()[0])

    def close(self) -> None:
        self.client.stop_channels()
        self.manager.shutdown_kernel(now=True)


class Sink:
    def __init__(self) -> None:
        self.status = 0
        self.body = b""

    def start(self, status: int, reason: str, headers: Any) -> None:
        self.status = status

    def chunk(self, data: bytes) -> None:
        self.body += data

    def json(self) -> dict[str, Any]:
        return json.loads(self.body)

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.body.decode().splitlines() if line.strip()]


class Client:
    """The extension's part of the loop, as docs/protocol.md describes it, reduced to what a run needs."""

    def __init__(self, service: LLMPlannerService, kernel: Kernel, task: str, csv: str, max_behaviors: int = 40) -> None:
        self.service = service
        self.kernel = kernel
        self.variables: dict[str, Any] = {"problem_description": task, "csv_file_path": csv}
        self.template: dict[str, Any] = {}
        self.contract: dict[str, Any] = {}
        self.current: list[str] = []
        self.history: list[str] = []
        self.checks: dict[str, Any] = {}
        self.cells: list[dict[str, str]] = []
        self.given_up: list[str] = []
        self.usage: dict[str, Any] = {}
        self.max_behaviors = max_behaviors
        self.headers = httputil.HTTPHeaders({"X-Notebook-Id": "drive.ipynb", "Content-Type": "application/json"})

    async def post(self, path: str, body: dict[str, Any]) -> Sink:
        sink = Sink()
        await self.service.answer(path, "POST", self.headers, json.dumps(body).encode(), "driver", sink)
        if sink.status != 200:
            raise RuntimeError(f"/{path} answered {sink.status}: {sink.body.decode()[:500]}")
        return sink

    def observation(self, stage: str | None, step: str | None, iteration: int, expected: list[str]) -> dict[str, Any]:
        return {
            "location": {
                "current": {"stage_id": stage, "step_id": step,
                            "behavior_id": f"behavior_{iteration:03d}" if iteration else None,
                            "behavior_iteration": iteration},
                "goals": {"step": step},
                "progress": {"steps": {"current_outputs": {"expected": expected}}},
            },
            "context": {"variables": {**self.variables, **self.kernel_variables()},
                        "effects": {"current": list(self.current), "history": self.history[-50:]},
                        "output_checks": dict(self.checks)},
        }

    def kernel_variables(self) -> dict[str, Any]:
        return self.kernel.json("_bcc_variables()") or {}

    def apply(self, update: dict[str, Any]) -> None:
        workflow = update.get("workflow_update") or {}
        if isinstance(workflow.get("workflowTemplate"), dict):
            self.template = workflow["workflowTemplate"]
        if isinstance(update.get("variables"), dict):
            self.variables.update(update["variables"])
        if isinstance(update.get("contract"), dict):
            self.contract = update["contract"]

    def steps(self) -> list[tuple[str, dict[str, Any]]]:
        return [(stage["id"], step) for stage in self.template.get("stages", []) for step in stage.get("steps", [])]

    def check(self, step: dict[str, Any]) -> None:
        contracts = [*step.get("output_contracts", []), *self.contract.get("deliverables", [])]
        if contracts:
            self.checks.update(self.kernel.json(f"_bcc_check({json.dumps(contracts)!r})") or {})

    async def run(self) -> None:
        first = (await self.post("planning", {"observation": self.observation(None, None, 0, [])})).json()
        self.apply(first.get("context_update", {}))
        index, behaviors = 0, 0
        while index < len(self.steps()) and behaviors < self.max_behaviors:
            stage_id, step = self.steps()[index]
            iteration = 1
            while behaviors < self.max_behaviors:
                behaviors += 1
                self.history += self.current
                self.current = []
                expected = list(step.get("expected_outputs", []))
                lines = (await self.post("generating", {
                    "observation": self.observation(stage_id, step["id"], iteration, expected)})).lines()
                result = "success"
                for line in lines:
                    if line.get("action") == "update_workflow":
                        self.template = line["updated_workflow"]
                    elif line.get("action") == "add":
                        self.cells.append({"type": line.get("shot_type", ""), "source": line.get("content", "")})
                    elif line.get("action") == "exec":
                        text, failed = self.kernel.run(self.cells[-1]["source"])
                        self.cells[-1]["output"] = text
                        self.current.append(text)
                        result = "error" if failed else result
                    elif "error" in line:
                        self.cells.append({"type": "error", "source": line["error"]})
                fresh = next((s for sid, s in self.steps() if s["id"] == step["id"]), step)
                self.check(fresh)
                answer = (await self.post("planning", {
                    "observation": self.observation(stage_id, step["id"], iteration, list(fresh.get("expected_outputs", []))),
                    "behavior_feedback": {"behavior_id": f"behavior_{iteration:03d}", "last_action_result": result},
                })).json()
                self.apply(answer.get("context_update", {}))
                self.usage = answer.get("usage", self.usage)
                focus = answer.get("context_update", {}).get("progress_update", {}).get("focus", "")
                print(f"    {step['id']} try {iteration}: {result}, "
                      f"{'achieved' if answer.get('targetAchieved') else focus[-160:]!r}", file=sys.stderr, flush=True)
                transition = answer.get("transition", {})
                if transition.get("continue_behaviors"):
                    iteration += 1
                    continue
                if not transition.get("target_achieved"):
                    self.given_up.append(f"{step['id']}: {answer['context_update']['progress_update']['focus']}")
                break
            ids = [s["id"] for _sid, s in self.steps()]
            index = ids.index(step["id"]) + 1 if step["id"] in ids else index + 1

    def report(self) -> str:
        dialogues = [cell["source"] for cell in self.cells if cell["type"] == "dialogue"]
        return dialogues[-1] if dialogues else ""


def service_for(args: argparse.Namespace) -> LLMPlannerService:
    config = LLMPlanner(base_url=args.base_url, models=[args.model], response_format=args.response_format)
    if args.steps:
        config.max_plan_steps = args.steps
    if args.tries:
        config.max_tries_per_step = args.tries
    # A shared model server answers one request at a time: waiting for it is not a stalled stream.
    config.stall_timeout = args.stall_timeout
    config.request_timeout = args.stall_timeout * 2
    return LLMPlannerService(config)


async def drive(args: argparse.Namespace, task: str, csv: Path) -> dict[str, Any]:
    workdir = Path(tempfile.mkdtemp(prefix="bcc-drive-"))
    shutil.copy(csv, workdir / csv.name)
    kernel = Kernel(workdir)
    start = time.monotonic()
    client = Client(service_for(args), kernel, task, csv.name)
    problem = ""
    try:
        await client.run()
    except Exception as error:  # noqa: BLE001 - the run's failure is part of what is measured
        problem = f"{type(error).__name__}: {error}"
    finally:
        values = kernel.json("{k: repr(v.item() if hasattr(v, 'item') and getattr(v, 'shape', None) == () else v)[:200] "
                             "for k, v in get_ipython().user_ns.items() if not k.startswith('_') and (isinstance(v, "
                             "(int, float, str, bool)) or (hasattr(v, 'item') and getattr(v, 'shape', None) == ()))}") or {}
        kernel.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return {"task": task, "seconds": round(time.monotonic() - start, 1), "problem": problem,
            "plan": [step["name"] for _sid, step in client.steps()], "contract": client.contract,
            "checks": client.checks, "given_up": client.given_up, "report": client.report(),
            "usage": client.usage.get("run", {}), "cells": client.cells, "values": values}


def main() -> None:
    # Stopped (kill): the kernel and the scratch directories go with the run, through the finally blocks.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["sales", "dabench", "task"])
    parser.add_argument("text", nargs="?", default="", help="the task (mode task)")
    parser.add_argument("--csv", default="", help="the data file (mode task)")
    parser.add_argument("--tasks", default="", help="sales: comma-separated task ids (default all)")
    parser.add_argument("--ids", default="", help="dabench: comma-separated question ids")
    parser.add_argument("--dabench", default=str(REPO_ROOT.parent.parent / "shared" / "dabench"))
    parser.add_argument("--base-url", default="http://127.0.0.1:8190/v1")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--response-format", default="auto")
    parser.add_argument("--steps", type=int, default=0, help="c.LLMPlanner.max_plan_steps (default: the product's)")
    parser.add_argument("--tries", type=int, default=0, help="c.LLMPlanner.max_tries_per_step (default: the product's)")
    parser.add_argument("--stall-timeout", type=float, default=600.0,
                        help="c.LLMPlanner.stall_timeout (default 600: the shared server queues requests)")
    parser.add_argument("--out", default="", help="append each run as a JSON line to this file")
    args = parser.parse_args()
    runs: list[tuple[str, str, Any, Path]] = []  # (id, task, expected, csv)
    scratch = Path(tempfile.mkdtemp(prefix="bcc-drive-data-"))
    if args.mode == "sales":
        csv = scratch / "sales.csv"
        csv.write_text(sales_csv())
        wanted = set(filter(None, args.tasks.split(",")))
        runs = [(tid, question, expected, csv) for tid, question, expected in sales_tasks(csv)
                if not wanted or tid in wanted]
    elif args.mode == "dabench":
        root = Path(args.dabench)
        questions = {q["id"]: q for q in map(json.loads, (root / "da-dev-questions.jsonl").read_text().splitlines())}
        labels = {q["id"]: q for q in map(json.loads, (root / "da-dev-labels.jsonl").read_text().splitlines())}
        for qid in [int(i) for i in args.ids.split(",") if i.strip()]:
            q = questions[qid]
            task = f"Question: {q['question']}\n{q['constraints']}\n{q['format']}"
            runs.append((str(qid), task, labels[qid]["common_answers"], root / "da-dev-tables" / q["file_name"]))
    else:
        runs = [("task", args.text, None, Path(args.csv))]
    right = 0
    try:
        right = _run_all(args, runs)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"{right} of {len(runs)} right")


def _run_all(args: argparse.Namespace, runs: list[tuple[str, str, Any, Path]]) -> int:
    right = 0
    for run_id, task, expected, csv in runs:
        result = asyncio.run(drive(args, task, csv))
        result["id"] = run_id
        if args.mode == "sales":
            got = result["values"].get("answer")
            result["right"] = got is not None and _same(got, expected)
        elif args.mode == "dabench":
            result["right"], result["parts_right"] = score_dabench(result["report"], expected)
        right += bool(result.get("right"))
        usage = result["usage"]
        print(f"[{run_id}] right={result.get('right')} expected={expected!r} "
              f"answer={result['values'].get('answer')!r} {result['seconds']} s "
              f"{usage.get('prompt_tokens', 0)}+{usage.get('completion_tokens', 0)} tokens plan={result['plan']} "
              f"given_up={len(result['given_up'])} {result['problem']}", flush=True)
        if args.out:
            with open(args.out, "a", encoding="utf-8") as out:
                out.write(json.dumps(result, ensure_ascii=False) + "\n")
    return right


def _same(got: str, expected: Any) -> bool:
    """Whether the kernel's `answer` (its repr) is the expected one, as `make eval` judges it."""
    shown = plain_value(got) or ""
    if isinstance(expected, str):
        return shown.strip().lower() == expected.lower()
    number, tolerance = expected
    try:
        return math.isclose(float(shown), number, abs_tol=tolerance)
    except ValueError:
        return False


if __name__ == "__main__":
    main()
