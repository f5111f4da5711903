"""A retry fixes its own cell (`rewrite_cell`, docs/protocol.md#actions): when the client offers the action
in its request (`options.optional_actions`) and the step's failed cell is known, the model's fix is sent as
the rewrite of that cell, so the notebook keeps one working cell per step and the failed code stays with the
cell as an attempt. Otherwise the code goes into a new cell, as before.
"""

from __future__ import annotations

from typing import Any

from .observation import Request

REWRITE_CELL = "rewrite_cell"
LAST_ADDED = "lastAddedCellId"


def offers_rewrite(request: Request) -> bool:
    """The client says it takes `rewrite_cell`."""
    return REWRITE_CELL in request.optional_actions


def failed_cell(request: Request, step_id: str, failed: bool) -> str | None:
    """The cell a retry's code rewrites, or None for a new cell.

    Only after this step's code failed (`failed`: its error is in the effects of the step's last behavior,
    or the planner remembers a failed try of the step) and when the client offers the action: the step's
    rewritten cell the observation names in `cell_attempts`, else the step's last code cell, which is the
    one that failed (`lastAddedCellId`).
    """
    if not failed or not offers_rewrite(request):
        return None
    for cell in request.cell_attempts:
        if cell.get("step_id") == step_id:
            name = cell.get("store_id") or cell.get("cell_id")
            if isinstance(name, str) and name:
                return name
    return LAST_ADDED


def code_actions(code: str, fix: str | None) -> list[dict[str, Any]]:
    """The actions that put `code` in the notebook and run it: the rewrite of `fix`, or a new cell."""
    if fix:
        return [
            {"action": REWRITE_CELL, "codecell_id": fix, "content": code},
            {"action": "exec", "codecell_id": fix, "need_output": True},
        ]
    return [
        {"action": "add", "shot_type": "action", "content": code},
        {"action": "exec", "codecell_id": LAST_ADDED, "need_output": True},
    ]
