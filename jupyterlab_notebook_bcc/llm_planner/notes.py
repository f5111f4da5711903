"""The user's notes for the planner (``observation.context.user_notes``, docs/protocol.md#observation).

A note on a cell or a step ("use the median, not the mean", "ignore the 2019 rows") is the user's
instruction: it goes into the code prompt above the task's defaults, the notes on the step being
written first. Bounded like the client bounds them.
"""

from __future__ import annotations

from typing import Any

MAX_NOTES = 20
MAX_NOTE_CHARS = 1000


def user_notes(observation: dict[str, Any], step_id: str | None) -> list[str]:
    """The notes' texts, each saying where it was made: the current step's first, then the others."""
    context = observation.get("context")
    notes = context.get("user_notes") if isinstance(context, dict) else None
    if not isinstance(notes, list):
        return []
    here: list[str] = []
    elsewhere: list[str] = []
    for note in notes[:MAX_NOTES]:
        if not isinstance(note, dict) or not isinstance(note.get("text"), str):
            continue
        text = " ".join(note["text"].split())[:MAX_NOTE_CHARS]
        if not text:
            continue
        step = note.get("step_id") if isinstance(note.get("step_id"), str) else None
        if isinstance(note.get("cell_id"), str):
            where = f" (on a cell of step {step})" if step else " (on a cell)"
        else:
            where = f" (on step {step})" if step else ""
        (here if step is not None and step == step_id else elsewhere).append(f"- {text}{where}")
    return here + elsewhere


def with_user_notes(
    messages: list[dict[str, str]], observation: dict[str, Any], step_id: str | None
) -> list[dict[str, str]]:
    """The messages with the user's notes above the last request's defaults; the same ones without notes."""
    notes = user_notes(observation, step_id)
    if not notes or not messages or messages[-1].get("role") != "user":
        return messages
    first, _, rest = messages[-1]["content"].partition("\n")
    block = "\n".join([
        "The user's instructions for this analysis (follow them; they take precedence over the defaults below):",
        *notes,
    ])
    content = f"{first}\n{block}\n{rest}" if rest else f"{first}\n{block}"
    return [*messages[:-1], {**messages[-1], "content": content}]
