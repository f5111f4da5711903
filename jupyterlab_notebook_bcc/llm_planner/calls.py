"""The one door every model request of the planner goes through: it picks the client for the run's model,
asks, and has the accounting count what the answer cost. Budget reservations, a cap on concurrent requests
and a policy on where requests may go belong here (issue #41), so that no request passes them by."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .accounting import Accounting
from .model import Completion, ModelClient, ModelError, OnText
from .sessions import Caller, Session
from .settings import ModelSettings
from .usage import BehaviorKey

ModelFactory = Callable[[ModelSettings, str], ModelClient]


class ModelCalls:
    def __init__(self, factory: ModelFactory, accounting: Accounting) -> None:
        self.factory = factory
        self.accounting = accounting

    async def complete(
        self,
        caller: Caller,
        session: Session,
        settings: ModelSettings,
        key: BehaviorKey | None,
        messages: list[dict[str, str]],
        schema: dict[str, Any] | None,
        on_text: OnText | None = None,
    ) -> Completion:
        """One request for the run's model; its tokens count for the run, the behavior `key` and the user. An
        answer cut before its first word (a shared server interrupted it) is asked once more."""
        client = self.factory(settings, session.model or settings.model)
        try:
            completion = await client.complete(messages, schema, on_text)
        except ModelError as error:
            if error.kind != "cut":
                raise
            completion = await client.complete(messages, schema, on_text)
        self.accounting.record(caller, session, key, completion)
        return completion
