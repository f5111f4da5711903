"""The findings report, which cannot lie: it starts with what was not delivered, which steps were given up
and which parts of the task no step did, in the planner's words; then the answer, written from the values
the extension checked in the kernel (and the task's `@name[value]` lines, from the same values); then the
model's prose, whose sentences citing a number that no output of the kernel holds are set apart."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .contract import TaskContract, checked
from .observation import Check, plain_value

_NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")
_AT_LINE = re.compile(r"@[A-Za-z_]\w*\[[^\]\n]*\]")


@dataclass
class Outcome:
    """What the run delivered, as the planner states it at the top of the report."""

    problems: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    formatted: list[str] = field(default_factory=list)
    # `name = value` of each delivered value, for the model's prompt.
    values: list[str] = field(default_factory=list)
    # The task asked for deliverables.
    wanted: bool = False

    @property
    def delivered(self) -> bool:
        return not self.problems


def outcome(
    contract: TaskContract,
    checks: dict[str, Check],
    variables: dict[str, Any],
    given_up: list[tuple[str, str]],
    not_planned: list[str],
) -> Outcome:
    chinese = contract.chinese
    result = Outcome(wanted=bool(contract.deliverables))
    for item in contract.deliverables:
        check = checks.get(item.name)
        if check is not None and not check.ok:
            reason = check.reason or f"`{item.name}` did not pass its check"
            result.problems.append(f"**未交付：**{reason}" if chinese else f"**Not delivered:** {reason}")
            continue
        if check is None and item.name not in variables:
            missing = f"`{item.name}` is missing"
            result.problems.append(f"**未交付：**{missing}" if chinese else f"**Not delivered:** {missing}")
            continue
        value = plain_value(check.value) if check is not None else _variable_value(variables.get(item.name))
        if check is not None:
            form = checked(item, chinese)
            where = f"已在内核中检查：{form}" if chinese else f"checked in the kernel: {form}"
        else:
            where = "来自内核变量，未检查" if chinese else "from the kernel's variables, not checked"
        shown = f"`{item.name}` = {value}" if value is not None else f"`{item.name}`, {check.type if check else ''}"
        result.answers.append(f"**答案：**{shown}（{where}）" if chinese else f"**Answer:** {shown} ({where})")
        if value is not None:
            result.values.append(f"{item.name} = {value}")
            if contract.answer_format:
                result.formatted.append(f"@{item.name}[{value}]")
    for name, reason in given_up:
        result.problems.append(f"**已放弃：**步骤“{name}”：{reason}" if chinese
                               else f"**Given up:** the step “{name}”: {reason}")
    for part in not_planned:
        result.problems.append(f"**未完成：**“{part}”（没有步骤做它）" if chinese
                               else f"**Not done:** “{part}” (no step did it)")
    return result


def _variable_value(value: Any) -> str | None:
    """A variable's value as the observation summarised it, when that is the value itself (a scalar)."""
    if isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, str) and not re.fullmatch(r"[A-Za-z]+\(.*\)", value):
        return value
    return None


def head(result: Outcome, chinese: bool) -> str:
    """The top of the report: problems first, then the answers and the formatted answer lines."""
    lines = [*result.problems]
    if result.wanted and result.problems and not result.answers:
        lines.append("下面的文字由模型写成；没有经过检查的值支持任何答案。" if chinese
                     else "The text below is the model's; no checked value supports an answer.")
    if lines and result.answers:
        lines.append("")
    lines += result.answers
    if result.formatted:
        lines += ["", *result.formatted]
    return "\n\n".join(line for line in lines if line) if lines else ""


def sources(effects: list[str], checks: dict[str, Check], variables: dict[str, Any], task: str) -> str:
    """Everything a number in the report may come from: the kernel's outputs, the checked values, the
    variables' scalar values, the task's own words."""
    values = [check.value or "" for check in checks.values()]
    scalars = [str(v) for v in variables.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return "\n".join([*effects, *values, *scalars, task])


def supported(prose: str, printed: str) -> tuple[str, list[str]]:
    """The model's prose without `@name[…]` lines (the planner writes those) and without the sentences that
    cite a number no output shows; those sentences are returned apart."""
    prose = _AT_LINE.sub("", prose)
    seen = {_plain(n) for n in _NUMBER.findall(printed)}
    kept: list[str] = []
    moved: list[str] = []
    for line in prose.splitlines():
        bullet = re.match(r"^\s*(?:[-*+]|\d+[.)])\s+", line)
        pieces = [line] if bullet or not line.strip() else re.split(r"(?<=[.!?。！？])\s+", line)
        keep_line: list[str] = []
        for piece in pieces:
            if _unseen(piece, seen):
                moved.append(piece.strip()[len(bullet.group(0).strip()):].strip() if bullet else piece.strip())
            else:
                keep_line.append(piece)
        if keep_line and any(piece.strip() for piece in keep_line):
            kept.append(" ".join(keep_line))
        elif not line.strip():
            kept.append("")
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    return text, moved


def compose(top: str, prose: str, moved: list[str], chinese: bool) -> str:
    parts = [top] if top else []
    if prose:
        parts.append(prose)
    if moved:
        title = ("> **没有任何输出支持**（这些句子引用的数字没有出现在内核的输出中）：" if chinese
                 else "> **Not supported by any output** (these sentences cite numbers no output of the kernel shows):")
        parts.append("\n".join([title, *(f"> - {sentence}" for sentence in moved)]))
    return "\n\n".join(parts).strip()


def _plain(number: str) -> str:
    return number.replace(",", "").lstrip("-").rstrip(".")


def _unseen(piece: str, seen: set[str]) -> bool:
    for number in _NUMBER.findall(piece):
        plain = _plain(number)
        if len(plain.replace(".", "")) < 2 or plain in seen or _a_rounding(plain, seen):
            continue
        return True
    return False


def numbers_not_in(report: str, outputs: str) -> list[str]:
    """Numbers a report cites (two digits or more, or with decimals) that no output shows."""
    seen = {_plain(n) for n in _NUMBER.findall(outputs)}
    unseen: list[str] = []
    for number in _NUMBER.findall(report):
        plain = _plain(number)
        if len(plain.replace(".", "")) < 2 or plain in seen or plain in unseen or _a_rounding(plain, seen):
            continue
        unseen.append(plain)
    return unseen[:10]


def _a_rounding(cited: str, seen: set[str]) -> bool:
    """`cited` is a printed value rounded (or cut) to the decimals it shows, or given as a percentage:
    1234.6 or 1235 for 1234.56; 23.4 for 0.234."""
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
        for candidate in (number, number * 100):
            if abs(round(candidate, decimals) - value) < 10 ** -(decimals + 3):
                return True
            if int(candidate * 10**decimals) == int(value * 10**decimals):
                return True
    return False
