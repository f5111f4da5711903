"""Fixes the planner makes itself: a step whose check failed for a reason with one mechanical remedy is not
asked of the model again. The fix is the failed code with the remedy after it, sent once as the step's next
try (the rewrite of its cell where the client takes `rewrite_cell`), even when the model's tries are used up;
if that try fails too, the model is asked as for any failure, or the step is given up.

Only a value not rounded as the task asks is fixed so: `round(float(x), n)` changes nothing else in it. A
small model was seen rounding only what it printed, three times, with the right value left unrounded in the
kernel (DABench 9 on Qwen2.5-Coder-1.5B)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .memory import FailedTry, RunMemory

# The kernel check's reason (src/notebook/kernelChecks.ts): "`x` is 3.14159, a float64, not rounded to 2 decimals".
_NOT_ROUNDED = re.compile(r"`([A-Za-z_]\w*)` is [^;]*?[,:] not rounded to (\d+) decimals")


@dataclass(frozen=True)
class Repair:
    code: str
    # (name, decimals) of each value it rounds.
    rounded: tuple[tuple[str, int], ...]

    def words(self, chinese: bool) -> str:
        """What the notebook says of the fix, where it is a new cell."""
        if chinese:
            return "；".join(f"规划器按任务要求把 `{name}` 保留 {decimals} 位小数" for name, decimals in self.rounded) + "。"
        return "; ".join(f"The planner rounds `{name}` to {decimals} decimals" for name, decimals in self.rounded) + \
            ", as the task asks."


def repair(tried: FailedTry) -> Repair | None:
    """The planner's own fix of a failed try, or None when its reason has no mechanical remedy."""
    if not tried.code.strip():
        return None
    rounded = tuple(dict.fromkeys((m.group(1), int(m.group(2))) for m in _NOT_ROUNDED.finditer(tried.reason)))
    if not rounded:
        return None
    lines = [f"{name} = round(float({name}), {decimals})" for name, decimals in rounded]
    if all(line in tried.code.splitlines() for line in lines):
        # This try was the fix already.
        return None
    return Repair("\n".join([tried.code.rstrip(), *lines]), rounded)


def next_repair(memory: RunMemory, step_id: str) -> Repair | None:
    """The planner's fix of the step's last failed try, unless that code was tried already. It is sent even
    when the model's tries are used up: it asks nothing of the model."""
    tries = memory.tries(step_id)
    fix = repair(tries[-1]) if tries else None
    return None if fix is None or memory.repeat_of(step_id, fix.code) is not None else fix
