"""Judging a behavior from the kernel's own observation, never by asking the model: achieved when its code
raised no error and every variable of the step passed its check in the kernel (CONTRACTS.md §3-4), or, for
a client that sends no checks, exists. The reason of a failed check is the next try's note."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .observation import Check, error_line


@dataclass(frozen=True)
class Verdict:
    achieved: bool
    reason: str = ""


def judge(
    expected: list[str],
    result: str,
    error: str,
    unread: str,
    checks: dict[str, Check] | None,
    variables: dict[str, Any],
) -> Verdict:
    """`result` is the feedback's `last_action_result`; `error` the traceback of the behavior's outputs;
    `unread` why the model's answer could not be read ("" when it could); `checks` the output checks (None
    when the client sent none)."""
    if unread:
        return Verdict(False, f"the model's answer could not be read ({unread})")
    if error:
        return Verdict(False, f"the code failed: {error_line(error)}")
    if result != "success":
        return Verdict(False, f"the last behavior was {result}" if result in ("skipped", "stopped", "interrupted")
                       else "the last behavior did not succeed")
    problems: list[str] = []
    for name in expected:
        check = checks.get(name) if checks is not None else None
        if check is not None:
            if not check.ok:
                problems.append(check.reason or f"`{name}` did not pass its check")
        elif name not in variables:
            problems.append(f"`{name}` is missing")
    if problems:
        return Verdict(False, "; ".join(problems))
    return Verdict(True)


def the_report_step(result: str, unread: str) -> Verdict:
    """The report (and the plan) step: reached when its behavior ran and its answer could be read."""
    if unread:
        return Verdict(False, f"the model's answer could not be read ({unread})")
    return Verdict(result == "success", "" if result == "success" else f"the last behavior was {result}")
