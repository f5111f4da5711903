"""Reading a DSLC request tolerantly: where the run is, the task, the data files, the kernel's variables and
outputs, the output checks the extension ran (CONTRACTS.md §3), the user's notes for the planner
(`context.user_notes`, docs/protocol.md#observation) and the error a behavior raised."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .failures import PlannerFailure

TASK_VARIABLES = ("problem_description", "task", "task_description")
DATA_VARIABLES = ("csv_file_path", "data_files", "data_path", "data_file")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
# The user's notes are bounded like the client bounds them (src/notebook/notes.ts).
MAX_NOTES = 20
MAX_NOTE_CHARS = 1000
# The kind of an error as a traceback's last line names it: `KeyError`, `pandas.errors.ParserError`, …
ERROR_KIND = r"[A-Za-z_][\w.]*(?:Error|Exception|Warning)"
_ERROR_LINE = re.compile(rf"^({ERROR_KIND}):\s*(.*)$")
# The most characters of a request's own text a prompt takes: the task, and a step's goal or the focus (a
# note); the data's preview as the load step printed it. More is cut, and the cut says so.
MAX_TASK_CHARS = 4000
MAX_NOTE_CHARS = 1000
MAX_PREVIEW_CHARS = 2500
CUT = " [… cut]"


def record(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def bounded(value: str, limit: int) -> str:
    """`value`, or its first `limit` characters and a visible mark that the rest was cut."""
    return value if len(value) <= limit else value[:limit].rstrip() + CUT


def words(value: Any) -> str:
    """A model's text that says something: not a placeholder such as "…" or "..."."""
    found = text(value)
    return found if any(ch.isalnum() for ch in found) else ""


@dataclass(frozen=True)
class Check:
    """One result of `observation.context.output_checks`."""

    name: str
    ok: bool
    kind: str = "any"
    type: str = ""
    value: str | None = None
    reason: str = ""


@dataclass(frozen=True)
class UserNote:
    """One of the user's notes: its text on one line, and the step or cell it was written on."""

    text: str
    step_id: str | None = None
    on_cell: bool = False


@dataclass
class Request:
    """What one `/planning` or `/generating` body says, read once."""

    stage_id: str = ""
    step_id: str = ""
    behavior_id: str = ""
    iteration: int = 0
    step_goal: str = ""
    focus: str = ""
    expected: list[str] = field(default_factory=list)
    variables: dict[str, Any] = field(default_factory=dict)
    current_effects: list[str] = field(default_factory=list)
    history_effects: list[str] = field(default_factory=list)
    # None: the client sent no checks (an older client); {}: it checked nothing.
    checks: dict[str, Check] | None = None
    feedback: dict[str, Any] = field(default_factory=dict)
    # The optional actions the client takes (`options.optional_actions`, such as `rewrite_cell`).
    optional_actions: list[str] = field(default_factory=list)
    # The run's rewritten cells and their failed attempts (`observation.context.cell_attempts`).
    cell_attempts: list[dict[str, Any]] = field(default_factory=list)
    user_notes: list[UserNote] = field(default_factory=list)

    @property
    def task(self) -> str:
        for name in TASK_VARIABLES:
            value = self.variables.get(name)
            if isinstance(value, str) and value.strip():
                return bounded(value.strip(), MAX_TASK_CHARS)
        return ""

    @property
    def data_files(self) -> list[str]:
        files: list[str] = []
        for name in DATA_VARIABLES:
            value = self.variables.get(name)
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item.strip() and item.strip() not in files:
                    files.append(item.strip())
        return files

    @property
    def all_effects(self) -> list[str]:
        return [*self.history_effects, *self.current_effects]

    @property
    def result(self) -> str:
        return text(self.feedback.get("last_action_result")) or "success"

    @property
    def feedback_behavior(self) -> str:
        return text(self.feedback.get("behavior_id"))


def _malformed(what: str) -> PlannerFailure:
    return PlannerFailure(400, f"LLM planner: the request's {what}.")


def _iteration(value: Any) -> int:
    """`behavior_iteration`: an integer (absent or null: 0; a whole number written as a float or in digits)."""
    if value is None:
        return 0
    if isinstance(value, bool):
        raise _malformed("observation.location.current.behavior_iteration is not an integer")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 9:
        return int(value.strip())
    raise _malformed(f"observation.location.current.behavior_iteration is not an integer ({str(value)[:40]!r})")


def _effects(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _malformed(f"observation.context.effects.{name} is not a list")
    return [e if isinstance(e, str) else str(e) for e in value]


def read_request(body: dict[str, Any]) -> Request:
    """The request's fields; a field of the wrong type where the planner needs it is a 400 that names it."""
    if body.get("observation") is not None and not isinstance(body.get("observation"), dict):
        raise _malformed("observation is not a JSON object")
    observation = record(body.get("observation"))
    location = record(observation.get("location"))
    current = record(location.get("current"))
    context = record(observation.get("context"))
    effects = record(context.get("effects"))
    progress = record(location.get("progress"))
    outputs = record(record(progress.get("steps")).get("current_outputs"))
    expected = [n for n in outputs.get("expected") or [] if isinstance(n, str) and IDENTIFIER.fullmatch(n)]
    iteration = _iteration(current.get("behavior_iteration"))
    return Request(
        stage_id=text(current.get("stage_id")),
        step_id=text(current.get("step_id")),
        behavior_id=text(current.get("behavior_id")),
        iteration=iteration,
        step_goal=bounded(text(record(location.get("goals")).get("step")), MAX_NOTE_CHARS),
        focus=bounded(text(record(progress.get("behaviors")).get("focus")), MAX_NOTE_CHARS),
        expected=expected,
        variables=record(context.get("variables")),
        current_effects=_effects(effects.get("current"), "current"),
        history_effects=_effects(effects.get("history"), "history"),
        checks=read_checks(context.get("output_checks")),
        feedback=record(body.get("behavior_feedback")),
        optional_actions=[a for a in _items(record(body.get("options")).get("optional_actions")) if isinstance(a, str)],
        cell_attempts=[item for item in _items(context.get("cell_attempts")) if isinstance(item, dict)],
        user_notes=read_user_notes(context.get("user_notes")),
    )


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def read_user_notes(value: Any) -> list[UserNote]:
    """The user's notes that hold text, bounded in count and length, each on one line."""
    if not isinstance(value, list):
        return []
    notes: list[UserNote] = []
    for raw in value[:MAX_NOTES]:
        if not isinstance(raw, dict) or not isinstance(raw.get("text"), str):
            continue
        note = " ".join(raw["text"].split())[:MAX_NOTE_CHARS]
        if note:
            step = raw.get("step_id")
            notes.append(UserNote(note, step if isinstance(step, str) else None, isinstance(raw.get("cell_id"), str)))
    return notes


def read_checks(value: Any) -> dict[str, Check] | None:
    """The extension's output checks (CONTRACTS.md §3), each kept only when it has a boolean `ok`."""
    if not isinstance(value, dict):
        return None
    checks: dict[str, Check] = {}
    for name, raw in value.items():
        if not isinstance(name, str) or not isinstance(raw, dict) or not isinstance(raw.get("ok"), bool):
            continue
        shown = raw.get("value")
        checks[name] = Check(
            name=name,
            ok=raw["ok"],
            kind=text(raw.get("kind")) or "any",
            type=text(raw.get("type")),
            value=shown if isinstance(shown, str) else None if shown is None else str(shown),
            reason=text(raw.get("reason")),
        )
    return checks


def last_error(texts: list[str]) -> str:
    """The latest effect that holds a Python error (its traceback), or ""."""
    for item in reversed(texts):
        if "Traceback (most recent call last)" in item:
            return item.strip()
        if any(_ERROR_LINE.match(line.strip()) for line in item.splitlines()):
            return item.strip()
    return ""


def error_line(error: str) -> str:
    """The `Name: message` line of a traceback (its last such line), or its last line."""
    lines = [line.strip() for line in error.splitlines() if line.strip()]
    for line in reversed(lines):
        if _ERROR_LINE.match(line):
            return line[:300]
    return lines[-1][:300] if lines else ""


def plain_value(shown: str | None) -> str | None:
    """A checked value as a person writes it: `'North'` -> North, `np.float64(3.5)` -> 3.5."""
    if shown is None:
        return None
    value = shown.strip()
    wrapped = re.fullmatch(r"(?:np|numpy)\.[a-z_]+\d*\((.*)\)", value)
    if wrapped:
        value = wrapped.group(1).strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return value
