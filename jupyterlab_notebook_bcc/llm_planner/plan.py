"""Building the plan: the planner's own stages (load, plan, findings), the model's analysis steps read
tolerantly and bounded, each step's output contracts, a step for each deliverable no step produces, a step
for each part of the task no step covers, and the workflow template and plan cell that show it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .contract import KINDS, Deliverable, TaskContract, coverage
from .observation import IDENTIFIER, words

LOAD_STAGE = "data_loading"
LOAD_STEP = "load_data"
PLAN_STAGE = "plan"
PLAN_STEP = "plan_analysis"
REPORT_STAGE = "findings"
REPORT_STEP = "findings_report"
DELIVER_STEP = "deliver_answer"
CLOSED_STEPS = 2
_OWN_IDS = {LOAD_STAGE, LOAD_STEP, PLAN_STAGE, PLAN_STEP, REPORT_STAGE, REPORT_STEP, DELIVER_STEP}
# Steps a model plans that the planner does itself (the data is loaded) or that a closed question does not need.
_LOADING = re.compile(r"^\s*(?:load|read|import|open)\b.{0,40}\b(?:data|csv|file|dataset)\b|^\s*(?:加载|读取)", re.IGNORECASE)
_EXPLORING = re.compile(r"\b(?:explor\w*|inspect\w*|overview|look at|understand|preview|describe the data|eda)\b|探索|查看数据",
                        re.IGNORECASE)


@dataclass
class Step:
    id: str
    name: str
    goal: str
    expected: list[str]
    contracts: dict[str, Deliverable] = field(default_factory=dict)

    def contract(self, name: str) -> Deliverable:
        return self.contracts.get(name) or Deliverable(name)

    def public_contracts(self) -> list[dict[str, Any]]:
        return [self.contract(name).public() for name in self.expected]


@dataclass
class Stage:
    id: str
    name: str
    steps: list[Step]


# The planner's own stages, in the task's language: (stage name, step name, step goal).
_FIXED = {
    LOAD_STAGE: {
        False: ("Load the data", "Load and inspect the data",
                "Read the data file into `df` and look at its shape, columns, types and first rows."),
        True: ("加载数据", "读取并查看数据", "把数据文件读入 `df`，查看它的形状、列、类型和前几行。"),
    },
    PLAN_STAGE: {
        False: ("Plan", "Plan the analysis", "Plan the analysis from the task and what the data looks like."),
        True: ("计划", "制定分析计划", "根据任务和数据的样子制定分析计划。"),
    },
    REPORT_STAGE: {
        False: ("Findings", "Write the findings report",
                "Report what the outputs show about the task, citing only the numbers printed."),
        True: ("结论", "撰写结论报告", "根据输出回答任务，只引用内核打印出的数字。"),
    },
}


def fixed_stage(stage_id: str, step_id: str, expected: list[str], chinese: bool) -> Stage:
    stage_name, step_name, goal = _FIXED[stage_id][chinese]
    return Stage(stage_id, stage_name, [Step(step_id, step_name, goal, expected)])


def load_stage(chinese: bool = False) -> Stage:
    return fixed_stage(LOAD_STAGE, LOAD_STEP, ["df"], chinese)


def plan_stage(chinese: bool = False) -> Stage:
    return fixed_stage(PLAN_STAGE, PLAN_STEP, [], chinese)


def report_stage(chinese: bool = False) -> Stage:
    return fixed_stage(REPORT_STAGE, REPORT_STEP, [], chinese)


def slug(content: str, fallback: str, taken: set[str]) -> str:
    base = "_".join(re.findall(r"[a-z0-9]+", content.lower()))[:40] or fallback
    candidate, index = base, 2
    while candidate in taken:
        candidate = f"{base}_{index}"
        index += 1
    taken.add(candidate)
    return candidate


def _variables(raw_step: dict[str, Any], columns: dict[str, str]) -> tuple[list[str], dict[str, Deliverable]]:
    """A step's variables and their kinds as the model gave them: valid names only, a known kind or `any`."""
    raw = raw_step.get("variables")
    if not isinstance(raw, list):
        raw = raw_step.get("expected_variables")
    names: list[str] = []
    contracts: dict[str, Deliverable] = {}
    for item in raw if isinstance(raw, list) else []:
        name, kind = (item, "any") if isinstance(item, str) else (
            (item.get("name"), item.get("kind")) if isinstance(item, dict) else ("", ""))
        if not isinstance(name, str) or not IDENTIFIER.fullmatch(name.strip()) or name.strip() in ("df", *names):
            continue
        name = name.strip()
        kind = kind.strip().lower() if isinstance(kind, str) and kind.strip().lower() in KINDS else "any"
        names.append(name)
        contracts[name] = _model_contract(name, kind, columns)
        if len(names) >= 4:
            break
    return names, contracts


def _model_contract(name: str, kind: str, columns: dict[str, str]) -> Deliverable:
    """A contract from the model's word for a variable's kind. A label is checked against a column only when
    the name says which (`top_region`); otherwise the model's "label" asks nothing that can be checked."""
    if kind == "label":
        lowered = {column.lower(): column for column in columns}
        for part in reversed(name.lower().split("_")):
            if part in lowered or part.rstrip("s") in lowered:
                return Deliverable(name, "label", of_column=lowered.get(part) or lowered[part.rstrip("s")])
        return Deliverable(name)
    return Deliverable(name, kind)


def stages_of(
    answer: dict[str, Any], max_steps: int, closed: bool, chinese: bool, columns: dict[str, str] | None = None
) -> list[Stage]:
    """The model's stages (or, for a closed question, its steps), bounded, with ids of our own."""
    known = columns or {}
    taken = set(_OWN_IDS)
    raw_stages = answer.get("stages")
    if not isinstance(raw_stages, list) and isinstance(answer.get("steps"), list):
        raw_stages = [{"name": "解答" if chinese else "Answer", "steps": answer["steps"]}]
    if not isinstance(raw_stages, list):
        return []
    limit = max(1, min(max_steps, CLOSED_STEPS) if closed else max_steps)
    stages: list[Stage] = []
    count = 0
    for stage_index, raw_stage in enumerate(raw_stages[:3], start=1):
        if not isinstance(raw_stage, dict):
            continue
        steps: list[Step] = []
        raw_steps = raw_stage.get("steps")
        for step_index, raw_step in enumerate(raw_steps[:4] if isinstance(raw_steps, list) else [], start=1):
            if not isinstance(raw_step, dict) or count >= limit:
                continue
            name = words(raw_step.get("name")) or words(raw_step.get("goal"))
            goal = words(raw_step.get("goal")) or name
            if not name or _LOADING.search(name) or (closed and _EXPLORING.search(name)):
                continue
            expected, contracts = _variables(raw_step, known)
            steps.append(Step(slug(name, f"step_{stage_index}_{step_index}", taken), name[:120], goal[:400],
                              expected, contracts))
            count += 1
        if steps:
            stage_name = words(raw_stage.get("name")) or steps[0].name
            stages.append(Stage(slug(stage_name, f"stage_{stage_index}", taken), stage_name[:120], steps))
    return stages


def one_step(task: str, chinese: bool) -> list[Stage]:
    """The plan when the model's cannot be read: one step that answers the task."""
    name = "解答任务" if chinese else "Answer the task"
    return [Stage("analysis", "分析" if chinese else "Analysis", [Step("analyze", name, task or name, [])])]


def deliver(stages: list[Stage], contract: TaskContract) -> list[Stage]:
    """Every deliverable produced by a step, with the task's contract (which wins over the model's kind);
    those no step produces get a step of their own at the end of the analysis."""
    produced: set[str] = set()
    for stage in stages:
        for step in stage.steps:
            for name in step.expected:
                wanted = contract.get(name)
                if wanted is not None:
                    step.contracts[name] = wanted
                    produced.add(name)
    missing = [d for d in contract.deliverables if d.name not in produced]
    if not missing:
        return stages
    names = ", ".join(f"`{d.name}`" for d in missing)
    if contract.chinese:
        name = f"交付 {names}"
        goal = "把任务的答案存入 " + "；".join(
            f"`{d.name}`" + (f"（{d.wording(True)}）" if d.wording(True) else "") for d in missing) + "。"
    else:
        name = f"Deliver {names}"
        goal = "Store the task's answer in " + "; ".join(
            f"`{d.name}`" + (f" ({d.wording()})" if d.wording() else "") for d in missing) + "."
    step = Step(DELIVER_STEP, name, goal, [d.name for d in missing], {d.name: d for d in missing})
    if stages:
        stages[-1].steps.append(step)
    else:
        stages.append(Stage("answer", "解答" if contract.chinese else "Answer", [step]))
    return stages


def cover(stages: list[Stage], contract: TaskContract, max_steps: int) -> tuple[list[Stage], list[str]]:
    """A step for each part of the task that no step covers, while the plan has room; the parts left over
    are named as not planned."""
    texts = [f"{step.name} {step.goal} {' '.join(step.expected)}" for stage in stages for step in stage.steps]
    missing = coverage(contract.parts, texts).missing
    if not missing:
        return stages, []
    taken = {step.id for stage in stages for step in stage.steps} | {stage.id for stage in stages} | _OWN_IDS
    count = sum(len(stage.steps) for stage in stages)
    left: list[str] = []
    for part in missing:
        if count >= max_steps + 1:
            left.append(part)
            continue
        name = part[:1].upper() + part[1:].rstrip(".。") if part else part
        step = Step(slug(name, f"part_{count + 1}", taken), name[:120], part[:400], [])
        if stages:
            stages[-1].steps.append(step)
        else:
            stages.append(Stage("analysis", "分析" if contract.chinese else "Analysis", [step]))
        count += 1
    return stages, left


def template(title: str, stages: list[Stage]) -> dict[str, Any]:
    return {
        "name": title,
        "stages": [
            {
                "id": stage.id,
                "name": stage.name,
                "goal": stage.name,
                "steps": [_step_shape(step) for step in stage.steps],
            }
            for stage in stages
        ],
    }


def _step_shape(step: Step) -> dict[str, Any]:
    shape: dict[str, Any] = {"id": step.id, "name": step.name, "goal": step.goal, "expected_outputs": step.expected}
    if step.expected:
        shape["output_contracts"] = step.public_contracts()
    return shape


def plan_text(analysis: list[Stage], contract: TaskContract, not_planned: list[str]) -> str:
    """The plan cell: what kind of question it is, what it must deliver, the steps, what was left out."""
    chinese = contract.chinese
    if chinese:
        lines = ["封闭式问题：简短的计划。" if contract.closed else "开放式任务：完整的分析。"]
    else:
        lines = ["A closed question: a short plan." if contract.closed else "An open task: the full analysis."]
    if contract.deliverables:
        lines.append(contract.summary() + ("。" if chinese else "."))
    lines += ["", "计划：" if chinese else "The plan:"]
    for stage in analysis:
        for step in stage.steps:
            creates = f" (`{'`, `'.join(step.expected)}`)" if step.expected else ""
            lines.append(f"- **{step.name}**: {step.goal}{creates}")
    if not_planned:
        lines += ["", "没有计划的部分：" if chinese else "Not planned (the plan has no room for them):"]
        lines += [f"- {part}" for part in not_planned]
    return "\n".join(lines)


def find_step(stages: list[Stage], step_id: str) -> Step | None:
    for stage in stages:
        for step in stage.steps:
            if step.id == step_id:
                return step
    return None
