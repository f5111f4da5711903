"""What one behavior writes, by step: the load step (without the model), the plan, a code cell, the report.
Each yields DSLC actions as soon as they are known; a model error before the first is raised (it becomes the
answer's HTTP status), after it an `{"error": …}` line."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from . import prompts, report, rewrite
from .answers import AnswerUnreadable, StreamedField, cell_code, first_object, string_field
from .calls import ModelCalls
from .contract import is_chinese
from .delivered import keep_delivered
from .memory import known_now
from .model import ModelError
from .observation import MAX_PREVIEW_CHARS, Request, bounded, last_error, words
from .plan import (
    LOAD_STEP,
    PLAN_STEP,
    REPORT_STEP,
    Stage,
    Step,
    cover,
    deliver,
    load_stage,
    one_step,
    plan_stage,
    plan_text,
    report_stage,
    stages_of,
    template,
)
from .repairs import next_repair
from .sessions import Caller, Session
from .settings import LLMPlanner, ModelSettings
from .usage import BehaviorKey

PREVIEW_VARIABLE = "data_preview"
# Run variables the extension sends that are not the analysis's.
RUN_VARIABLES = {"problem_description", "task", "task_description", "csv_file_path", "data_files", "data_path",
                 "data_file", "llm_model", PREVIEW_VARIABLE}
MAX_REPORT_OUTPUTS = 6000
Action = dict[str, Any]


@dataclass
class Turn:
    """One behavior's request and what answering it needs."""

    calls: ModelCalls
    caller: Caller
    session: Session
    settings: ModelSettings
    request: Request
    key: BehaviorKey
    config: LLMPlanner
    # The latest answer was cut at the token limit (`read` says so when it cannot be read).
    cut: bool = False

    async def ask(self, messages: list[dict[str, str]], schema: dict[str, Any], on_text: Any = None,
                  again: bool = False) -> str:
        """The model's answer. `again`: the request asks once more for what the model answered unusably
        (unreadable, or code that already failed); it is sampled at `c.LLMPlanner.retry_temperature`, as
        at the usual temperature a small model often writes the same answer again."""
        temperature = self.config.retry_temperature if again else None
        completion = await self.calls.complete(self.caller, self.session, self.settings, self.key, messages, schema,
                                               on_text, temperature)
        self.cut = completion.cut
        return completion.text

    def read(self, text: str) -> dict[str, Any]:
        """The JSON object of the latest answer, `text`; an unreadable one the endpoint cut at the token limit
        says so (the JSON's own error says only that there is none)."""
        try:
            return first_object(text)
        except AnswerUnreadable as problem:
            if not self.cut:
                raise
            raise AnswerUnreadable(
                f"the answer was cut at {self.config.max_completion_tokens:,} tokens "
                "(c.LLMPlanner.max_completion_tokens) before its JSON ended") from problem

    async def ask_json(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
        """The model's JSON answer, asked once more with the parse error when the first is unreadable."""
        text = await self.ask(messages, schema)
        try:
            return self.read(text)
        except AnswerUnreadable as problem:
            return self.read(await self.ask(prompts.unreadable_messages(messages, text, str(problem)), schema,
                                            again=True))

    @property
    def preview(self) -> str:
        value = self.request.variables.get(PREVIEW_VARIABLE)
        return bounded(value, MAX_PREVIEW_CHARS) if isinstance(value, str) else ""


# --- load ---------------------------------------------------------------------------------------------


def load_actions(files: list[str], task: str) -> list[Action]:
    """The load step's cell: the data read into `df`, its column names stripped of the spaces around them
    (a model types `df['WINDSPEED']` where the file says ' WINDSPEED', and the printed types do not show the
    space: a KeyError no retry fixed, DABench 452, 453, 588), then what the planner reads the columns from."""
    path = files[0] if files else "data.csv"
    chinese = is_chinese(task)
    lower = path.lower()
    reader = "read_csv"
    if lower.endswith((".xlsx", ".xls")):
        reader = "read_excel"
    elif lower.endswith(".parquet"):
        reader = "read_parquet"
    elif lower.endswith(".json"):
        reader = "read_json"
    code = "\n".join([
        "import pandas as pd",
        "",
        f"df = pd.{reader}({json.dumps(path, ensure_ascii=False)})",
        "# 去掉列名两端的空格，与平时输入的写法一致。" if chinese
        else "# Column names without the spaces around them, as one types them.",
        "df = df.rename(columns=lambda name: name.strip() if isinstance(name, str) else name)",
        'print(f"Shape: {df.shape[0]} rows x {df.shape[1]} columns")',
        'print("Columns and types:")',
        "print(df.dtypes.to_string())",
        'print("First rows:")',
        "print(df.head().to_string())",
    ])
    text = (f"读取数据文件 `{path}`，查看它的行数、列、类型和前几行。" if chinese
            else f"Read `{path}` and look at its shape, columns, types and first rows.")
    return [
        {"action": "add", "shot_type": "dialogue", "content": text},
        {"action": "add", "shot_type": "action", "content": code},
        {"action": "exec", "codecell_id": "lastAddedCellId", "need_output": True},
    ]


# --- plan ---------------------------------------------------------------------------------------------


async def plan_actions(turn: Turn, lead: list[Action]) -> AsyncIterator[Action]:
    """The model plans the analysis from the task and the data's preview; the planner sizes it to the
    question, adds what it must deliver and cover, and shows it."""
    session, request = turn.session, turn.request
    contract = session.contract
    task = request.task
    closed = contract.closed
    messages = prompts.template_messages(task, request.data_files, turn.preview, contract, session.columns)
    notice = ""
    stages: list[Stage] = []
    try:
        answer = await turn.ask_json(messages, prompts.STEPS_SCHEMA if closed else prompts.TEMPLATE_SCHEMA)
        stages = stages_of(answer, turn.config.max_plan_steps, closed, contract.chinese, session.columns)
        title = words(answer.get("title"))
        if title and not contract.deliverables:
            session.title = title[:100]
        problem = "" if stages else "the plan names no step"
    except AnswerUnreadable as error:
        problem = str(error)
    if not stages:
        stages = one_step(task, contract.chinese)
        notice = f"The model's plan could not be read ({problem}); the run goes on with one analysis step."
    stages = deliver(stages, contract)
    stages, session.not_planned = cover(stages, contract, turn.config.max_plan_steps)
    kept = [load_stage(contract.chinese)] if request.data_files else []
    session.stages = [*kept, plan_stage(contract.chinese), *stages, report_stage(contract.chinese)]
    for action in lead:
        yield action
    if notice:
        yield {"error": notice}
    yield {"action": "update_workflow", "updated_workflow": template(session.title, session.stages)}
    yield {"action": "add", "shot_type": "dialogue", "content": plan_text(stages, contract, session.not_planned)}


# --- a code cell --------------------------------------------------------------------------------------


async def cell_actions(turn: Turn, step: Step, lead: list[Action]) -> AsyncIterator[Action]:
    """One cell for the step, streamed: the explanation as soon as its string is complete, then the code.
    A retry is held until its code is known: code that already failed in this step is not sent to the
    kernel; the model is asked once more, firmly and at the retry temperature, and if it writes it again the
    step is given up. A failed check with a mechanical remedy (`repairs.py`) is fixed by the planner first;
    values of the task that earlier steps delivered are not assigned again (`delivered.py`). When the client
    offers `rewrite_cell`, a retry's code is the rewrite of the failed cell (`rewrite.py`), without a new
    explanation cell beside it."""
    session, request = turn.session, turn.request
    memory = session.memory
    tries = memory.tries(step.id)
    hold = bool(tries)
    fix = rewrite.failed_cell(request, step.id, bool(tries) or bool(last_error(request.current_effects)))
    # A failure with a mechanical remedy: the planner's own fix, once, without asking the model.
    own = next_repair(memory, step.id)
    messages = [] if own is not None else _cell_messages(
        turn, step, tries[-1].code if tries else "", tries[-1].reason if tries else "")
    queue: asyncio.Queue[Action | None] = asyncio.Queue()
    # A fix rewrites the failed cell: no new explanation cell beside it.
    sent = {"explanation": fix is not None, "code": False}
    fields = {"explanation": StreamedField("explanation"), "code": StreamedField("code")}
    # The task's values earlier steps delivered and checked: this step's code does not assign them again.
    delivered = session.delivered_before(step.id)

    def send_code(code: str, explanation: str | None) -> None:
        if not sent["explanation"] and explanation and explanation.strip():
            queue.put_nowait({"action": "add", "shot_type": "dialogue", "content": explanation.strip()})
        sent["explanation"] = sent["code"] = True
        code, _kept = keep_delivered(code, delivered)
        memory.sent(step.id, turn.key[1], code)
        for action in rewrite.code_actions(code, fix):
            queue.put_nowait(action)

    def streamed(answer_text: str) -> None:
        if hold or sent["code"]:
            return
        if not sent["explanation"]:
            explanation = fields["explanation"].read(answer_text)
            if explanation is None:
                return
            sent["explanation"] = True
            if explanation.strip():
                queue.put_nowait({"action": "add", "shot_type": "dialogue", "content": explanation.strip()})
        code = fields["code"].read(answer_text)
        if code is not None and code.strip():
            send_code(cell_code(code), None)

    async def write() -> None:
        try:
            if own is not None:
                send_code(own.code, own.words(is_chinese(request.task)))
                return
            text = await turn.ask(messages, prompts.CELL_SCHEMA, streamed)
            if sent["code"]:
                return
            explanation, code = await _read_cell(turn, messages, text)
            repeat = memory.repeat_of(step.id, code)
            if repeat is not None:
                reason = repeat.reason
                known = known_now(reason, session.columns, _kernel_variables(request), code)
                firm = [*messages, {"role": "assistant", "content": text[:3000]},
                        {"role": "user", "content": prompts.retry_note(code, reason, known, repeated=True)}]
                explanation, code = await _read_cell(turn, firm, await turn.ask(firm, prompts.CELL_SCHEMA, again=True))
                if memory.repeat_of(step.id, code) is not None:
                    session.repeated[step.id] = (f"the model wrote again the code that failed ({reason}), "
                                                 "even when asked for different code")
                    queue.put_nowait({"action": "add", "shot_type": "dialogue",
                                      "content": _repeated_words(reason, is_chinese(request.task))})
                    return
            send_code(code, explanation)
        finally:
            queue.put_nowait(None)

    async for action in _drain(turn, queue, write, lead):
        yield action


def _cell_messages(turn: Turn, step: Step, failed_code: str, failed_reason: str) -> list[dict[str, str]]:
    session, request = turn.session, turn.request
    shown = _kernel_variables(request)
    error = last_error(request.current_effects)
    retry = ""
    if failed_code:
        retry = prompts.retry_note(failed_code, failed_reason,
                                   known_now(error or failed_reason, session.columns, shown, failed_code),
                                   repeated=False)
    elif error:
        # The planner does not know the code that failed (it restarted): the traceback tells the model.
        retry = "\n".join(["The previous code for this step failed with:", prompts.as_data(error[-1500:]),
                           known_now(error, session.columns, shown), "Write corrected code."]).strip()
    elif request.focus and request.iteration > 1:
        retry = f"Note: {request.focus}"
    wanted = [step.contract(name) for name in step.expected]
    return prompts.cell_messages(request.task, turn.preview, session.columns, session.memory.context(), shown,
                                 step.name, step.goal, wanted, retry,
                                 prompts.user_notes_block(request.user_notes, step.id))


def _kernel_variables(request: Request) -> dict[str, Any]:
    """The request's variables less the run's own (the task, the data file's path): listed as the kernel's,
    the model used `csv_file_path` in its code, a NameError (DABench 180, 575, 588)."""
    return {name: value for name, value in request.variables.items() if name not in RUN_VARIABLES}


async def _read_cell(turn: Turn, messages: list[dict[str, str]], text: str) -> tuple[str, str]:
    """The explanation and code of a cell answer: read tolerantly, then asked once more."""
    try:
        answer = turn.read(text)
        code = string_field(answer, "code", "python", "source")
        if not code:
            raise AnswerUnreadable('the answer has no "code"')
    except AnswerUnreadable as problem:
        again = await turn.ask(prompts.unreadable_messages(messages, text, str(problem)), prompts.CELL_SCHEMA,
                               again=True)
        answer = turn.read(again)
        code = string_field(answer, "code", "python", "source")
        if not code:
            raise AnswerUnreadable('the answer has no "code", twice') from problem
    return string_field(answer, "explanation", "markdown", "description"), cell_code(code)


def _repeated_words(reason: str, chinese: bool) -> str:
    if chinese:
        return f"模型再次写出了已经失败的代码（{reason}），即使要求它换一种写法。这段代码不会再运行；这个步骤被放弃。"
    return (f"The model wrote again the code that already failed ({reason}), even when asked for different code. "
            "It is not run again; this step is given up.")


async def _drain(turn: Turn, queue: asyncio.Queue[Action | None], write: Any, lead: list[Action]) -> AsyncIterator[Action]:
    """The actions `write` puts on `queue`, the headings before the first; its failure before any action is
    raised, after one it is an error line. Cancelled (Stop), the model request ends with it."""
    handle = asyncio.ensure_future(write())
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
        closing: Action | None = None
        try:
            handle.result()
        except ModelError as failure:
            if not started:
                raise
            closing = {"error": failure.message}
        except AnswerUnreadable as failure:
            turn.session.unread[turn.key] = str(failure)
            closing = {"error": f"The model's answer could not be read: {failure}"}
        if not started:
            for heading in lead:
                yield heading
        if closing is not None:
            yield closing
    finally:
        if not handle.done():
            handle.cancel()
            try:
                await handle
            except BaseException:  # noqa: BLE001 - the cancellation itself, or the request's own failure
                pass


# --- the report ---------------------------------------------------------------------------------------


async def report_actions(turn: Turn, lead: list[Action]) -> AsyncIterator[Action]:
    """The report: the planner's statement of what was and was not delivered, then the model's prose."""
    session, request = turn.session, turn.request
    contract = session.contract
    checks = {**session.checks, **(request.checks or {})}
    result = report.outcome(contract, checks, request.variables, [*session.given_up, *_unfinished(session)],
                            session.not_planned)
    effects = [_without_first_rows(text) for text in request.all_effects]
    printed_all = [*effects, *(record.printed for record in session.memory.done)]
    outputs = "\n---\n".join(text for text in effects if text.strip())[-MAX_REPORT_OUTPUTS:]
    messages = prompts.report_messages(request.task, outputs, result.values)
    prose = ""
    try:
        answer = await turn.ask_json(messages, prompts.REPORT_SCHEMA)
        prose = string_field(answer, "report", "markdown", "content")
        if not prose:
            raise AnswerUnreadable('the answer has no "report"')
    except AnswerUnreadable as failure:
        prose = (f"（模型的总结无法读取：{failure}）" if contract.chinese
                 else f"(The model's summary could not be read: {failure}.)")
    kept, moved = report.supported(prose, report.sources(printed_all, checks, request.variables, request.task))
    content = report.compose(report.head(result, contract.chinese), kept, moved, contract.chinese)
    for action in lead:
        yield action
    yield {"action": "add", "shot_type": "dialogue", "content": content}


def _unfinished(session: Session) -> list[tuple[str, str]]:
    """The analysis steps the run left without reaching them and that the planner did not give up (the
    client's own limit ended them, or the user skipped them)."""
    done = {record.step_id for record in session.memory.done}
    given_up = {name for name, _reason in session.given_up}
    reason = "它没有完成" if session.contract.chinese else "it was not achieved"
    return [(step.name, reason) for stage in session.stages for step in stage.steps
            if step.id not in (LOAD_STEP, PLAN_STEP, REPORT_STEP) and step.id not in done and step.name not in given_up]


def _without_first_rows(effect: str) -> str:
    """The load step's output without the data's first rows: a row's value is no finding, and a number a
    report takes from them ("West: 2232.56", a North row's revenue) is not supported by the analysis."""
    if "Columns and types:" in effect and "First rows:" in effect:
        return effect.split("First rows:", 1)[0].rstrip()
    return effect
