"""The one door every model request of the planner goes through: it picks the client for the run's model, holds
one of the user's model streams (`c.LLMPlanner.max_streams_per_user`), reserves the request's worst case against
the budgets before it starts, asks, and settles the reservation to what the request consumed: the counts the
endpoint reported, else an estimate. A request cut by its client, by Stop or by a failure after the endpoint
took it is charged too; one the endpoint refused or never got is not. No request passes this by."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from .accounting import Accounting
from .failures import PlannerFailure
from .model import (
    Completion,
    ModelClient,
    ModelError,
    OnText,
    Received,
    prompt_estimate,
    text_estimate,
)
from .sessions import Caller, Session
from .settings import ModelSettings
from .usage import BehaviorKey

ModelFactory = Callable[[ModelSettings, str], ModelClient]


class ModelCalls:
    def __init__(self, factory: ModelFactory, accounting: Accounting) -> None:
        self.factory = factory
        self.accounting = accounting
        # Model streams open per user.
        self.streams: dict[str, int] = {}

    async def complete(
        self,
        caller: Caller,
        session: Session,
        settings: ModelSettings,
        key: BehaviorKey | None,
        messages: list[dict[str, str]],
        schema: dict[str, Any] | None,
        on_text: OnText | None = None,
        temperature: float | None = None,
    ) -> Completion:
        """One request for the run's model, at `temperature` (the configured one when None); its tokens count
        for the run, the behavior `key` and the user. An answer cut before its first word (a shared server
        interrupted it) is asked once more."""
        client = self.factory(settings, session.model or settings.model)
        try:
            return await self._ask(client, caller, session, key, messages, schema, on_text, temperature)
        except ModelError as error:
            if error.kind != "cut":
                raise
            return await self._ask(client, caller, session, key, messages, schema, on_text, temperature)

    async def _ask(
        self,
        client: ModelClient,
        caller: Caller,
        session: Session,
        key: BehaviorKey | None,
        messages: list[dict[str, str]],
        schema: dict[str, Any] | None,
        on_text: OnText | None,
        temperature: float | None,
    ) -> Completion:
        self._open_stream(caller.user)
        try:
            worst = prompt_estimate(messages) + max(0, self.accounting.config.max_completion_tokens)
            hold = self.accounting.reserve(caller, session, worst)
            completion: Completion | None = None
            try:
                completion = await client.complete(messages, schema, on_text, temperature)
                return completion
            except (Exception, asyncio.CancelledError) as error:
                received = getattr(client, "received", None)
                completion = consumed(received if isinstance(received, Received) else None, messages, error)
                raise
            finally:
                self.accounting.settle(hold, key, completion)
        finally:
            self._close_stream(caller.user)

    def _open_stream(self, user: str) -> None:
        """One more model stream for `user`, or 429 when `max_streams_per_user` are open."""
        limit = self.accounting.config.max_streams_per_user
        open_now = self.streams.get(user, 0)
        if limit > 0 and open_now >= limit:
            raise PlannerFailure(
                429,
                f"You already have {limit} model requests running on this planner "
                "(c.LLMPlanner.max_streams_per_user): wait until one of your runs has its answer, or stop one, "
                "then Retry.",
            )
        self.streams[user] = open_now + 1

    def _close_stream(self, user: str) -> None:
        left = self.streams.get(user, 0) - 1
        if left > 0:
            self.streams[user] = left
        else:
            self.streams.pop(user, None)


def consumed(received: Received | None, messages: list[dict[str, str]], error: BaseException) -> Completion | None:
    """What a request that did not end well consumed: the counts the endpoint reported, else its prompt and the
    text received estimated from their characters (marked estimated); None when the endpoint refused it or was
    never reached (an error before its stream opened that is not a timeout)."""
    if received is None:
        return None
    if isinstance(error, ModelError) and not received.opened and error.kind != "timeout":
        return None
    if received.usage is not None:
        return Completion(received.text, received.usage[0], received.usage[1], 0.0, "none")
    return Completion(received.text, prompt_estimate(messages), text_estimate(received.text), 0.0, "none",
                      estimated=True)
