"""What the planner answers when it cannot answer: an HTTP status, a sentence for the user and, when the fix
is in the LLM Planner Settings, the action that opens them (the panel shows a button for it)."""

from __future__ import annotations

from typing import Any

# The `action` of an error body whose fix is in the model settings (the extension offers to open them).
OPEN_SETTINGS = "open-llm-settings"


class PlannerFailure(Exception):
    """A request the planner cannot answer: its HTTP status, the user's message and an optional action."""

    def __init__(self, status: int, message: str, retry_after: float | None = None, action: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.retry_after = retry_after
        self.action = action

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"message": self.message}
        if self.action:
            body["action"] = self.action
        return body
