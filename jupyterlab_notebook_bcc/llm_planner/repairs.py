"""Fixes the planner makes itself: a step whose check failed for a reason with one mechanical remedy is not
asked of the model again. The fix is the failed code with the remedy after it, sent once as the step's next
try (the rewrite of its cell where the client takes `rewrite_cell`), even when the model's tries are used up;
if that try fails too, the model is asked as for any failure, or the step is given up.

Two remedies, each of which changes nothing else of the value:
- a number not rounded as the task asks: `round(float(x), n)`. A small model was seen rounding only what it
  printed, three times, with the right value left unrounded in the kernel (DABench 9 on Qwen2.5-Coder-1.5B);
- a text that is not one of the values the task allows, but names exactly one of them ("The distribution
  of BMI values is normal" where "normal" or "not_normal" was asked, DABench 25): that value, as the task
  spells it."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from .memory import FailedTry, RunMemory

# The kernel check's reasons (src/notebook/kernelChecks.ts):
# "`x` is 3.14159, a float64, not rounded to 2 decimals"
_NOT_ROUNDED = re.compile(r"`([A-Za-z_]\w*)` is [^;]*?[,:] not rounded to (\d+) decimals")
# "`x` is 'The distribution … is normal', not one of: 'normal', 'not_normal'" (a value that is no text says
# its type: "`x` is 3, an int, not one of: …")
_NOT_ONE_OF = re.compile(r"`([A-Za-z_]\w*)` is (.+?), not one of: ([^;]+)")


@dataclass(frozen=True)
class Repair:
    code: str
    # What each line does, in English and in Chinese.
    said: tuple[tuple[str, str], ...]

    def words(self, chinese: bool) -> str:
        """What the notebook says of the fix, where it is a new cell."""
        return ("" if chinese else " ").join(zh if chinese else en for en, zh in self.said)


def repair(tried: FailedTry) -> Repair | None:
    """The planner's own fix of a failed try, or None when its reason has no mechanical remedy."""
    if not tried.code.strip():
        return None
    lines: list[str] = []
    said: list[tuple[str, str]] = []
    for match in _NOT_ROUNDED.finditer(tried.reason):
        name, decimals = match.group(1), int(match.group(2))
        lines.append(f"{name} = round(float({name}), {decimals})")
        said.append((f"The planner rounds `{name}` to {decimals} decimals, as the task asks.",
                     f"规划器按任务要求把 `{name}` 保留 {decimals} 位小数。"))
    for match in _NOT_ONE_OF.finditer(tried.reason):
        name = match.group(1)
        value, choices = _literal(match.group(2)), _literal(f"[{match.group(3)}]")
        if not isinstance(value, str) or not isinstance(choices, list):
            continue
        choice = _the_one(value, [c for c in choices if isinstance(c, str)])
        if choice is not None:
            lines.append(f"{name} = {choice!r}")
            said.append((f"The planner stores `{name}` as {choice!r}, as the task spells it.",
                         f"规划器按任务的写法把 `{name}` 存为 {choice!r}。"))
    existing = tried.code.splitlines()
    if not lines or all(line in existing for line in lines):
        # Nothing mechanical, or this try was the fix already.
        return None
    return Repair("\n".join([tried.code.rstrip(), *lines]), tuple(dict.fromkeys(said)))


def next_repair(memory: RunMemory, step_id: str) -> Repair | None:
    """The planner's fix of the step's last failed try, unless that code was tried already. It is sent even
    when the model's tries are used up: it asks nothing of the model."""
    tries = memory.tries(step_id)
    fix = repair(tries[-1]) if tries else None
    return None if fix is None or memory.repeat_of(step_id, fix.code) is not None else fix


def _literal(text: str) -> object:
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _the_one(value: str, choices: list[str]) -> str | None:
    """The one allowed value `value` names as a whole word (`_` read as a space, any case); a longer value
    holding a shorter one wins where both are found at the same place ("not normal": not_normal)."""
    text = value.lower().replace("_", " ")
    taken: list[tuple[int, int]] = []
    found: set[str] = set()
    for choice in sorted(choices, key=len, reverse=True):
        spelled = choice.lower().replace("_", " ").strip()
        if not spelled:
            continue
        for match in re.finditer(rf"(?<![a-z0-9]){re.escape(spelled)}(?![a-z0-9])", text):
            if any(start <= match.start() and match.end() <= end for start, end in taken):
                continue
            taken.append(match.span())
            found.add(choice)
    return found.pop() if len(found) == 1 else None
