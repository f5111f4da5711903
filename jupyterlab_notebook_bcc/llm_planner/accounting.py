"""The one owner of tokens, budgets and the run log.

Every model call goes through `calls.ModelCalls`, which `reserve`s its worst case (its prompt, estimated, and
`max_completion_tokens`) before it starts and `settle`s after it, however it ended: the reservation is given
back and what the call consumed is counted into the run's usage (in all and per behavior) and the user's day
(UTC). A call is refused (HTTP 403, the run stops with the message, other users go on) when the user's day or
the run has no tokens left beside what is counted and what calls in flight hold; `check_run` says the same
before a behavior, and refuses a run whose behaviors are spent. So calls in parallel cannot pass a budget
together; a budget is passed by at most the one call that started while some of it was left. Each run's start
is logged, and its end is one JSON line (user, notebook, model, tokens, `estimated` when some were estimated,
start, end, outcome: `completed`, `budget`, `replaced` when the user started another run of the notebook,
`expired` or `evicted` when the planner forgot it) in the log and in `c.LLMPlanner.run_log`.
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


def _held(tokens: int) -> str:
    return f", {tokens:,} more held by requests in flight" if tokens else ""


@dataclass
class _OpenRun:
    session: Session
    start: float


@dataclass(eq=False)
class Hold:
    """Tokens a model call in flight reserved for the user's day and the run."""

    caller: Caller
    session: Session
    tokens: int


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
        # Tokens held by calls in flight, by user, and the holds themselves.
        self.reserved: dict[str, int] = {}
        self._holds: list[Hold] = []
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
        """Refuses (403) a user whose day's tokens are spent, or held by their calls in flight."""
        self._roll()
        limit, setting = self._limit(caller.user, "max_daily_tokens")
        used = self.used.get(caller.user, 0)
        held = self.reserved.get(caller.user, 0)
        if limit and used + held >= limit:
            raise PlannerFailure(
                403,
                f"You have used your token budget for today on this planner ({used:,} of {limit:,} tokens"
                f"{_held(held)}, {setting}); it starts again at 00:00 UTC, or ask your administrator to raise it.",
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
            self._check_run_tokens(caller, session)
        except PlannerFailure as failure:
            self.ended(caller, "budget", failure.message)
            raise

    def _check_run_tokens(self, caller: Caller, session: Session) -> None:
        tokens, setting = self.run_tokens(caller.user)
        held = sum(hold.tokens for hold in self._holds if hold.session is session)
        if tokens and session.usage.total + held >= tokens:
            raise PlannerFailure(
                403,
                f"This run has used its token budget ({session.usage.total:,} of {tokens:,} tokens{_held(held)}, "
                f"{setting}); start a new run, or ask your administrator to raise the budget.",
            )

    # --- reservations -------------------------------------------------------------------------------

    def reserve(self, caller: Caller, session: Session, tokens: int) -> Hold:
        """Holds a call's worst case against the user's day and the run before it starts, or refuses it (403,
        the run log says so) when either has nothing left beside what is counted and held."""
        try:
            self.check(caller)
            self._check_run_tokens(caller, session)
        except PlannerFailure as failure:
            self.ended(caller, "budget", failure.message)
            raise
        hold = Hold(caller, session, max(0, tokens))
        self._holds.append(hold)
        self.reserved[caller.user] = self.reserved.get(caller.user, 0) + hold.tokens
        return hold

    def settle(self, hold: Hold, key: BehaviorKey | None, completion: Completion | None) -> None:
        """Gives a call's reservation back and counts what it consumed (None: nothing)."""
        if hold in self._holds:
            self._holds.remove(hold)
            left = self.reserved.get(hold.caller.user, 0) - hold.tokens
            if left > 0:
                self.reserved[hold.caller.user] = left
            else:
                self.reserved.pop(hold.caller.user, None)
        if completion is not None:
            self.record(hold.caller, hold.session, key, completion)

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
        if usage.estimated:
            # Some calls sent no counts (cut by their client, Stop, a failure, or an endpoint that never does).
            record["estimated"] = True
        if message:
            record["message"] = message
        line = json.dumps(record, ensure_ascii=False)
        self.run_log.info("run_end %s", line)
        if not self.config.run_log:
            return
        try:
            descriptor = os.open(self.config.run_log, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o640)
            with os.fdopen(descriptor, "r+b") as file:
                size = os.fstat(descriptor).st_size
                # A last line cut by a crash ends here first, so it does not swallow this record.
                cut = size > 0 and os.pread(descriptor, 1, size - 1) != b"\n"
                file.write((("\n" if cut else "") + line + "\n").encode("utf-8"))
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
                    except (ValueError, RecursionError):
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
