"""The LLM planner's decisions: a DSLC planner (`/planning`, `/generating`) whose plan, code and report a
language model writes, and whose judgement of a step is read from the kernel's own observation.

- Run start: the task's contract is read from its words (contract.py) and a provisional template (load the
  data; the analysis is planned once the data is seen) is answered at once, before any model is asked.
- The load step is written without the model; its preview gives the data's columns (and which column a
  "which region" question asks a label of).
- Once the data is loaded, the model plans the analysis (plan.py): a short plan for a closed question, the
  full loop for an open task; every deliverable gets a step, every part of the task a step or a mention.
- Each behavior (behaviors.py): the model writes an explanation and one code cell for the step, with the
  run's memory (memory.py); a retry that repeats the failed code is not sent to the kernel.
- After each behavior (judge.py): achieved when the code raised no error and the step's variables passed
  their checks in the kernel; otherwise another try with the reason, until the step is given up.
- The findings report (report.py) starts with what was not delivered and what was given up, then the
  answer from the checked values, then the model's prose, set apart where no output supports it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from typing import Any

from . import behaviors
from .accounting import Accounting
from .calls import ModelCalls, ModelFactory
from .contract import extract, read_columns, with_columns
from .failures import OPEN_SETTINGS, PlannerFailure
from .judge import Verdict, judge, the_report_step
from .model import ModelError
from .observation import (
    MAX_NOTE_CHARS,
    MAX_PREVIEW_CHARS,
    Request,
    bounded,
    last_error,
    read_request,
)
from .plan import (
    LOAD_STAGE,
    LOAD_STEP,
    PLAN_STEP,
    REPORT_STEP,
    Step,
    load_stage,
    plan_stage,
    template,
)
from .repairs import next_repair
from .sessions import Caller, Session, Sessions
from .settings import LLMPlanner, ModelSettings

__all__ = ["LOAD_STEP", "PLAN_STEP", "REPORT_STEP", "Caller", "LLMPlannerCore", "PlannerFailure"]

PREVIEW_VARIABLE = behaviors.PREVIEW_VARIABLE
MODEL_VARIABLE = "llm_model"
MAX_NEW_NAMES = 6


class LLMPlannerCore:
    def __init__(
        self,
        config: LLMPlanner,
        settings: Callable[[], ModelSettings | None],
        model_factory: ModelFactory,
        accounting: Accounting | None = None,
    ) -> None:
        self.config = config
        self.settings = settings
        self.accounting = accounting or Accounting(config)
        self.calls = ModelCalls(model_factory, self.accounting)
        self.sessions = Sessions(config.max_sessions, config.session_idle_timeout, self.accounting.forgotten)

    # --- /planning ------------------------------------------------------------------------------------

    async def planning(self, body: dict[str, Any], caller: Caller) -> dict[str, Any]:
        settings = self._settings()
        request = read_request(body)
        if not request.stage_id or not request.step_id or (request.step_id == LOAD_STEP and not request.feedback):
            # A run starts (the observation has no location yet): a new session and the first plan.
            session = self._session(caller, settings, request, new=True)
            self.accounting.started(caller, session)
            return self._first_answer(session, request)
        session = self._session(caller, settings, request)
        if request.checks:
            session.checks.update(request.checks)
        if not request.feedback:
            answer = self._continue(session, request, "")
            answer["usage"] = self.accounting.public(session, None)
        else:
            answer = self._judge(session, caller, request)
            answer["usage"] = self.accounting.public(session, (request.step_id, request.feedback_behavior))
        self._with_contract(session, answer)
        return answer

    def _first_answer(self, session: Session, request: Request) -> dict[str, Any]:
        files = request.data_files
        task = request.task
        session.title = _title(task, files)
        session.contract = extract(task)
        chinese = session.contract.chinese
        session.stages = [load_stage(chinese), plan_stage(chinese)] if files else [plan_stage(chinese)]
        first = session.stages[0].steps[0]
        answer: dict[str, Any] = {
            "targetAchieved": False,
            "transition": {"continue_behaviors": True, "target_achieved": False},
            "context_update": {
                # Provisional: the model's plan replaces it without asking the user.
                "workflow_update": {"workflowTemplate": template(session.title, session.stages), "provisional": True},
                "progress_update": _focus(first.goal, first),
            },
            "usage": self.accounting.public(session, None),
        }
        self._with_contract(session, answer)
        return answer

    def _with_contract(self, session: Session, answer: dict[str, Any]) -> None:
        """The run's contract goes with the first answer that knows it, and again whenever it changed."""
        if not session.contract.deliverables:
            return
        public = session.contract.public()
        if public != session.contract_sent:
            answer.setdefault("context_update", {})["contract"] = public
            session.contract_sent = public

    def _continue(self, session: Session, request: Request, note: str) -> dict[str, Any]:
        step = self._step(session, request)
        focus = step.goal if not note else f"{step.goal}\n\n{note}"
        return {
            "targetAchieved": False,
            "transition": {"continue_behaviors": True, "target_achieved": False},
            "context_update": {"progress_update": _focus(focus, step)},
        }

    def _judge(self, session: Session, caller: Caller, request: Request) -> dict[str, Any]:
        step = self._step(session, request)
        behavior = request.feedback_behavior
        unread = session.unread.pop((step.id, behavior), "")
        repeated = session.repeated.pop(step.id, "")
        verdict: Verdict
        if repeated:
            verdict = Verdict(False, repeated)
        elif step.id in (REPORT_STEP, PLAN_STEP):
            verdict = the_report_step(request.result, unread)
        else:
            error = last_error(request.current_effects)
            verdict = judge(step.expected, request.result, error, unread, request.checks, request.variables)
        if verdict.achieved:
            return self._achieved(session, caller, request, step)
        session.memory.failed_try(step.id, behavior, verdict.reason)
        tries = max(1, request.iteration)
        used_up = tries >= max(1, self.config.max_tries_per_step)
        if repeated or (used_up and next_repair(session.memory, step.id) is None):
            session.given_up.append((step.name, verdict.reason))
            why = (f"Step given up: {verdict.reason}." if repeated else
                   f"Step given up after {tries} tries (c.LLMPlanner.max_tries_per_step): {verdict.reason}.")
            return {
                "targetAchieved": False,
                "transition": {"continue_behaviors": False, "target_achieved": False},
                "context_update": {"progress_update": _focus(why, step)},
            }
        return self._continue(session, request, f"Try {tries + 1}: {verdict.reason}. Fix it.")

    def _achieved(self, session: Session, caller: Caller, request: Request, step: Step) -> dict[str, Any]:
        answer: dict[str, Any] = {
            "targetAchieved": True,
            "transition": {"continue_behaviors": False, "target_achieved": True},
            "context_update": {"progress_update": _focus(f"{step.name}: done", step)},
        }
        printed = "\n".join(request.current_effects)
        if step.id == LOAD_STEP:
            # What the kernel printed about the data goes with every later request.
            preview = printed[:MAX_PREVIEW_CHARS]
            answer["context_update"]["variables"] = {PREVIEW_VARIABLE: preview}
            session.columns = read_columns(preview)
            session.contract = with_columns(session.contract, request.task, session.columns)
        elif step.id == REPORT_STEP:
            self.accounting.ended(caller, "completed")
        elif step.id != PLAN_STEP:
            session.memory.achieved(step.id, step.name, self._created(session, request, step), printed)
        return answer

    def _created(self, session: Session, request: Request, step: Step) -> dict[str, Any]:
        """The step's variables and the names that are new in the kernel since the steps before it."""
        seen = {name for record in session.memory.done for name in record.created} | {"df", PREVIEW_VARIABLE}
        created = {name: request.variables[name] for name in step.expected if name in request.variables}
        for name, value in request.variables.items():
            if len(created) >= MAX_NEW_NAMES:
                break
            if name not in seen and name not in created and name not in behaviors.RUN_VARIABLES:
                created[name] = value
        return created

    # --- /generating ----------------------------------------------------------------------------------

    async def generating(self, body: dict[str, Any], caller: Caller) -> AsyncGenerator[dict[str, Any], None]:
        """The actions of one behavior, each as soon as it is known. Raises PlannerFailure before the first."""
        settings = self._settings()
        request = read_request(body)
        if not request.stage_id or not request.step_id:
            raise PlannerFailure(400, "The request names no current stage and step; the LLM planner answers /planning first.")
        session = self._session(caller, settings, request)
        if request.checks:
            session.checks.update(request.checks)
        self.accounting.check_run(caller, session)
        session.behaviors += 1
        behavior_id = request.behavior_id or f"behavior_{session.behaviors:03d}"
        step = self._step(session, request)
        turn = behaviors.Turn(self.calls, caller, session, settings, request, (step.id, behavior_id), self.config)
        lead = self._headings(session, request.stage_id, step) if request.iteration <= 1 else []
        try:
            if step.id == LOAD_STEP:
                for action in [*lead, *behaviors.load_actions(request.data_files, request.task)]:
                    yield action
                return
            if step.id == PLAN_STEP:
                writer = behaviors.plan_actions(turn, lead)
            elif step.id == REPORT_STEP:
                writer = behaviors.report_actions(turn, lead)
            else:
                writer = behaviors.cell_actions(turn, step, lead)
            async for action in writer:
                yield action
        except ModelError as failure:
            raise PlannerFailure(failure.status, failure.message, failure.retry_after, failure.action) from failure

    def _headings(self, session: Session, stage_id: str, step: Step) -> list[dict[str, Any]]:
        actions: list[dict[str, Any]] = []
        stage = session.stage(stage_id)
        if stage_id == LOAD_STAGE and step.id == LOAD_STEP and session.title:
            actions.append({"action": "update_title", "title": session.title})
        if stage is not None and stage.steps and stage.steps[0].id == step.id:
            actions.append({"action": "new_chapter", "content": stage.name})
        actions.append({"action": "new_section", "content": step.name})
        return actions

    # --- helpers --------------------------------------------------------------------------------------

    def _session(self, caller: Caller, settings: ModelSettings, request: Request, new: bool = False) -> Session:
        """The caller's session: a new one at a run's start, or when the planner has none (a restart, or it
        was forgotten): then the contract is read again from the task and the data's preview."""
        session = None if new else self.sessions.get(caller)
        if session is None:
            session = Session(model=self._model_name(settings, request))
            if not new:
                preview = request.variables.get(PREVIEW_VARIABLE)
                session.columns = read_columns(preview) if isinstance(preview, str) else {}
                session.contract = extract(request.task, session.columns)
            self.sessions.put(caller, session)
        return session

    def _settings(self) -> ModelSettings:
        settings = self.settings()
        if settings is None or not settings.configured:
            raise PlannerFailure(
                503,
                "The LLM planner has no model configured: open LLM Planner Settings (or set c.LLMPlanner.base_url "
                "and c.LLMPlanner.models).",
                action=OPEN_SETTINGS,
            )
        return settings

    def _model_name(self, settings: ModelSettings, request: Request) -> str:
        asked = request.variables.get(MODEL_VARIABLE)
        if not isinstance(asked, str) or not asked.strip():
            return settings.model
        if asked.strip() not in settings.models:
            raise PlannerFailure(
                400,
                f"The model {asked.strip()!r} is not among the models this planner may use "
                f"({', '.join(settings.models)}); pick one of them in the Run dialog.",
            )
        return asked.strip()

    def _step(self, session: Session, request: Request) -> Step:
        """The session's step, with the expected outputs the observation adds; rebuilt from the observation
        when the session does not know it."""
        known = session.step(request.step_id)
        expected = list(known.expected) if known else []
        expected += [name for name in request.expected if name not in expected]
        contracts = dict(known.contracts) if known else {}
        for name in expected:
            wanted = session.contract.get(name)
            if wanted is not None and name not in contracts:
                contracts[name] = wanted
        if known:
            return Step(known.id, known.name, known.goal, expected, contracts)
        goal = request.step_goal or bounded(request.step_id, MAX_NOTE_CHARS)
        return Step(request.step_id, goal, goal, expected, contracts)


def _title(task: str, files: list[str]) -> str:
    text = " ".join(task.split())
    if text:
        return text if len(text) <= 100 else text[:97] + "..."
    return f"Analysis of {files[0].rsplit('/', 1)[-1]}" if files else "Data analysis"


def _focus(content: str, step: Step) -> dict[str, Any]:
    update: dict[str, Any] = {"level": "behaviors", "focus": content}
    if step.expected:
        update["current_outputs"] = {"expected": list(step.expected), "contracts": step.public_contracts()}
    return update
