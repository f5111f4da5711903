"""The one owner of tokens, budgets and the run log.

Every model call's tokens are counted here (`record`, called by `calls.ModelCalls` after each request): into
the run's usage (in all and per behavior) and the user's day (UTC). Before a behavior, `check_run` refuses
(HTTP 403, the run stops with the message, other users go on) a user whose day's or run's tokens, or run's
behaviors, are spent. Each run's start is logged, and its end is one JSON line (user, notebook, model,
tokens, start, end, outcome: `completed`, `budget`, `replaced` when the user started another run of the
notebook, `expired` or `evicted` when the planner forgot it) in the log and in `c.LLMPlanner.run_log`.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .failures import PlannerFailure
from .model import Completion
from .sessions import Caller, Session
from .settings import LLMPlanner
from .usage import BehaviorKey, Usage

log = logging.getLogger("notebook_bcc.llm_planner")


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


def _day(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).date().isoformat()


@dataclass
class _OpenRun:
    session: Session
    start: float


class Accounting:
    def __init__(
        self, config: LLMPlanner, clock: Callable[[], float] = time.time, run_log: logging.Logger | None = None
    ) -> None:
        self.config = config
        self.clock = clock
        self.run_log = run_log or log
        self.day = _day(clock())
        # Tokens of the day by user.
        self.used: dict[str, int] = {}
        self._open: dict[Caller, _OpenRun] = {}
        self._restore()

    # --- limits -------------------------------------------------------------------------------------

    def _limit(self, user: str, name: str) -> tuple[int, str]:
        """A user's limit `name` and the setting it comes from."""
        limits = self.config.user_limits.get(user) if isinstance(self.config.user_limits, dict) else None
        if isinstance(limits, dict) and isinstance(limits.get(name), int):
            return int(limits[name]), f"c.LLMPlanner.user_limits[{user!r}]"
        return int(getattr(self.config, name)), f"c.LLMPlanner.{name}"

    def run_tokens(self, user: str) -> tuple[int, str]:
        return self._limit(user, "max_run_tokens")

    def check(self, caller: Caller) -> None:
        """Refuses (403) a user who has spent the day's tokens."""
        self._roll()
        limit, setting = self._limit(caller.user, "max_daily_tokens")
        used = self.used.get(caller.user, 0)
        if limit and used >= limit:
            raise PlannerFailure(
                403,
                f"You have used your token budget for today on this planner ({used:,} of {limit:,} tokens, "
                f"{setting}); it starts again at 00:00 UTC, or ask your administrator to raise it.",
            )

    def check_run(self, caller: Caller, session: Session) -> None:
        """Refuses (403) another behavior of a run whose behaviors or tokens are spent; the run log says so."""
        try:
            self.check(caller)
            limit = self.config.max_run_behaviors
            if limit and session.behaviors >= limit:
                raise PlannerFailure(
                    403,
                    f"This run has used its {limit} behaviors (c.LLMPlanner.max_run_behaviors); "
                    "start a new run, or ask your administrator to raise the limit.",
                )
            tokens, setting = self.run_tokens(caller.user)
            if tokens and session.usage.total >= tokens:
                raise PlannerFailure(
                    403,
                    f"This run has used its token budget ({session.usage.total:,} of {tokens:,} tokens, "
                    f"{setting}); start a new run, or ask your administrator to raise the budget.",
                )
        except PlannerFailure as failure:
            self.ended(caller, "budget", failure.message)
            raise

    # --- counting -----------------------------------------------------------------------------------

    def record(self, caller: Caller, session: Session, key: BehaviorKey | None, completion: Completion) -> None:
        """One model call's tokens: the run's, the behavior's and the user's day."""
        self._roll()
        session.usage.add(key, completion)
        self.used[caller.user] = self.used.get(caller.user, 0) + completion.prompt_tokens + completion.completion_tokens

    def public(self, session: Session, key: BehaviorKey | None) -> dict[str, Any]:
        """The planning answer's `usage`: the model, the behavior its feedback closes, the run, the costs."""
        behavior = session.usage.behavior(key)
        usage: dict[str, Any] = {
            "model": session.model,
            "behavior": behavior.public() if behavior else None,
            "run": session.usage.run.public(),
        }
        price = self.config.prices.get(session.model) if isinstance(self.config.prices, dict) else None
        if isinstance(price, dict):
            usage["cost"] = {
                "run": session.usage.run.cost(price),
                "behavior": (behavior or Usage()).cost(price) if behavior else None,
                "currency": str(price.get("currency", "USD")),
            }
        return usage

    # --- the log ------------------------------------------------------------------------------------

    def started(self, caller: Caller, session: Session) -> None:
        previous = self._open.pop(caller, None)
        if previous is not None and previous.session is not session:
            self._write(caller, previous, "replaced")
        self._open[caller] = _OpenRun(session, self.clock())
        self.run_log.info("run_start %s", json.dumps(
            {"time": round(self.clock(), 3), "user": caller.user, "notebook": caller.notebook_id,
             "model": session.model}, ensure_ascii=False))

    def ended(self, caller: Caller, outcome: str, message: str = "") -> None:
        run = self._open.pop(caller, None)
        if run is not None:
            self._write(caller, run, outcome, message)

    def forgotten(self, caller: Caller, session: Session, why: str) -> None:
        """The planner forgot the caller's session (sessions.py): its run, if still open, ends so."""
        run = self._open.get(caller)
        if run is not None and run.session is session:
            self.ended(caller, why)

    def _write(self, caller: Caller, run: _OpenRun, outcome: str, message: str = "") -> None:
        usage = run.session.usage.run
        record: dict[str, Any] = {
            "user": caller.user,
            "notebook": caller.notebook_id,
            "model": run.session.model,
            "tokens": usage.total,
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "model_calls": usage.model_calls,
            "behaviors": run.session.behaviors,
            "start": _iso(run.start),
            "end": _iso(self.clock()),
            "outcome": outcome,
        }
        if message:
            record["message"] = message
        line = json.dumps(record, ensure_ascii=False)
        self.run_log.info("run_end %s", line)
        if not self.config.run_log:
            return
        try:
            descriptor = os.open(self.config.run_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
            with os.fdopen(descriptor, "a", encoding="utf-8") as file:
                file.write(line + "\n")
        except OSError as error:
            log.error("LLM planner: cannot write the run log %s: %s", self.config.run_log, error)

    def _restore(self) -> None:
        """Today's tokens per user from the run log, so a restart does not give every user a new day."""
        if not self.config.run_log:
            return
        try:
            with open(self.config.run_log, encoding="utf-8") as file:
                for line in file:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if not isinstance(record, dict) or not str(record.get("end", "")).startswith(self.day):
                        continue
                    user, tokens = record.get("user"), record.get("tokens")
                    if isinstance(user, str) and isinstance(tokens, int):
                        self.used[user] = self.used.get(user, 0) + tokens
        except FileNotFoundError:
            return
        except OSError as error:
            log.error("LLM planner: cannot read the run log %s: %s", self.config.run_log, error)

    def _roll(self) -> None:
        today = _day(self.clock())
        if today != self.day:
            self.day = today
            self.used.clear()
