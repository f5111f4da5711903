"""The LLM planner's decisions: a DSLC planner (`/planning`, `/generating`) whose plan, code and report a
language model writes, and whose judgement of a step is read from the kernel's own observation.

- Run start: a provisional template (load the data; the analysis is planned once the data is seen) is
  answered at once, so the panel shows a plan before any model is asked.
- The load step is written without the model: `df = pd.read_csv(...)`, its shape, types and first rows.
- Once the data is loaded, the model plans the analysis from the task and that preview (stages > steps,
  each step with a goal and the variables it must create); a findings step ends every plan.
- Each behavior: the model writes an explanation and one code cell for the step, streamed: each cell is
  sent as soon as its part of the model's JSON is complete.
- After each behavior: the step is achieved when its code raised no error and its expected variables
  exist in the kernel; otherwise another behavior is asked for, with the traceback, until the step's
  tries are spent and it is given up with the reason shown.
- The findings report quotes the kernel's outputs, and marks the numbers it cites that no output shows.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from . import prompts, rewrite
from .answers import AnswerUnreadable, complete_string_field, first_object, string_field, unfence
from .model import Completion, ModelClient, ModelError
from .settings import LLMPlanner, ModelSettings

LOAD_STAGE = "data_loading"
LOAD_STEP = "load_data"
PLAN_STAGE = "plan"
PLAN_STEP = "plan_analysis"
REPORT_STAGE = "findings"
REPORT_STEP = "findings_report"
PREVIEW_VARIABLE = "data_preview"
MODEL_VARIABLE = "llm_model"
TASK_VARIABLES = ("problem_description", "task", "task_description")
DATA_VARIABLES = ("csv_file_path", "data_files", "data_path", "data_file")
MAX_PREVIEW = 2500
MAX_REPORT_OUTPUTS = 6000
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


class PlannerFailure(Exception):
    """A request the planner cannot answer: its HTTP status and the user's message."""

    def __init__(self, status: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_calls: int = 0
    estimated: bool = False

    def add(self, completion: Completion) -> None:
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        self.model_calls += 1
        self.estimated = self.estimated or completion.estimated

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def public(self) -> dict[str, Any]:
        public: dict[str, Any] = {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                                  "model_calls": self.model_calls}
        if self.estimated:
            public["estimated"] = True
        return public


@dataclass
class Step:
    id: str
    name: str
    goal: str
    expected: list[str]


@dataclass
class Stage:
    id: str
    name: str
    steps: list[Step]


@dataclass
class Session:
    """What the planner keeps of one run of one notebook for one user (lost on a restart: everything it
    needs to go on is in the observation, except the run's token count)."""

    stages: list[Stage] = field(default_factory=list)
    title: str = ""
    usage: Usage = field(default_factory=Usage)
    by_behavior: dict[str, Usage] = field(default_factory=dict)
    behaviors: int = 0
    # Behaviors whose answer could not be read, and why: they wrote no cell, so they reach no goal.
    unread: dict[str, str] = field(default_factory=dict)
    model: str = ""

    def step(self, step_id: str) -> Step | None:
        for stage in self.stages:
            for step in stage.steps:
                if step.id == step_id:
                    return step
        return None

    def stage(self, stage_id: str) -> Stage | None:
        return next((stage for stage in self.stages if stage.id == stage_id), None)


ModelFactory = Callable[[ModelSettings, str], ModelClient]
RunEvent = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class Caller:
    """Who asks: the Jupyter (or Hub) user and the notebook; sessions are kept apart by both."""

    user: str
    notebook_id: str


class LLMPlannerCore:
    def __init__(
        self,
        config: LLMPlanner,
        settings: Callable[[], ModelSettings | None],
        model_factory: ModelFactory,
        on_run_event: RunEvent | None = None,
        run_tokens: Callable[[str], tuple[int, str]] | None = None,
    ) -> None:
        self.config = config
        # A user's token budget per run and the setting it comes from (accounting.py: per-user limits).
        self.run_tokens = run_tokens or (lambda user: (config.max_run_tokens, "c.LLMPlanner.max_run_tokens"))
        self.settings = settings
        self.model_factory = model_factory
        self.on_run_event = on_run_event
        self.sessions: dict[Caller, Session] = {}

    # --- /planning ------------------------------------------------------------------------------------

    async def planning(self, body: dict[str, Any], caller: Caller) -> dict[str, Any]:
        try:
            return await self._planning(body, caller)
        except ModelError as failure:
            raise PlannerFailure(failure.status, failure.message, failure.retry_after) from failure

    async def _planning(self, body: dict[str, Any], caller: Caller) -> dict[str, Any]:
        settings = self._settings()
        observation = _record(body.get("observation"))
        feedback = _record(body.get("behavior_feedback"))
        current = _record(_record(observation.get("location")).get("current"))
        stage_id = _text(current.get("stage_id"))
        step_id = _text(current.get("step_id"))
        variables = _record(_record(observation.get("context")).get("variables"))
        task = _task(variables)
        if not stage_id or not step_id or (step_id == LOAD_STEP and not feedback):
            # A run starts (the observation has no location yet): a new session and the first plan.
            session = self._session(caller, settings, variables, new=True)
            self._event("run_start", caller, session)
            return self._first_answer(session, task, variables)
        session = self._session(caller, settings, variables)
        answer: dict[str, Any]
        if not feedback:
            answer = self._continue(session, observation, step_id, "")
        else:
            answer = self._judge(session, caller, observation, feedback, step_id, variables)
        answer["usage"] = self._usage(session, _text(feedback.get("behavior_id")))
        return answer

    def _first_answer(self, session: Session, task: str, variables: dict[str, Any]) -> dict[str, Any]:
        files = _data_files(variables)
        session.title = _title(task, files)
        chinese = prompts.is_chinese(task)
        session.stages = [_load_stage(chinese), _plan_stage(chinese)] if files else [_plan_stage(chinese)]
        first = session.stages[0].steps[0]
        return {
            "targetAchieved": False,
            "transition": {"continue_behaviors": True, "target_achieved": False},
            "context_update": {
                # Provisional: the model's plan replaces it without asking the user.
                "workflow_update": {"workflowTemplate": self._template(session), "provisional": True},
                "progress_update": _focus(first.goal, first.expected),
            },
            "usage": self._usage(session, ""),
        }

    def _continue(self, session: Session, observation: dict[str, Any], step_id: str, note: str) -> dict[str, Any]:
        step = self._step(session, observation, step_id)
        focus = step.goal if not note else f"{step.goal}\n\n{note}"
        return {
            "targetAchieved": False,
            "transition": {"continue_behaviors": True, "target_achieved": False},
            "context_update": {"progress_update": _focus(focus, step.expected)},
        }

    def _judge(
        self,
        session: Session,
        caller: Caller,
        observation: dict[str, Any],
        feedback: dict[str, Any],
        step_id: str,
        variables: dict[str, Any],
    ) -> dict[str, Any]:
        step = self._step(session, observation, step_id)
        effects = _effects(observation, "current")
        error = _last_error(effects)
        result = _text(feedback.get("last_action_result")) or "success"
        missing = [name for name in step.expected if name not in variables]
        unread = session.unread.pop(_text(feedback.get("behavior_id")), "")
        tries = int(_record(_record(observation.get("location")).get("current")).get("behavior_iteration") or 1)
        achieved = result == "success" and not error and not missing and not unread
        if step.id in (REPORT_STEP, PLAN_STEP):
            achieved = result == "success" and not unread
            if achieved and step.id == REPORT_STEP:
                self._event("run_end", caller, session)
        if achieved:
            answer: dict[str, Any] = {
                "targetAchieved": True,
                "transition": {"continue_behaviors": False, "target_achieved": True},
                "context_update": {"progress_update": _focus(f"{step.name}: done", step.expected)},
            }
            if step.id == LOAD_STEP:
                # What the kernel printed about the data goes with every later request.
                answer["context_update"]["variables"] = {PREVIEW_VARIABLE: "\n".join(effects)[-MAX_PREVIEW:]}
            return answer
        if unread:
            reason = f"the model's answer could not be read ({unread})"
        elif result in ("skipped", "stopped", "interrupted") and not error:
            reason = f"the last behavior was {result}"
        elif error:
            reason = f"the code failed: {error.splitlines()[-1][:300]}"
        elif missing:
            reason = f"the variables {', '.join(missing)} were not created"
        else:
            reason = "the last behavior did not succeed"
        if tries >= max(1, self.config.max_tries_per_step):
            return {
                "targetAchieved": False,
                "transition": {"continue_behaviors": False, "target_achieved": False},
                "context_update": {
                    "progress_update": _focus(
                        f"Step given up after {tries} tries (c.LLMPlanner.max_tries_per_step): {reason}.",
                        step.expected,
                    )
                },
            }
        return self._continue(session, observation, step_id, f"Try {tries + 1}: {reason}. Fix it.")

    async def _plan_stages(
        self, session: Session, task: str, files: list[str], preview: str, settings: ModelSettings, behavior_id: str
    ) -> tuple[list[Stage], str]:
        """The model's stages; a one-step plan with a notice when its answer cannot be read twice."""
        messages = prompts.template_messages(task, files, preview)
        try:
            answer = await self._ask_json(session, settings, messages, prompts.TEMPLATE_SCHEMA, behavior_id)
            stages = _stages_of(answer, self.config.max_plan_steps)
            if stages:
                title = _words(answer.get("title"))
                if title:
                    session.title = title[:100]
                return stages, ""
            problem = "the plan names no stage with a step"
        except AnswerUnreadable as error:
            problem = str(error)
        fallback = [Stage("analysis", "Analysis", [Step("analyze", "Answer the task", task or "Analyse the data.", [])])]
        return fallback, f"The model's plan could not be read ({problem}); the run goes on with one analysis step."

    # --- /generating ----------------------------------------------------------------------------------

    async def generating(self, body: dict[str, Any], caller: Caller) -> AsyncIterator[dict[str, Any]]:
        """The actions of one behavior, each as soon as it is known. Raises PlannerFailure before the first."""
        settings = self._settings()
        observation = _record(body.get("observation"))
        location = _record(observation.get("location"))
        current = _record(location.get("current"))
        stage_id = _text(current.get("stage_id"))
        step_id = _text(current.get("step_id"))
        if not stage_id or not step_id:
            raise PlannerFailure(400, "The request names no current stage and step; the LLM planner answers /planning first.")
        variables = _record(_record(observation.get("context")).get("variables"))
        task = _task(variables)
        session = self._session(caller, settings, variables)
        self._check_budget(session, caller)
        session.behaviors += 1
        behavior_id = _text(current.get("behavior_id")) or f"behavior_{session.behaviors:03d}"
        iteration = int(current.get("behavior_iteration") or 1)
        step = self._step(session, observation, step_id)
        lead = self._headings(session, stage_id, step) if iteration <= 1 else []
        if step.id == LOAD_STEP:
            for action in [*lead, *_load_actions(_data_files(variables), task)]:
                yield action
            return
        if step.id == PLAN_STEP:
            async for action in self._plan(session, settings, task, variables, behavior_id, lead):
                yield action
            return
        if step.id == REPORT_STEP:
            async for action in self._report(session, settings, task, observation, behavior_id, lead):
                yield action
            return
        fix = rewrite.failed_cell(body, step.id, _last_error(_effects(observation, "current")))
        async for action in self._cell(session, settings, task, observation, variables, step, behavior_id, lead, fix):
            yield action

    async def _plan(
        self, session: Session, settings: ModelSettings, task: str, variables: dict[str, Any],
        behavior_id: str, lead: list[dict[str, Any]],
    ) -> AsyncIterator[dict[str, Any]]:
        """The model plans the analysis from the task and the data's preview: the template's next steps."""
        try:
            stages, notice = await self._plan_stages(
                session, task, _data_files(variables), _text(variables.get(PREVIEW_VARIABLE)), settings, behavior_id)
        except ModelError as failure:
            raise PlannerFailure(failure.status, failure.message, failure.retry_after) from failure
        chinese = prompts.is_chinese(task)
        kept = [_load_stage(chinese)] if _data_files(variables) else []
        session.stages = [*kept, _plan_stage(chinese), *stages, _report_stage(chinese)]
        for action in lead:
            yield action
        if notice:
            yield {"error": notice}
        yield {"action": "update_workflow", "updated_workflow": self._template(session)}
        lines = ["计划：" if chinese else "The plan:"]
        for stage in stages:
            for step in stage.steps:
                creates = f" (`{'`, `'.join(step.expected)}`)" if step.expected else ""
                lines.append(f"- **{step.name}**: {step.goal}{creates}")
        yield {"action": "add", "shot_type": "dialogue", "content": "\n".join(lines)}

    def _headings(self, session: Session, stage_id: str, step: Step) -> list[dict[str, Any]]:
        actions: list[dict[str, Any]] = []
        stage = session.stage(stage_id)
        if stage_id == LOAD_STAGE and step.id == LOAD_STEP and session.title:
            actions.append({"action": "update_title", "title": session.title})
        if stage is not None and stage.steps and stage.steps[0].id == step.id:
            actions.append({"action": "new_chapter", "content": stage.name})
        actions.append({"action": "new_section", "content": step.name})
        return actions

    async def _cell(
        self,
        session: Session,
        settings: ModelSettings,
        task: str,
        observation: dict[str, Any],
        variables: dict[str, Any],
        step: Step,
        behavior_id: str,
        lead: list[dict[str, Any]],
        fix: str | None = None,
    ) -> AsyncIterator[dict[str, Any]]:
        """`fix`: the failed cell a retry's code rewrites (`rewrite.py`); its explanation is then not added."""
        effects = _effects(observation, "current")
        error = _last_error(effects)
        focus = _text(_record(_record(_record(observation.get("location")).get("progress")).get("behaviors")).get("focus"))
        shown = {k: v for k, v in variables.items() if k not in (PREVIEW_VARIABLE, MODEL_VARIABLE)}
        messages = prompts.cell_messages(
            task, _text(variables.get(PREVIEW_VARIABLE)), shown, step.name, step.goal, step.expected,
            error[-1500:], "" if error else focus,
        )
        queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        # A fix rewrites the failed cell: no new explanation cell beside it.
        sent = {"explanation": fix is not None, "code": False}

        def emit(answer_text: str) -> None:
            if not sent["explanation"]:
                explanation = complete_string_field(answer_text, "explanation")
                if explanation is not None:
                    sent["explanation"] = True
                    if explanation.strip():
                        queue.put_nowait({"action": "add", "shot_type": "dialogue", "content": explanation.strip()})
            if sent["explanation"] and not sent["code"]:
                code = complete_string_field(answer_text, "code")
                if code is not None and code.strip():
                    sent["code"] = True
                    for action in rewrite.code_actions(unfence(code), fix):
                        queue.put_nowait(action)

        async def ask() -> None:
            try:
                completion = await self._call(session, settings, messages, prompts.CELL_SCHEMA, behavior_id, emit)
                if not sent["code"]:
                    await self._finish_cell(session, settings, messages, completion.text, behavior_id, sent, queue, fix)
            finally:
                queue.put_nowait(None)

        task_handle = asyncio.ensure_future(ask())
        started = False
        try:
            while True:
                action = await queue.get()
                if action is None:
                    break
                if not started:
                    started = True
                    for heading in lead:
                        yield heading
                yield action
            closing: dict[str, Any] | None = None
            try:
                task_handle.result()
            except ModelError as failure:
                if not started:
                    raise PlannerFailure(failure.status, failure.message, failure.retry_after) from failure
                closing = {"error": failure.message}
            except AnswerUnreadable as failure:
                session.unread[behavior_id] = str(failure)
                closing = {"error": f"The model's answer could not be read: {failure}"}
            if not started:
                for heading in lead:
                    yield heading
            if closing is not None:
                yield closing
        finally:
            if not task_handle.done():
                # Stop: the browser went away; the model request ends with this task.
                task_handle.cancel()
                try:
                    await task_handle
                except BaseException:  # noqa: BLE001 - the cancellation itself, or the request's own failure
                    pass

    async def _finish_cell(
        self,
        session: Session,
        settings: ModelSettings,
        messages: list[dict[str, str]],
        text: str,
        behavior_id: str,
        sent: dict[str, bool],
        queue: asyncio.Queue[dict[str, Any] | None],
        fix: str | None = None,
    ) -> None:
        """The parts of a cell answer the stream did not give: read tolerantly, then asked once more."""
        try:
            answer = first_object(text)
            code = string_field(answer, "code", "python", "source")
            if not code:
                raise AnswerUnreadable('the answer has no "code"')
        except AnswerUnreadable as problem:
            retry = prompts.retry_messages(messages, text, str(problem))
            completion = await self._call(session, settings, retry, prompts.CELL_SCHEMA, behavior_id, None)
            answer = first_object(completion.text)
            code = string_field(answer, "code", "python", "source")
            if not code:
                raise AnswerUnreadable('the answer has no "code", twice') from problem
        if not sent["explanation"]:
            explanation = string_field(answer, "explanation", "markdown", "description")
            if explanation.strip():
                queue.put_nowait({"action": "add", "shot_type": "dialogue", "content": explanation.strip()})
            sent["explanation"] = True
        sent["code"] = True
        for action in rewrite.code_actions(unfence(code), fix):
            queue.put_nowait(action)

    async def _report(
        self,
        session: Session,
        settings: ModelSettings,
        task: str,
        observation: dict[str, Any],
        behavior_id: str,
        lead: list[dict[str, Any]],
    ) -> AsyncIterator[dict[str, Any]]:
        outputs = "\n---\n".join(text for text in _effects(observation, "all") if text.strip())
        outputs = outputs[-MAX_REPORT_OUTPUTS:]
        messages = prompts.report_messages(task, outputs)
        try:
            answer = await self._ask_json(session, settings, messages, prompts.REPORT_SCHEMA, behavior_id)
            report = string_field(answer, "report", "markdown", "content")
            if not report:
                raise AnswerUnreadable('the answer has no "report"')
        except ModelError as failure:
            raise PlannerFailure(failure.status, failure.message, failure.retry_after) from failure
        except AnswerUnreadable as failure:
            session.unread[behavior_id] = str(failure)
            for action in lead:
                yield action
            yield {"error": f"The model's answer could not be read: {failure}"}
            return
        for action in lead:
            yield action
        unseen = _numbers_not_in(report, outputs)
        if unseen:
            note = (
                f"\n\n> ⚠️ 以下数字未出现在内核输出中：{', '.join(unseen)}"
                if prompts.is_chinese(task)
                else f"\n\n> ⚠️ These numbers appear in no output of the kernel: {', '.join(unseen)}"
            )
            report += note
        yield {"action": "add", "shot_type": "dialogue", "content": report.strip()}

    # --- the model ------------------------------------------------------------------------------------

    async def _ask_json(
        self,
        session: Session,
        settings: ModelSettings,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        behavior_id: str,
    ) -> dict[str, Any]:
        """The model's JSON answer, asked once more with the parse error when the first is unreadable."""
        completion = await self._call(session, settings, messages, schema, behavior_id, None)
        try:
            return first_object(completion.text)
        except AnswerUnreadable as problem:
            retry = prompts.retry_messages(messages, completion.text, str(problem))
            second = await self._call(session, settings, retry, schema, behavior_id, None)
            return first_object(second.text)

    async def _call(
        self,
        session: Session,
        settings: ModelSettings,
        messages: list[dict[str, str]],
        schema: dict[str, Any],
        behavior_id: str,
        on_text: Callable[[str], None] | None,
    ) -> Completion:
        model = self.model_factory(settings, session.model or settings.model)
        completion = await model.complete(messages, schema, on_text)
        session.usage.add(completion)
        if behavior_id:
            session.by_behavior.setdefault(behavior_id, Usage()).add(completion)
        return completion

    # --- helpers --------------------------------------------------------------------------------------

    def _session(
        self, caller: Caller, settings: ModelSettings, variables: dict[str, Any], new: bool = False
    ) -> Session:
        """The caller's session: a new one at a run's start, or when the planner has none (a restart)."""
        session = None if new else self.sessions.get(caller)
        if session is None:
            session = Session(model=self._model_name(settings, variables))
            self.sessions[caller] = session
        return session

    def _settings(self) -> ModelSettings:
        settings = self.settings()
        if settings is None or not settings.configured:
            raise PlannerFailure(
                503,
                "The LLM planner has no model configured: open LLM Planner Settings (or set c.LLMPlanner.base_url "
                "and c.LLMPlanner.models).",
            )
        return settings

    def _model_name(self, settings: ModelSettings, variables: dict[str, Any]) -> str:
        asked = _text(variables.get(MODEL_VARIABLE))
        if not asked:
            return settings.model
        if asked not in settings.models:
            raise PlannerFailure(
                400,
                f"The model {asked!r} is not among the models this planner may use ({', '.join(settings.models)}); "
                "pick one of them in the Run dialog.",
            )
        return asked

    def _check_budget(self, session: Session, caller: Caller) -> None:
        limit = self.config.max_run_behaviors
        if limit and session.behaviors >= limit:
            raise PlannerFailure(
                403,
                f"This run has used its {limit} behaviors (c.LLMPlanner.max_run_behaviors); "
                "start a new run, or ask your administrator to raise the limit.",
            )
        tokens, setting = self.run_tokens(caller.user)
        if tokens and session.usage.total >= tokens:
            raise PlannerFailure(
                403,
                f"This run has used its token budget ({session.usage.total:,} of {tokens:,} tokens, "
                f"{setting}); start a new run, or ask your administrator to raise the budget.",
            )

    def _step(self, session: Session, observation: dict[str, Any], step_id: str) -> Step:
        known = session.step(step_id)
        location = _record(observation.get("location"))
        goals = _record(location.get("goals"))
        expected = set(known.expected if known else [])
        progress = _record(location.get("progress"))
        outputs = _record(_record(progress.get("steps")).get("current_outputs"))
        for name in outputs.get("expected") or []:
            if isinstance(name, str) and _IDENTIFIER.fullmatch(name):
                expected.add(name)
        if known:
            return Step(known.id, known.name, known.goal, sorted(expected))
        goal = _text(goals.get("step")) or step_id
        return Step(step_id, goal, goal, sorted(expected))

    def _template(self, session: Session) -> dict[str, Any]:
        return {
            "name": session.title,
            "stages": [
                {
                    "id": stage.id,
                    "name": stage.name,
                    "goal": stage.name,
                    "steps": [
                        {"id": step.id, "name": step.name, "goal": step.goal, "expected_outputs": step.expected}
                        for step in stage.steps
                    ],
                }
                for stage in session.stages
            ],
        }

    def _usage(self, session: Session, behavior_id: str) -> dict[str, Any]:
        behavior = session.by_behavior.get(behavior_id) if behavior_id else None
        usage: dict[str, Any] = {
            "model": session.model,
            "behavior": behavior.public() if behavior else None,
            "run": session.usage.public(),
        }
        price = self.config.prices.get(session.model) if isinstance(self.config.prices, dict) else None
        if isinstance(price, dict):
            usage["cost"] = {
                "run": _cost(session.usage, price),
                "behavior": _cost(behavior, price) if behavior else None,
                "currency": str(price.get("currency", "USD")),
            }
        return usage

    def _event(self, kind: str, caller: Caller, session: Session) -> None:
        if self.on_run_event:
            self.on_run_event(
                kind,
                {"user": caller.user, "notebook": caller.notebook_id, "model": session.model,
                 "behaviors": session.behaviors, **session.usage.public()},
            )


def _cost(usage: Usage | None, price: dict[str, Any]) -> float:
    if usage is None:
        return 0.0
    prompt = float(price.get("prompt", 0) or 0)
    completion = float(price.get("completion", 0) or 0)
    return round((usage.prompt_tokens * prompt + usage.completion_tokens * completion) / 1_000_000, 6)


def _record(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _words(value: Any) -> str:
    """A model's text that says something: not a placeholder such as "…" or "..."."""
    text = _text(value)
    return text if any(ch.isalnum() for ch in text) else ""


def _task(variables: dict[str, Any]) -> str:
    for name in TASK_VARIABLES:
        value = variables.get(name)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _data_files(variables: dict[str, Any]) -> list[str]:
    files: list[str] = []
    for name in DATA_VARIABLES:
        value = variables.get(name)
        values = value if isinstance(value, list) else [value]
        for item in values:
            if isinstance(item, str) and item.strip() and item.strip() not in files:
                files.append(item.strip())
    return files


def _title(task: str, files: list[str]) -> str:
    text = " ".join(task.split())
    if text:
        return text if len(text) <= 100 else text[:97] + "..."
    return f"Analysis of {files[0].rsplit('/', 1)[-1]}" if files else "Data analysis"


def _focus(text: str, expected: list[str]) -> dict[str, Any]:
    update: dict[str, Any] = {"level": "behaviors", "focus": text}
    if expected:
        update["current_outputs"] = {"expected": list(expected)}
    return update


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


def _fixed_stage(stage_id: str, step_id: str, expected: list[str], chinese: bool) -> Stage:
    stage_name, step_name, goal = _FIXED[stage_id][chinese]
    return Stage(stage_id, stage_name, [Step(step_id, step_name, goal, expected)])


def _load_stage(chinese: bool = False) -> Stage:
    return _fixed_stage(LOAD_STAGE, LOAD_STEP, ["df"], chinese)


def _plan_stage(chinese: bool = False) -> Stage:
    return _fixed_stage(PLAN_STAGE, PLAN_STEP, [], chinese)


def _report_stage(chinese: bool = False) -> Stage:
    return _fixed_stage(REPORT_STAGE, REPORT_STEP, [], chinese)


def _slug(text: str, fallback: str, taken: set[str]) -> str:
    slug = "_".join(re.findall(r"[a-z0-9]+", text.lower()))[:40] or fallback
    candidate, index = slug, 2
    while candidate in taken:
        candidate = f"{slug}_{index}"
        index += 1
    taken.add(candidate)
    return candidate


def _stages_of(answer: dict[str, Any], max_steps: int = 6) -> list[Stage]:
    """The model's stages, bounded (3 stages of 3 steps, `max_steps` in all), with ids of our own and only
    valid variable names."""
    taken = {LOAD_STAGE, LOAD_STEP, PLAN_STAGE, PLAN_STEP, REPORT_STAGE, REPORT_STEP}
    stages: list[Stage] = []
    raw_stages = answer.get("stages")
    if not isinstance(raw_stages, list):
        return []
    for stage_index, raw_stage in enumerate(raw_stages[:3], start=1):
        if not isinstance(raw_stage, dict):
            continue
        steps: list[Step] = []
        raw_steps = raw_stage.get("steps")
        for step_index, raw_step in enumerate(raw_steps[:3] if isinstance(raw_steps, list) else [], start=1):
            if not isinstance(raw_step, dict) or sum(len(s.steps) for s in stages) + len(steps) >= max(1, max_steps):
                continue
            name = _words(raw_step.get("name")) or _words(raw_step.get("goal"))
            if not name:
                continue
            goal = _words(raw_step.get("goal")) or name
            expected_raw = raw_step.get("expected_variables")
            expected = [
                v.strip() for v in (expected_raw if isinstance(expected_raw, list) else [])
                if isinstance(v, str) and _IDENTIFIER.fullmatch(v.strip()) and v.strip() != "df"
            ][:4]
            steps.append(Step(_slug(name, f"step_{stage_index}_{step_index}", taken), name[:120], goal[:400], expected))
        if steps:
            name = _words(raw_stage.get("name")) or steps[0].name
            stages.append(Stage(_slug(name, f"stage_{stage_index}", taken), name[:120], steps))
    return stages


def _effects(observation: dict[str, Any], which: str) -> list[str]:
    effects = _record(_record(observation.get("context")).get("effects"))
    current = [e if isinstance(e, str) else str(e) for e in effects.get("current") or []]
    if which == "current":
        return current
    history = [e if isinstance(e, str) else str(e) for e in effects.get("history") or []]
    return [*history, *current]


def _last_error(texts: list[str]) -> str:
    """The latest effect that holds a Python error (its traceback), or ""."""
    for text in reversed(texts):
        if "Traceback (most recent call last)" in text:
            return text.strip()
        for line in text.splitlines():
            word = line.split(":", 1)[0].strip()
            if ":" in line and word.endswith(("Error", "Exception")) and word.replace(".", "").replace("_", "").isalnum():
                return text.strip()
    return ""


def _numbers_not_in(report: str, outputs: str) -> list[str]:
    """Numbers a report cites (two digits or more, or with decimals) that no output shows."""
    seen = {n.replace(",", "") for n in _NUMBER.findall(outputs)}
    unseen: list[str] = []
    for number in _NUMBER.findall(report):
        plain = number.replace(",", "").rstrip(".")
        if len(plain.replace(".", "")) < 2 or plain in seen or plain in unseen:
            continue
        if _a_rounding(plain, seen):
            continue
        unseen.append(plain)
    return unseen[:10]


def _a_rounding(cited: str, seen: set[str]) -> bool:
    """`cited` is a printed value rounded (or cut) to the decimals it shows: 1234.6 or 1235 for 1234.56."""
    try:
        value = float(cited)
    except ValueError:
        return False
    decimals = len(cited.split(".", 1)[1]) if "." in cited else 0
    for printed in seen:
        if "." not in printed:
            continue
        try:
            number = float(printed)
        except ValueError:
            continue
        if abs(round(number, decimals) - value) < 10 ** -(decimals + 3) or int(number * 10**decimals) == int(value * 10**decimals):
            return True
    return False


def _load_actions(files: list[str], task: str) -> list[dict[str, Any]]:
    import json as _json

    path = files[0] if files else "data.csv"
    lower = path.lower()
    reader = "read_csv"
    if lower.endswith((".xlsx", ".xls")):
        reader = "read_excel"
    elif lower.endswith(".parquet"):
        reader = "read_parquet"
    elif lower.endswith(".json"):
        reader = "read_json"
    code = "\n".join(
        [
            "import pandas as pd",
            "",
            f"df = pd.{reader}({_json.dumps(path, ensure_ascii=False)})",
            'print(f"Shape: {df.shape[0]} rows x {df.shape[1]} columns")',
            'print("Columns and types:")',
            "print(df.dtypes.to_string())",
            'print("First rows:")',
            "print(df.head().to_string())",
        ]
    )
    text = (
        f"读取数据文件 `{path}`，查看它的行数、列、类型和前几行。"
        if prompts.is_chinese(task)
        else f"Read `{path}` and look at its shape, columns, types and first rows."
    )
    return [
        {"action": "add", "shot_type": "dialogue", "content": text},
        {"action": "add", "shot_type": "action", "content": code},
        {"action": "exec", "codecell_id": "lastAddedCellId", "need_output": True},
    ]
